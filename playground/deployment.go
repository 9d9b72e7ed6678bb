package playground

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/dump"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/rand"

	"kubeplay/server/inproc"
	"kubeplay/store"
)

// The Deployment's labels and annotations on its ReplicaSets.
const (
	podTemplateHashLabel      = "pod-template-hash"
	revisionAnnotation        = "deployment.kubernetes.io/revision"
	revisionHistoryAnnotation = "deployment.kubernetes.io/revision-history"
	desiredReplicasAnnotation = "deployment.kubernetes.io/desired-replicas"
	maxReplicasAnnotation     = "deployment.kubernetes.io/max-replicas"
	maxRevisionHistoryChars   = 2000
)

// deploymentController is kube-controller-manager's Deployment controller:
// it keeps a ReplicaSet per version of a Deployment's pod template, rolls
// pods from the old versions to the new one as its strategy says (rolling
// within maxSurge and maxUnavailable, or recreating), keeps
// revisionHistoryLimit old ReplicaSets, and writes the status with its
// Available and Progressing conditions. Its keys are "<namespace>/<name>" of
// Deployments.
type deploymentController struct {
	c      *inproc.Client
	now    func() time.Time
	events *eventRecorder
	keys   *selectorKeys

	mu sync.Mutex
	// replicaSetOwners names, by "<namespace>/<name>" of a ReplicaSet, the
	// Deployment that controls it: a Recreate rollout waits for the old
	// pods to be gone, and only a pod's deletion says when they are.
	replicaSetOwners map[string]string
}

var deploymentDef = controllerDef{name: "deployment", title: "deployment controller", serviceAccount: "deployment-controller",
	start: func(sb *Sandbox) reconciler {
		c := inproc.New(sb.handler, controllerAgent("deployment-controller"))
		return &deploymentController{c: c, now: sb.clock.Now, events: newEventRecorder(c, "deployment-controller", "", sb.clock.Now),
			keys: newSelectorKeys(appsV1("deployments"), appsV1("replicasets"), "Deployment", labelSelectorOf), replicaSetOwners: map[string]string{}}
	}}

func (dc *deploymentController) resync(ctx context.Context, _ int64) ([]string, error) {
	rss, err := listTyped[appsv1.ReplicaSet](ctx, dc.c, allPath(appsV1("replicasets")))
	if err != nil {
		return nil, err
	}
	owners := map[string]string{}
	for _, rs := range rss {
		if ref := metav1.GetControllerOfNoCopy(rs); ref != nil && ref.Kind == "Deployment" && strings.HasPrefix(ref.APIVersion, "apps/") {
			owners[rs.Namespace+"/"+rs.Name] = ref.Name
		}
	}
	dc.mu.Lock()
	dc.replicaSetOwners = owners
	dc.mu.Unlock()
	return dc.keys.resync(ctx, dc.c, deleting)
}

func (dc *deploymentController) keysOf(ev store.Event, q queue) {
	dc.keys.keysOf(ev, q)
	if rs, ok := strings.CutPrefix(ev.KV.Key, builtinKeyPrefix(appsV1("replicasets"))); ok {
		dc.mu.Lock()
		defer dc.mu.Unlock()
		if name := controllerName(ev.KV.Value, "apps", "Deployment"); name != "" && ev.Type != store.Deleted {
			dc.replicaSetOwners[rs] = name
		} else {
			delete(dc.replicaSetOwners, rs)
		}
		return
	}
	if ev.Type != store.Deleted {
		return
	}
	if pod, ok := strings.CutPrefix(ev.KV.Key, builtinKeyPrefix(coreV1("pods"))); ok {
		ns, _, _ := strings.Cut(pod, "/")
		rs := controllerName(ev.KV.Value, "apps", "ReplicaSet")
		if rs == "" {
			return
		}
		dc.mu.Lock()
		d := dc.replicaSetOwners[ns+"/"+rs]
		dc.mu.Unlock()
		if d != "" {
			q.Add(ns + "/" + d)
		}
	}
}

// deploymentSync is one look at a Deployment: what it has, and what the
// look found out to write.
type deploymentSync struct {
	dc  *deploymentController
	d   *appsv1.Deployment
	now metav1.Time
	// after asks for another look (the progress deadline).
	after time.Duration
}

func (dc *deploymentController) reconcile(ctx context.Context, key string) (time.Duration, error) {
	ns, name, _ := strings.Cut(key, "/")
	d, err := getTyped[appsv1.Deployment](ctx, dc.c, namedPath("apps/v1", "deployments", ns, name))
	if err != nil || d == nil {
		return 0, err
	}
	// Times as the API keeps them, to the second.
	s := &deploymentSync{dc: dc, d: d, now: metav1.NewTime(dc.now().Truncate(time.Second))}
	if sel := d.Spec.Selector; sel == nil || len(sel.MatchLabels)+len(sel.MatchExpressions) == 0 {
		dc.events.event(ctx, s.ref(), "Warning", "SelectingAll", "This deployment is selecting all pods. A non-empty selector is required.")
		if d.Status.ObservedGeneration < d.Generation {
			d.Status.ObservedGeneration = d.Generation
			return 0, s.putStatus(ctx)
		}
		return 0, nil
	}
	rss, err := s.claimReplicaSets(ctx)
	if err != nil {
		return 0, err
	}
	err = s.sync(ctx, rss)
	return s.after, err
}

func (s *deploymentSync) ref() objectRef { return typedRef(s.d, "apps/v1", "Deployment") }

func (s *deploymentSync) putStatus(ctx context.Context) error {
	var out appsv1.Deployment
	if err := s.dc.c.Do(ctx, "PUT", namedPath("apps/v1", "deployments", s.d.Namespace, s.d.Name)+"/status", s.d, &out); err != nil {
		return err
	}
	s.d = &out
	return nil
}

// claimReplicaSets lists the ReplicaSets the Deployment controls, adopting
// and releasing by its selector.
func (s *deploymentSync) claimReplicaSets(ctx context.Context) ([]*appsv1.ReplicaSet, error) {
	d := s.d
	all, err := listTyped[appsv1.ReplicaSet](ctx, s.dc.c, workloadCollection("apps/v1", "replicasets", d.Namespace))
	if err != nil {
		return nil, err
	}
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil {
		return nil, nil
	}
	m := &claimer{c: s.dc.c, owner: d, apiVersion: "apps/v1", kind: "Deployment", selector: sel,
		ownedGroup: "apps/v1", ownedResource: "replicasets", ownerPath: namedPath("apps/v1", "deployments", d.Namespace, d.Name)}
	return claim(ctx, m, all)
}

func (s *deploymentSync) sync(ctx context.Context, rss []*appsv1.ReplicaSet) error {
	d := s.d
	if d.DeletionTimestamp == nil {
		if err := s.checkPaused(ctx); err != nil {
			return err
		}
	}
	newRS, oldRSs, err := s.replicaSets(ctx, rss)
	if err != nil {
		return err
	}
	if d.DeletionTimestamp != nil {
		return s.syncStatus(ctx, append(oldRSs, newRS), newRS)
	}
	if d.Spec.Paused {
		return s.syncScale(ctx, newRS, oldRSs)
	}
	for _, rs := range activeReplicaSets(append(slices.Clone(oldRSs), newRS)) {
		if desired, ok := annotationInt(rs, desiredReplicasAnnotation); ok && desired != replicas(d) {
			return s.syncScale(ctx, newRS, oldRSs)
		}
	}
	if d.Spec.Strategy.Type == appsv1.RecreateDeploymentStrategyType {
		return s.rolloutRecreate(ctx, newRS, oldRSs)
	}
	return s.rolloutRolling(ctx, newRS, oldRSs)
}

func replicas(d *appsv1.Deployment) int32 { return ptrOr(d.Spec.Replicas, 1) }

func rsReplicas(rs *appsv1.ReplicaSet) int32 { return ptrOr(rs.Spec.Replicas, 1) }

func annotationInt(rs *appsv1.ReplicaSet, key string) (int32, bool) {
	n, err := strconv.ParseInt(rs.Annotations[key], 10, 32)
	return int32(n), err == nil && n >= 0
}

func revisionOf(rs *appsv1.ReplicaSet) int64 {
	n, _ := strconv.ParseInt(rs.Annotations[revisionAnnotation], 10, 64)
	return n
}

// activeReplicaSets are those of rss (nil ones skipped) that want pods.
func activeReplicaSets(rss []*appsv1.ReplicaSet) []*appsv1.ReplicaSet {
	var out []*appsv1.ReplicaSet
	for _, rs := range rss {
		if rs != nil && rsReplicas(rs) > 0 {
			out = append(out, rs)
		}
	}
	return out
}

func byCreation(a, b *appsv1.ReplicaSet) int {
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return boolOrder(a.CreationTimestamp.Before(&b.CreationTimestamp))
	}
	return strings.Compare(a.Name, b.Name)
}

// checkPaused marks pausing and resuming in the Progressing condition, so
// that a resumed Deployment's progress deadline starts afresh.
func (s *deploymentSync) checkPaused(ctx context.Context) error {
	d := s.d
	if !hasProgressDeadline(d) {
		return nil
	}
	cond := deploymentCondition(d.Status, appsv1.DeploymentProgressing)
	if cond != nil && cond.Reason == "ProgressDeadlineExceeded" {
		return nil
	}
	paused := cond != nil && cond.Reason == "DeploymentPaused"
	switch {
	case d.Spec.Paused && !paused:
		s.setCondition(&d.Status, appsv1.DeploymentProgressing, corev1.ConditionUnknown, "DeploymentPaused", "Deployment is paused")
	case !d.Spec.Paused && paused:
		s.setCondition(&d.Status, appsv1.DeploymentProgressing, corev1.ConditionUnknown, "DeploymentResumed", "Deployment is resumed")
	default:
		return nil
	}
	return s.putStatus(ctx)
}

func hasProgressDeadline(d *appsv1.Deployment) bool {
	return d.Spec.ProgressDeadlineSeconds != nil && *d.Spec.ProgressDeadlineSeconds != math.MaxInt32
}

func deploymentCondition(st appsv1.DeploymentStatus, t appsv1.DeploymentConditionType) *appsv1.DeploymentCondition {
	for i := range st.Conditions {
		if st.Conditions[i].Type == t {
			return &st.Conditions[i]
		}
	}
	return nil
}

// setCondition sets a condition as the Deployment controller does: one of
// the same status and reason stays as it is; one of the same status keeps
// its transition time.
func (s *deploymentSync) setCondition(st *appsv1.DeploymentStatus, t appsv1.DeploymentConditionType, status corev1.ConditionStatus, reason, message string) {
	setDeploymentCondition(st, appsv1.DeploymentCondition{Type: t, Status: status, Reason: reason, Message: message,
		LastUpdateTime: s.now, LastTransitionTime: s.now})
}

func setDeploymentCondition(st *appsv1.DeploymentStatus, c appsv1.DeploymentCondition) {
	cur := deploymentCondition(*st, c.Type)
	if cur != nil && cur.Status == c.Status && cur.Reason == c.Reason {
		return
	}
	if cur != nil && cur.Status == c.Status {
		c.LastTransitionTime = cur.LastTransitionTime
	}
	removeDeploymentCondition(st, c.Type)
	st.Conditions = append(st.Conditions, c)
}

func removeDeploymentCondition(st *appsv1.DeploymentStatus, t appsv1.DeploymentConditionType) {
	st.Conditions = slices.DeleteFunc(slices.Clone(st.Conditions), func(c appsv1.DeploymentCondition) bool { return c.Type == t })
}

// podTemplateHash names a version of a pod template as the Deployment
// controller does (the value of its pod-template-hash label): a 32-bit
// FNV-1a hash of the template as client-go's hashing printer writes it,
// with the Deployment's collision count, in the alphabet of generated names.
func podTemplateHash(template *corev1.PodTemplateSpec, collisionCount *int32) string {
	h := fnv.New32a()
	fmt.Fprintf(h, "%v", dump.ForHash(*template))
	if collisionCount != nil {
		b := make([]byte, 8)
		binary.LittleEndian.PutUint32(b, uint32(*collisionCount))
		h.Write(b)
	}
	return rand.SafeEncodeString(fmt.Sprint(h.Sum32()))
}

// sameTemplate reports whether two pod templates are the same but for the
// pod-template-hash label: a rollout undo, which copies a ReplicaSet's
// template back, finds that ReplicaSet again.
func sameTemplate(a, b *corev1.PodTemplateSpec) bool {
	a, b = a.DeepCopy(), b.DeepCopy()
	delete(a.Labels, podTemplateHashLabel)
	delete(b.Labels, podTemplateHashLabel)
	return apiequality.Semantic.DeepEqual(a, b)
}

// replicaSets splits rss into the new ReplicaSet (of the Deployment's
// template; nil if there is none yet) and the old ones, and brings the new
// one's revision and annotations up to date.
func (s *deploymentSync) replicaSets(ctx context.Context, rss []*appsv1.ReplicaSet) (*appsv1.ReplicaSet, []*appsv1.ReplicaSet, error) {
	d := s.d
	slices.SortFunc(rss, byCreation)
	var newRS *appsv1.ReplicaSet
	var oldRSs []*appsv1.ReplicaSet
	for _, rs := range rss {
		if newRS == nil && sameTemplate(&rs.Spec.Template, &d.Spec.Template) {
			newRS = rs
		} else {
			oldRSs = append(oldRSs, rs)
		}
	}
	if newRS != nil {
		newRevision := nextRevision(oldRSs)
		rs := newRS.DeepCopy()
		if s.newReplicaSetAnnotations(rs, newRevision, true) || rs.Spec.MinReadySeconds != d.Spec.MinReadySeconds {
			rs.Spec.MinReadySeconds = d.Spec.MinReadySeconds
			var out appsv1.ReplicaSet
			if err := s.dc.c.Do(ctx, "PUT", namedPath("apps/v1", "replicasets", rs.Namespace, rs.Name), rs, &out); err != nil {
				return nil, nil, err
			}
			return &out, oldRSs, nil
		}
		update := setRevision(d, rs.Annotations[revisionAnnotation])
		if hasProgressDeadline(d) && deploymentCondition(d.Status, appsv1.DeploymentProgressing) == nil {
			s.setCondition(&d.Status, appsv1.DeploymentProgressing, corev1.ConditionTrue, "FoundNewReplicaSet", fmt.Sprintf("Found new replica set %q", rs.Name))
			update = true
		}
		if update {
			if err := s.putStatus(ctx); err != nil {
				return nil, nil, err
			}
		}
		return rs, oldRSs, nil
	}
	return nil, oldRSs, nil
}

// nextRevision is the revision after those of rss.
func nextRevision(rss []*appsv1.ReplicaSet) string {
	var last int64
	for _, rs := range rss {
		last = max(last, revisionOf(rs))
	}
	return strconv.FormatInt(last+1, 10)
}

// createReplicaSet makes the ReplicaSet of the Deployment's template.
func (s *deploymentSync) createReplicaSet(ctx context.Context, oldRSs []*appsv1.ReplicaSet) (*appsv1.ReplicaSet, error) {
	d := s.d
	newRevision := nextRevision(oldRSs)
	template := d.Spec.Template.DeepCopy()
	hash := podTemplateHash(template, d.Status.CollisionCount)
	template.Labels = withLabel(template.Labels, podTemplateHashLabel, hash)
	selector := d.Spec.Selector.DeepCopy()
	selector.MatchLabels = withLabel(selector.MatchLabels, podTemplateHashLabel, hash)
	yes := true
	name := d.Name
	if maxLen := 253 - 1 - len(hash); len(name) > maxLen {
		name = name[:maxLen]
	}
	zero := int32(0)
	rs := &appsv1.ReplicaSet{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "ReplicaSet"},
		ObjectMeta: metav1.ObjectMeta{Name: name + "-" + hash, Namespace: d.Namespace, Labels: template.Labels,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: d.Name, UID: d.UID, Controller: &yes, BlockOwnerDeletion: &yes}}},
		Spec: appsv1.ReplicaSetSpec{Replicas: &zero, MinReadySeconds: d.Spec.MinReadySeconds, Selector: selector, Template: *template}}
	n := s.newReplicaSetReplicas(append(slices.Clone(oldRSs), rs), rs)
	rs.Spec.Replicas = &n
	s.newReplicaSetAnnotations(rs, newRevision, false)
	var created appsv1.ReplicaSet
	err := s.dc.c.Do(ctx, "POST", workloadCollection("apps/v1", "replicasets", d.Namespace), rs, &created)
	existed := false
	switch {
	case apierrors.IsAlreadyExists(err):
		existed = true
		found, getErr := getTyped[appsv1.ReplicaSet](ctx, s.dc.c, namedPath("apps/v1", "replicasets", d.Namespace, rs.Name))
		if getErr != nil || found == nil {
			return nil, err
		}
		if ref := metav1.GetControllerOfNoCopy(found); ref != nil && ref.UID == d.UID && sameTemplate(&d.Spec.Template, &found.Spec.Template) {
			created, err = *found, nil
			break
		}
		// Another object has the name: hash again with a new count.
		d.Status.CollisionCount = ptrTo(ptrOr(d.Status.CollisionCount, 0) + 1)
		if putErr := s.putStatus(ctx); putErr != nil {
			return nil, putErr
		}
		return nil, err
	case apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
		return nil, err
	case err != nil:
		msg := fmt.Sprintf("Failed to create new replica set %q: %v", rs.Name, err)
		if hasProgressDeadline(d) {
			s.setCondition(&d.Status, appsv1.DeploymentProgressing, corev1.ConditionFalse, "ReplicaSetCreateError", msg)
			_ = s.putStatus(ctx)
		}
		s.dc.events.event(ctx, s.ref(), "Warning", "ReplicaSetCreateError", msg)
		return nil, err
	}
	if !existed && n > 0 {
		s.dc.events.event(ctx, s.ref(), "Normal", "ScalingReplicaSet", fmt.Sprintf("Scaled up replica set %s from 0 to %d", created.Name, n))
	}
	update := setRevision(d, newRevision)
	if !existed && hasProgressDeadline(d) {
		s.setCondition(&d.Status, appsv1.DeploymentProgressing, corev1.ConditionTrue, "NewReplicaSetCreated", fmt.Sprintf("Created new replica set %q", created.Name))
		update = true
	}
	if update {
		if err := s.putStatus(ctx); err != nil {
			return nil, err
		}
	}
	return &created, nil
}

func ptrTo[T any](v T) *T { return &v }

func withLabel(m map[string]string, k, v string) map[string]string {
	out := make(map[string]string, len(m)+1)
	for key, val := range m {
		out[key] = val
	}
	out[k] = v
	return out
}

func setRevision(d *appsv1.Deployment, revision string) bool {
	if d.Annotations[revisionAnnotation] == revision {
		return false
	}
	if d.Annotations == nil {
		d.Annotations = map[string]string{}
	}
	d.Annotations[revisionAnnotation] = revision
	return true
}

// newReplicaSetAnnotations copies the Deployment's annotations to its new
// ReplicaSet, raises its revision (keeping the ones it had in its
// revision history), and for a ReplicaSet about to be made, sets its
// desired and max replicas; it reports whether it changed any.
func (s *deploymentSync) newReplicaSetAnnotations(rs *appsv1.ReplicaSet, newRevision string, exists bool) bool {
	d := s.d
	changed := false
	if rs.Annotations == nil {
		rs.Annotations = map[string]string{}
	}
	for k, v := range d.Annotations {
		switch k {
		case corev1.LastAppliedConfigAnnotation, revisionAnnotation, revisionHistoryAnnotation, desiredReplicasAnnotation, maxReplicasAnnotation,
			appsv1.DeprecatedRollbackTo:
			continue
		}
		if old, ok := rs.Annotations[k]; !ok || old != v {
			rs.Annotations[k] = v
			changed = true
		}
	}
	oldRevision, had := rs.Annotations[revisionAnnotation]
	oldN, err := strconv.ParseInt(oldRevision, 10, 64)
	if err != nil && oldRevision != "" {
		return false
	}
	newN, _ := strconv.ParseInt(newRevision, 10, 64)
	if oldN < newN {
		rs.Annotations[revisionAnnotation] = newRevision
		changed = true
		if had {
			history := rs.Annotations[revisionHistoryAnnotation]
			if history == "" {
				rs.Annotations[revisionHistoryAnnotation] = oldRevision
			} else {
				revs := strings.Split(history, ",")
				total := len(history) + len(oldRevision) + 1
				start := 0
				for total > maxRevisionHistoryChars && start < len(revs) {
					total -= len(revs[start]) + 1
					start++
				}
				if total <= maxRevisionHistoryChars {
					rs.Annotations[revisionHistoryAnnotation] = strings.Join(append(revs[start:], oldRevision), ",")
				}
			}
		}
	}
	if !exists && setReplicasAnnotations(rs, replicas(d), replicas(d)+maxSurge(d)) {
		changed = true
	}
	return changed
}

func setReplicasAnnotations(rs *appsv1.ReplicaSet, desired, maxReplicas int32) bool {
	if rs.Annotations == nil {
		rs.Annotations = map[string]string{}
	}
	changed := false
	for k, v := range map[string]string{desiredReplicasAnnotation: fmt.Sprint(desired), maxReplicasAnnotation: fmt.Sprint(maxReplicas)} {
		if rs.Annotations[k] != v {
			rs.Annotations[k] = v
			changed = true
		}
	}
	return changed
}

// fenceposts resolves maxSurge (rounded up) and maxUnavailable (rounded
// down) against the Deployment's replicas; both zero means one
// unavailable.
func fenceposts(d *appsv1.Deployment) (surge, unavailable int32) {
	ru := d.Spec.Strategy.RollingUpdate
	if ru == nil {
		ru = &appsv1.RollingUpdateDeployment{}
	}
	zero := intstr.FromInt32(0)
	sv, _ := intstr.GetScaledValueFromIntOrPercent(intstr.ValueOrDefault(ru.MaxSurge, zero), int(replicas(d)), true)
	uv, _ := intstr.GetScaledValueFromIntOrPercent(intstr.ValueOrDefault(ru.MaxUnavailable, zero), int(replicas(d)), false)
	if sv == 0 && uv == 0 {
		uv = 1
	}
	return int32(sv), int32(uv)
}

func isRolling(d *appsv1.Deployment) bool {
	return d.Spec.Strategy.Type == appsv1.RollingUpdateDeploymentStrategyType
}

func maxSurge(d *appsv1.Deployment) int32 {
	if !isRolling(d) {
		return 0
	}
	surge, _ := fenceposts(d)
	return surge
}

func maxUnavailable(d *appsv1.Deployment) int32 {
	if !isRolling(d) || replicas(d) == 0 {
		return 0
	}
	_, unavailable := fenceposts(d)
	return min(unavailable, replicas(d))
}

func sumReplicas(rss []*appsv1.ReplicaSet, f func(*appsv1.ReplicaSet) int32) int32 {
	var n int32
	for _, rs := range rss {
		if rs != nil {
			n += f(rs)
		}
	}
	return n
}

func specReplicas(rss []*appsv1.ReplicaSet) int32 { return sumReplicas(rss, rsReplicas) }

func availableReplicas(rss []*appsv1.ReplicaSet) int32 {
	return sumReplicas(rss, func(rs *appsv1.ReplicaSet) int32 { return rs.Status.AvailableReplicas })
}

// newReplicaSetReplicas is how many pods the new ReplicaSet may have now.
func (s *deploymentSync) newReplicaSetReplicas(all []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet) int32 {
	d := s.d
	if !isRolling(d) {
		return replicas(d)
	}
	current := specReplicas(all)
	maxTotal := replicas(d) + maxSurge(d)
	if current >= maxTotal {
		return rsReplicas(newRS)
	}
	return rsReplicas(newRS) + min(maxTotal-current, replicas(d)-rsReplicas(newRS))
}

// scaleReplicaSet sets rs's replicas (and the Deployment's replicas in its
// annotations), recording a ScalingReplicaSet event when its size changes.
func (s *deploymentSync) scaleReplicaSet(ctx context.Context, rs *appsv1.ReplicaSet, n int32) (bool, *appsv1.ReplicaSet, error) {
	d := s.d
	resize := rsReplicas(rs) != n
	want := replicas(d)
	rs2 := rs.DeepCopy()
	if !setReplicasAnnotations(rs2, want, want+maxSurge(d)) && !resize {
		return false, rs, nil
	}
	old := rsReplicas(rs)
	rs2.Spec.Replicas = &n
	var out appsv1.ReplicaSet
	if err := s.dc.c.Do(ctx, "PUT", namedPath("apps/v1", "replicasets", rs.Namespace, rs.Name), rs2, &out); err != nil {
		return false, rs, err
	}
	if resize {
		op := "up"
		if n < old {
			op = "down"
		}
		s.dc.events.event(ctx, s.ref(), "Normal", "ScalingReplicaSet", fmt.Sprintf("Scaled %s replica set %s from %d to %d", op, rs.Name, old, n))
	}
	return resize, &out, nil
}

// scaleReplicaSetIfNeeded scales rs to n unless it has that size already.
func (s *deploymentSync) scaleReplicaSetIfNeeded(ctx context.Context, rs *appsv1.ReplicaSet, n int32) (bool, *appsv1.ReplicaSet, error) {
	if rsReplicas(rs) == n {
		return false, rs, nil
	}
	return s.scaleReplicaSet(ctx, rs, n)
}

// syncScale handles a change of the Deployment's replicas (or a paused
// Deployment): the ReplicaSets grow or shrink in proportion to their
// sizes, without going on with a rollout.
func (s *deploymentSync) syncScale(ctx context.Context, newRS *appsv1.ReplicaSet, oldRSs []*appsv1.ReplicaSet) error {
	d := s.d
	if err := s.scale(ctx, newRS, oldRSs); err != nil {
		return err
	}
	if d.Spec.Paused {
		if err := s.cleanup(ctx, oldRSs); err != nil {
			return err
		}
	}
	return s.syncStatus(ctx, append(oldRSs, newRS), newRS)
}

func (s *deploymentSync) scale(ctx context.Context, newRS *appsv1.ReplicaSet, oldRSs []*appsv1.ReplicaSet) error {
	d := s.d
	if only := activeOrLatest(newRS, oldRSs); only != nil {
		_, _, err := s.scaleReplicaSetIfNeeded(ctx, only, replicas(d))
		return err
	}
	if newRS != nil && rsReplicas(newRS) == replicas(d) && newRS.Annotations[desiredReplicasAnnotation] == fmt.Sprint(replicas(d)) &&
		newRS.Status.AvailableReplicas == replicas(d) {
		for _, old := range activeReplicaSets(oldRSs) {
			if _, _, err := s.scaleReplicaSetIfNeeded(ctx, old, 0); err != nil {
				return err
			}
		}
		return nil
	}
	if !isRolling(d) {
		return nil
	}
	all := activeReplicaSets(append(slices.Clone(oldRSs), newRS))
	allowed := int32(0)
	if replicas(d) > 0 {
		allowed = replicas(d) + maxSurge(d)
	}
	toAdd := allowed - specReplicas(all)
	switch {
	case toAdd > 0: // the largest first, the newest of equal ones
		slices.SortStableFunc(all, func(a, b *appsv1.ReplicaSet) int {
			if rsReplicas(a) != rsReplicas(b) {
				return boolOrder(rsReplicas(a) > rsReplicas(b))
			}
			return byCreation(b, a)
		})
	case toAdd < 0: // the largest first, the oldest of equal ones
		slices.SortStableFunc(all, func(a, b *appsv1.ReplicaSet) int {
			if rsReplicas(a) != rsReplicas(b) {
				return boolOrder(rsReplicas(a) > rsReplicas(b))
			}
			return byCreation(a, b)
		})
	}
	added := int32(0)
	sizes := make([]int32, len(all))
	for i, rs := range all {
		sizes[i] = rsReplicas(rs)
		if toAdd != 0 {
			p := s.proportion(rs, toAdd, added)
			sizes[i] += p
			added += p
		}
	}
	for i, rs := range all {
		if i == 0 && toAdd != 0 {
			sizes[0] = max(0, sizes[0]+toAdd-added)
		}
		if _, _, err := s.scaleReplicaSet(ctx, rs, sizes[i]); err != nil {
			return err
		}
	}
	return nil
}

// proportion is how many of toAdd pods (added of them already given to
// others) rs takes, in proportion to its share of the Deployment before it
// was scaled.
func (s *deploymentSync) proportion(rs *appsv1.ReplicaSet, toAdd, added int32) int32 {
	d := s.d
	if rsReplicas(rs) == 0 || toAdd == 0 || toAdd == added {
		return 0
	}
	var fraction int32
	if replicas(d) == 0 {
		fraction = -rsReplicas(rs)
	} else {
		maxNow := replicas(d) + maxSurge(d)
		before, ok := annotationInt(rs, maxReplicasAnnotation)
		if !ok || before == 0 {
			before = d.Status.Replicas
		}
		if before == 0 {
			return 0
		}
		fraction = int32(math.Round(float64(rsReplicas(rs)*maxNow)/float64(before))) - rsReplicas(rs)
	}
	allowed := toAdd - added
	if toAdd > 0 {
		return min(fraction, allowed)
	}
	return max(fraction, allowed)
}

// activeOrLatest is the one ReplicaSet that wants pods, or the newest if
// none does; nil if several do.
func activeOrLatest(newRS *appsv1.ReplicaSet, oldRSs []*appsv1.ReplicaSet) *appsv1.ReplicaSet {
	if newRS == nil && len(oldRSs) == 0 {
		return nil
	}
	olds := slices.Clone(oldRSs)
	slices.SortFunc(olds, func(a, b *appsv1.ReplicaSet) int { return byCreation(b, a) })
	active := activeReplicaSets(append(olds, newRS))
	switch len(active) {
	case 0:
		if newRS != nil {
			return newRS
		}
		return olds[0]
	case 1:
		return active[0]
	}
	return nil
}

func (s *deploymentSync) rolloutRolling(ctx context.Context, newRS *appsv1.ReplicaSet, oldRSs []*appsv1.ReplicaSet) error {
	d := s.d
	if newRS == nil {
		var err error
		if newRS, err = s.createReplicaSet(ctx, oldRSs); err != nil {
			return err
		}
	}
	all := append(slices.Clone(oldRSs), newRS)
	// Scale the new ReplicaSet up as far as maxSurge allows.
	if n := rsReplicas(newRS); n != replicas(d) {
		target := replicas(d)
		if n < target {
			target = s.newReplicaSetReplicas(all, newRS)
		}
		scaled, rs, err := s.scaleReplicaSetIfNeeded(ctx, newRS, target)
		if err != nil {
			return err
		}
		if scaled {
			all[len(all)-1] = rs
			return s.syncRolloutStatus(ctx, all, rs)
		}
	}
	scaledDown, err := s.scaleDownOld(ctx, all, activeReplicaSets(oldRSs), newRS)
	if err != nil {
		return err
	}
	if scaledDown {
		return s.syncRolloutStatus(ctx, all, newRS)
	}
	if deploymentComplete(d, &d.Status) {
		if err := s.cleanup(ctx, oldRSs); err != nil {
			return err
		}
	}
	return s.syncRolloutStatus(ctx, all, newRS)
}

// scaleDownOld scales the old ReplicaSets down as far as maxUnavailable
// allows: their unavailable pods first, then the available ones.
func (s *deploymentSync) scaleDownOld(ctx context.Context, all, oldRSs []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet) (bool, error) {
	d := s.d
	if specReplicas(oldRSs) == 0 {
		return false, nil
	}
	minAvailable := replicas(d) - maxUnavailable(d)
	newUnavailable := rsReplicas(newRS) - newRS.Status.AvailableReplicas
	maxScaledDown := specReplicas(all) - minAvailable - newUnavailable
	if maxScaledDown <= 0 {
		return false, nil
	}
	slices.SortFunc(oldRSs, byCreation)
	var total int32
	for i, rs := range oldRSs {
		if total >= maxScaledDown {
			break
		}
		n := rsReplicas(rs)
		if n == 0 || n == rs.Status.AvailableReplicas {
			continue
		}
		down := min(maxScaledDown-total, n-rs.Status.AvailableReplicas)
		_, updated, err := s.scaleReplicaSetIfNeeded(ctx, rs, n-down)
		if err != nil {
			return false, nil
		}
		total += down
		oldRSs[i] = updated
	}
	available := availableReplicas(append(slices.Clone(oldRSs), newRS))
	if available > minAvailable {
		toScale := available - minAvailable
		var scaled int32
		for _, rs := range oldRSs {
			if scaled >= toScale {
				break
			}
			n := rsReplicas(rs)
			if n == 0 {
				continue
			}
			down := min(n, toScale-scaled)
			if _, _, err := s.scaleReplicaSetIfNeeded(ctx, rs, n-down); err != nil {
				return false, nil
			}
			scaled += down
		}
		total += scaled
	}
	return total > 0, nil
}

func (s *deploymentSync) rolloutRecreate(ctx context.Context, newRS *appsv1.ReplicaSet, oldRSs []*appsv1.ReplicaSet) error {
	d := s.d
	all := append(slices.Clone(oldRSs), newRS)
	scaledDown := false
	for _, rs := range activeReplicaSets(oldRSs) {
		scaled, _, err := s.scaleReplicaSetIfNeeded(ctx, rs, 0)
		if err != nil {
			return err
		}
		scaledDown = scaledDown || scaled
	}
	if scaledDown {
		return s.syncRolloutStatus(ctx, all, newRS)
	}
	running, err := s.oldPodsRunning(ctx, newRS, oldRSs)
	if err != nil || running {
		if err != nil {
			return err
		}
		return s.syncRolloutStatus(ctx, all, newRS)
	}
	if newRS == nil {
		if newRS, err = s.createReplicaSet(ctx, oldRSs); err != nil {
			return err
		}
		all = append(slices.Clone(oldRSs), newRS)
	}
	if _, _, err := s.scaleReplicaSetIfNeeded(ctx, newRS, replicas(d)); err != nil {
		return err
	}
	if deploymentComplete(d, &d.Status) {
		if err := s.cleanup(ctx, oldRSs); err != nil {
			return err
		}
	}
	return s.syncRolloutStatus(ctx, all, newRS)
}

// oldPodsRunning reports whether a pod of an old ReplicaSet still runs (or
// may): a Recreate rollout waits for them all to be gone.
func (s *deploymentSync) oldPodsRunning(ctx context.Context, newRS *appsv1.ReplicaSet, oldRSs []*appsv1.ReplicaSet) (bool, error) {
	if sumReplicas(oldRSs, func(rs *appsv1.ReplicaSet) int32 { return rs.Status.Replicas }) > 0 {
		return true, nil
	}
	old := map[string]bool{}
	for _, rs := range oldRSs {
		old[string(rs.UID)] = true
	}
	pods, err := listTyped[corev1.Pod](ctx, s.dc.c, workloadCollection("", "pods", s.d.Namespace))
	if err != nil {
		return false, err
	}
	for _, p := range pods {
		ref := metav1.GetControllerOfNoCopy(p)
		if ref == nil || !old[string(ref.UID)] || (newRS != nil && ref.UID == newRS.UID) {
			continue
		}
		if p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			return true, nil
		}
	}
	return false, nil
}

// cleanup deletes the oldest old ReplicaSets beyond revisionHistoryLimit,
// those with no pods left.
func (s *deploymentSync) cleanup(ctx context.Context, oldRSs []*appsv1.ReplicaSet) error {
	d := s.d
	if d.Spec.RevisionHistoryLimit == nil || *d.Spec.RevisionHistoryLimit == math.MaxInt32 {
		return nil
	}
	var alive []*appsv1.ReplicaSet
	for _, rs := range oldRSs {
		if rs != nil && rs.DeletionTimestamp == nil {
			alive = append(alive, rs)
		}
	}
	diff := len(alive) - int(*d.Spec.RevisionHistoryLimit)
	if diff <= 0 {
		return nil
	}
	slices.SortFunc(alive, func(a, b *appsv1.ReplicaSet) int {
		if ra, rb := revisionOf(a), revisionOf(b); ra != rb {
			return boolOrder(ra < rb)
		}
		return byCreation(a, b)
	})
	for _, rs := range alive[:diff] {
		if rs.Status.Replicas != 0 || rsReplicas(rs) != 0 || rs.Generation > rs.Status.ObservedGeneration {
			continue
		}
		if err := s.dc.c.Do(ctx, "DELETE", namedPath("apps/v1", "replicasets", rs.Namespace, rs.Name), nil, nil); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return nil
}

func deploymentComplete(d *appsv1.Deployment, st *appsv1.DeploymentStatus) bool {
	n := replicas(d)
	return st.UpdatedReplicas == n && st.Replicas == n && st.AvailableReplicas == n && st.ObservedGeneration >= d.Generation
}

// calculateStatus is the Deployment's status as its ReplicaSets make it,
// with its Available condition.
func (s *deploymentSync) calculateStatus(all []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet) appsv1.DeploymentStatus {
	d := s.d
	all = slices.DeleteFunc(slices.Clone(all), func(rs *appsv1.ReplicaSet) bool { return rs == nil })
	available := availableReplicas(all)
	st := appsv1.DeploymentStatus{ObservedGeneration: d.Generation,
		Replicas:            sumReplicas(all, func(rs *appsv1.ReplicaSet) int32 { return rs.Status.Replicas }),
		ReadyReplicas:       sumReplicas(all, func(rs *appsv1.ReplicaSet) int32 { return rs.Status.ReadyReplicas }),
		AvailableReplicas:   available,
		UnavailableReplicas: max(0, specReplicas(all)-available),
		CollisionCount:      d.Status.CollisionCount,
		Conditions:          slices.Clone(d.Status.Conditions)}
	if newRS != nil {
		st.UpdatedReplicas = newRS.Status.Replicas
	}
	terminating := int32(0)
	st.TerminatingReplicas = &terminating
	for _, rs := range all {
		switch {
		case rs.Status.ObservedGeneration == 0 && rs.Status.TerminatingReplicas == nil:
		case rs.Status.TerminatingReplicas == nil:
			st.TerminatingReplicas = nil
		case st.TerminatingReplicas != nil:
			terminating += *rs.Status.TerminatingReplicas
		}
	}
	if available >= replicas(d)-maxUnavailable(d) {
		s.setCondition(&st, appsv1.DeploymentAvailable, corev1.ConditionTrue, "MinimumReplicasAvailable", "Deployment has minimum availability.")
	} else {
		s.setCondition(&st, appsv1.DeploymentAvailable, corev1.ConditionFalse, "MinimumReplicasUnavailable", "Deployment does not have minimum availability.")
	}
	return st
}

// syncStatus writes the status alone (a paused or deleted Deployment, a
// scaling).
func (s *deploymentSync) syncStatus(ctx context.Context, all []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet) error {
	st := s.calculateStatus(all, newRS)
	if apiequality.Semantic.DeepEqual(s.d.Status, st) {
		return nil
	}
	s.d.Status = st
	return s.putStatus(ctx)
}

// syncRolloutStatus writes the status of a rollout, with its Progressing
// condition: complete, progressing, or past its progress deadline; and
// asks for a look at the deadline.
func (s *deploymentSync) syncRolloutStatus(ctx context.Context, all []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet) error {
	d := s.d
	st := s.calculateStatus(all, newRS)
	if !hasProgressDeadline(d) {
		removeDeploymentCondition(&st, appsv1.DeploymentProgressing)
	}
	cur := deploymentCondition(d.Status, appsv1.DeploymentProgressing)
	complete := st.Replicas == st.UpdatedReplicas && cur != nil && cur.Reason == "NewReplicaSetAvailable"
	if hasProgressDeadline(d) && !complete {
		what := fmt.Sprintf("Deployment %q", d.Name)
		if newRS != nil {
			what = fmt.Sprintf("ReplicaSet %q", newRS.Name)
		}
		switch {
		case deploymentComplete(d, &st):
			s.setCondition(&st, appsv1.DeploymentProgressing, corev1.ConditionTrue, "NewReplicaSetAvailable", what+" has successfully progressed.")
		case progressing(d, &st):
			c := appsv1.DeploymentCondition{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "ReplicaSetUpdated",
				Message: what + " is progressing.", LastUpdateTime: s.now, LastTransitionTime: s.now}
			if cur != nil {
				if cur.Status == corev1.ConditionTrue {
					c.LastTransitionTime = cur.LastTransitionTime
				}
				removeDeploymentCondition(&st, appsv1.DeploymentProgressing)
			}
			setDeploymentCondition(&st, c)
		case s.timedOut(&st):
			s.setCondition(&st, appsv1.DeploymentProgressing, corev1.ConditionFalse, "ProgressDeadlineExceeded", what+" has timed out progressing.")
		}
	}
	if failure := replicaFailure(all, newRS); failure != nil {
		setDeploymentCondition(&st, *failure)
	} else {
		removeDeploymentCondition(&st, appsv1.DeploymentReplicaFailure)
	}
	if apiequality.Semantic.DeepEqual(d.Status, st) {
		s.requeueStuck(&st)
		return nil
	}
	d.Status = st
	return s.putStatus(ctx)
}

func progressing(d *appsv1.Deployment, st *appsv1.DeploymentStatus) bool {
	old := d.Status
	return st.UpdatedReplicas > old.UpdatedReplicas || st.Replicas-st.UpdatedReplicas < old.Replicas-old.UpdatedReplicas ||
		st.ReadyReplicas > old.ReadyReplicas || st.AvailableReplicas > old.AvailableReplicas
}

func (s *deploymentSync) timedOut(st *appsv1.DeploymentStatus) bool {
	c := deploymentCondition(*st, appsv1.DeploymentProgressing)
	if c == nil || c.Reason == "NewReplicaSetAvailable" {
		return false
	}
	if c.Reason == "ProgressDeadlineExceeded" {
		return true
	}
	return c.LastUpdateTime.Add(time.Duration(*s.d.Spec.ProgressDeadlineSeconds) * time.Second).Before(s.now.Time)
}

// requeueStuck asks for a look when a rollout that has not progressed
// reaches its deadline.
func (s *deploymentSync) requeueStuck(st *appsv1.DeploymentStatus) {
	d := s.d
	c := deploymentCondition(d.Status, appsv1.DeploymentProgressing)
	if !hasProgressDeadline(d) || c == nil || deploymentComplete(d, st) || c.Reason == "ProgressDeadlineExceeded" {
		return
	}
	after := c.LastUpdateTime.Add(time.Duration(*d.Spec.ProgressDeadlineSeconds) * time.Second).Sub(s.now.Time)
	s.after = max(after, 0) + time.Second
}

// replicaFailure is the ReplicaFailure condition of the new ReplicaSet, or
// else of any, as a Deployment condition.
func replicaFailure(all []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet) *appsv1.DeploymentCondition {
	for _, rs := range append([]*appsv1.ReplicaSet{newRS}, all...) {
		if rs == nil {
			continue
		}
		for _, c := range rs.Status.Conditions {
			if c.Type == appsv1.ReplicaSetReplicaFailure {
				return &appsv1.DeploymentCondition{Type: appsv1.DeploymentReplicaFailure, Status: c.Status, Reason: c.Reason, Message: c.Message,
					LastUpdateTime: c.LastTransitionTime, LastTransitionTime: c.LastTransitionTime}
			}
		}
	}
	return nil
}
