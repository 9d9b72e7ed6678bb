package playground

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"kubeplay/server/inproc"
	"kubeplay/store"
)

// The labels a StatefulSet puts on its pods.
const (
	statefulSetRevisionLabel = "controller-revision-hash"
	statefulSetPodNameLabel  = "statefulset.kubernetes.io/pod-name"
	podIndexLabel            = "apps.kubernetes.io/pod-index"
)

// statefulSetController is kube-controller-manager's StatefulSet
// controller: it keeps pods of stable names (<set>-<ordinal>) with their
// PersistentVolumeClaims from the volumeClaimTemplates, made and deleted
// in order (OrderedReady) or all at once (Parallel), rolls them to new
// template revisions (ControllerRevisions) from the highest ordinal down
// to the partition, and writes the status. Its keys are
// "<namespace>/<name>" of StatefulSets.
type statefulSetController struct {
	c      *inproc.Client
	now    func() time.Time
	events *eventRecorder
	keys   *selectorKeys
	// replaced counts, by "<namespace>/<pod name>", the failed pods of
	// that name replaced since one last ran. Only the worker touches it.
	replaced map[string]replacements
}

// replacements are a pod's failed predecessors: a pod a kubelet keeps
// rejecting would otherwise be replaced in a loop as fast as the API
// answers, so the second replacement waits 1 s, doubling up to 5 minutes.
type replacements struct {
	count int
	last  time.Time
}

// wait is how long after the last replacement the next one waits.
func (r replacements) wait() time.Duration {
	if r.count < 2 {
		return 0
	}
	return doubling(time.Second, backoffMax, r.count-1)
}

var statefulSetDef = controllerDef{name: "statefulSet", title: "statefulset controller", serviceAccount: "statefulset-controller",
	start: func(sb *Sandbox) reconciler {
		c := inproc.New(sb.handler, controllerAgent("statefulset-controller"))
		return &statefulSetController{c: c, now: sb.clock.Now, events: newEventRecorder(c, "statefulset-controller", "", sb.clock.Now),
			keys: newSelectorKeys(appsV1("statefulsets"), coreV1("pods"), "StatefulSet", labelSelectorOf), replaced: map[string]replacements{}}
	}}

func (sc *statefulSetController) resync(ctx context.Context, _ int64) ([]string, error) {
	return sc.keys.resync(ctx, sc.c, deleting)
}

func (sc *statefulSetController) keysOf(ev store.Event, q queue) { sc.keys.keysOf(ev, q) }

// podOrdinal is the ordinal a pod's name gives it as a member of set
// (-1 if it is not one).
var podOrdinalPattern = regexp.MustCompile(`^(.*)-([0-9]+)$`)

func podOrdinal(set *appsv1.StatefulSet, p *corev1.Pod) int {
	m := podOrdinalPattern.FindStringSubmatch(p.Name)
	if m == nil || m[1] != set.Name {
		return -1
	}
	n, err := strconv.Atoi(m[2])
	if err != nil {
		return -1
	}
	return n
}

// statefulSync is one look at a StatefulSet.
type statefulSync struct {
	sc      *statefulSetController
	set     *appsv1.StatefulSet
	now     time.Time
	current *appsv1.ControllerRevision
	update  *appsv1.ControllerRevision
	curSet  *appsv1.StatefulSet // the set as of the current revision
	after   time.Duration
	// collisionCount counts the names of update revisions found taken.
	collisionCount int32
	revs           []*appsv1.ControllerRevision
	ownerRef       objectRef
}

func (sc *statefulSetController) reconcile(ctx context.Context, key string) (time.Duration, error) {
	ns, name, _ := strings.Cut(key, "/")
	path := namedPath("apps/v1", "statefulsets", ns, name)
	set, err := getTyped[appsv1.StatefulSet](ctx, sc.c, path)
	if err != nil || set == nil {
		return 0, err
	}
	sel, err := metav1.LabelSelectorAsSelector(set.Spec.Selector)
	if err != nil || sel.Empty() {
		return 0, nil
	}
	all, err := listTyped[corev1.Pod](ctx, sc.c, workloadCollection("", "pods", ns))
	if err != nil {
		return 0, err
	}
	var members []*corev1.Pod
	for _, p := range all {
		if podOrdinal(set, p) >= 0 {
			members = append(members, p)
		}
	}
	m := &claimer{c: sc.c, owner: set, apiVersion: "apps/v1", kind: "StatefulSet", selector: sel, ownedResource: "pods", ownerPath: path}
	pods, err := claim(ctx, m, members)
	if err != nil {
		return 0, err
	}
	if set.DeletionTimestamp != nil {
		return 0, nil
	}
	s := &statefulSync{sc: sc, set: set, now: sc.now(), ownerRef: typedRef(set, "apps/v1", "StatefulSet")}
	if err := s.syncRevisions(ctx, sel, path); err != nil {
		return 0, err
	}
	status, err := s.syncReplicas(ctx, pods)
	if err != nil {
		return 0, err
	}
	if err := s.writeStatus(ctx, status); err != nil {
		return 0, err
	}
	return s.after, s.truncateHistory(ctx, pods)
}

// syncRevisions finds or makes the revision of the set's template (the
// update revision) and reads the current one.
func (s *statefulSync) syncRevisions(ctx context.Context, sel labels.Selector, path string) error {
	set := s.set
	revs, err := revisions(ctx, s.sc.c, set, "StatefulSet", path, sel)
	if err != nil {
		return err
	}
	data, err := templatePatch(set)
	if err != nil {
		return err
	}
	collisions := ptrOr(set.Status.CollisionCount, 0)
	number := nextRevisionNumber(revs)
	build := func(cc *int32) *appsv1.ControllerRevision {
		r := newControllerRevision(set, "StatefulSet", set.Spec.Template.Labels, data, number, cc)
		r.Annotations = maps.Clone(set.Annotations)
		return r
	}
	s.update, err = ensureRevision(ctx, s.sc.c, revs, build(&collisions), build, &collisions)
	if err != nil {
		return err
	}
	s.collisionCount = collisions
	s.revs = revs
	for _, r := range revs {
		if r.Name == set.Status.CurrentRevision {
			s.current = r
		}
	}
	if s.current == nil || s.current.Name == s.update.Name {
		s.current = s.update
	}
	s.curSet = set
	if s.current != s.update {
		var old appsv1.StatefulSet
		if err := decodeInto(asJSONMap(s.current.Data), &old); err == nil {
			s.curSet = set.DeepCopy()
			s.curSet.Spec.Template = old.Spec.Template
		}
	}
	return nil
}

// podFor is the pod of ordinal, of the current revision below the
// partition (or those still current), of the update revision above.
func (s *statefulSync) podFor(ordinal int) *corev1.Pod {
	set, from, rev := s.set, s.set, s.update.Name
	if set.Spec.UpdateStrategy.Type == appsv1.RollingUpdateStatefulSetStrategyType || set.Spec.UpdateStrategy.Type == "" {
		ru := set.Spec.UpdateStrategy.RollingUpdate
		if ru == nil && ordinal < startOrdinal(set)+int(set.Status.CurrentReplicas) ||
			ru != nil && ordinal < startOrdinal(set)+int(ptrOr(ru.Partition, 0)) {
			from, rev = s.curSet, s.current.Name
		}
	}
	name := fmt.Sprintf("%s-%d", set.Name, ordinal)
	yes := true
	lbls := maps.Clone(from.Spec.Template.Labels)
	if lbls == nil {
		lbls = map[string]string{}
	}
	lbls[statefulSetPodNameLabel] = name
	lbls[podIndexLabel] = strconv.Itoa(ordinal)
	lbls[statefulSetRevisionLabel] = rev
	p := &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: set.Namespace, Labels: lbls, Annotations: maps.Clone(from.Spec.Template.Annotations),
			Finalizers:      slices.Clone(from.Spec.Template.Finalizers),
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: set.Name, UID: set.UID, Controller: &yes, BlockOwnerDeletion: &yes}}},
		Spec: *from.Spec.Template.Spec.DeepCopy()}
	p.Spec.Hostname, p.Spec.Subdomain = name, set.Spec.ServiceName
	var volumes []corev1.Volume
	claims := map[string]bool{}
	for _, t := range set.Spec.VolumeClaimTemplates {
		claims[t.Name] = true
		volumes = append(volumes, corev1.Volume{Name: t.Name, VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claimName(set, t.Name, ordinal)}}})
	}
	for _, v := range p.Spec.Volumes {
		if !claims[v.Name] {
			volumes = append(volumes, v)
		}
	}
	p.Spec.Volumes = volumes
	return p
}

// lookAgain asks for another look at the set after d (the earliest asked
// wins).
func (s *statefulSync) lookAgain(d time.Duration) {
	if d > 0 && (s.after == 0 || d < s.after) {
		s.after = d
	}
}

func startOrdinal(set *appsv1.StatefulSet) int {
	if set.Spec.Ordinals != nil {
		return int(set.Spec.Ordinals.Start)
	}
	return 0
}

func claimName(set *appsv1.StatefulSet, template string, ordinal int) string {
	return fmt.Sprintf("%s-%s-%d", template, set.Name, ordinal)
}

func podRevision(p *corev1.Pod) string { return p.Labels[statefulSetRevisionLabel] }

func runningAndReady(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning && podIsReady(p) }

func (s *statefulSync) podEvent(ctx context.Context, verb string, p *corev1.Pod, err error) {
	title := strings.ToUpper(verb[:1]) + verb[1:]
	if err == nil {
		s.sc.events.event(ctx, s.ownerRef, "Normal", "Successful"+title, fmt.Sprintf("%s Pod %s in StatefulSet %s successful", title, p.Name, s.set.Name))
	} else {
		s.sc.events.event(ctx, s.ownerRef, "Warning", "Failed"+title, fmt.Sprintf("%s Pod %s in StatefulSet %s failed error: %s", title, p.Name, s.set.Name, err))
	}
}

// createPod makes p's claims, then p.
func (s *statefulSync) createPod(ctx context.Context, p *corev1.Pod, ordinal int) error {
	set := s.set
	policy := set.Spec.PersistentVolumeClaimRetentionPolicy
	for _, t := range set.Spec.VolumeClaimTemplates {
		name := claimName(set, t.Name, ordinal)
		existing, err := getTyped[corev1.PersistentVolumeClaim](ctx, s.sc.c, namedPath("", "persistentvolumeclaims", set.Namespace, name))
		if err != nil {
			return err
		}
		if existing != nil {
			continue
		}
		pvc := t.DeepCopy()
		pvc.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"}
		pvc.Name, pvc.Namespace = name, set.Namespace
		pvc.Labels = maps.Clone(pvc.Labels)
		if pvc.Labels == nil {
			pvc.Labels = map[string]string{}
		}
		maps.Copy(pvc.Labels, set.Spec.Selector.MatchLabels)
		pvc.Status = corev1.PersistentVolumeClaimStatus{}
		if policy != nil && policy.WhenDeleted == appsv1.DeletePersistentVolumeClaimRetentionPolicyType {
			// Deleted with the set, by the garbage collector.
			yes := true
			pvc.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: set.Name, UID: set.UID, BlockOwnerDeletion: &yes}}
		}
		err = s.sc.c.Do(ctx, "POST", workloadCollection("", "persistentvolumeclaims", set.Namespace), pvc, nil)
		if err != nil && !apierrors.IsAlreadyExists(err) {
			s.sc.events.event(ctx, s.ownerRef, "Warning", "FailedCreate", fmt.Sprintf("Create Claim %s for Pod %s in StatefulSet %s failed error: %s", name, p.Name, set.Name, err))
			return err
		}
		if err == nil {
			s.sc.events.event(ctx, s.ownerRef, "Normal", "SuccessfulCreate", fmt.Sprintf("Create Claim %s Pod %s in StatefulSet %s success", name, p.Name, set.Name))
		}
	}
	err := s.sc.c.Do(ctx, "POST", workloadCollection("", "pods", set.Namespace), p, nil)
	if apierrors.IsAlreadyExists(err) {
		return err
	}
	s.podEvent(ctx, "create", p, err)
	return err
}

func (s *statefulSync) deletePod(ctx context.Context, p *corev1.Pod) error {
	err := s.sc.c.Do(ctx, "DELETE", namedPath("", "pods", p.Namespace, p.Name), nil, nil)
	if apierrors.IsNotFound(err) {
		return nil
	}
	s.podEvent(ctx, "delete", p, err)
	return err
}

// markScaledDown makes a condemned pod the owner of its claims when the
// retention policy deletes them on scale-down.
func (s *statefulSync) markScaledDown(ctx context.Context, p *corev1.Pod, ordinal int) error {
	set := s.set
	policy := set.Spec.PersistentVolumeClaimRetentionPolicy
	if policy == nil || policy.WhenScaled != appsv1.DeletePersistentVolumeClaimRetentionPolicyType {
		return nil
	}
	for _, t := range set.Spec.VolumeClaimTemplates {
		path := namedPath("", "persistentvolumeclaims", set.Namespace, claimName(set, t.Name, ordinal))
		pvc, err := getTyped[corev1.PersistentVolumeClaim](ctx, s.sc.c, path)
		if err != nil || pvc == nil {
			return err
		}
		if slices.ContainsFunc(pvc.OwnerReferences, func(r metav1.OwnerReference) bool { return r.UID == p.UID }) {
			continue
		}
		pvc.OwnerReferences = append(pvc.OwnerReferences, metav1.OwnerReference{APIVersion: "v1", Kind: "Pod", Name: p.Name, UID: p.UID})
		if err := s.sc.c.Do(ctx, "PUT", path, pvc, nil); err != nil {
			return err
		}
	}
	return nil
}

// syncReplicas brings the pods to the set's spec, one step at a time when
// ordered, and returns the status they make.
func (s *statefulSync) syncReplicas(ctx context.Context, pods []*corev1.Pod) (appsv1.StatefulSetStatus, error) {
	set := s.set
	start, n := startOrdinal(set), int(ptrOr(set.Spec.Replicas, 1))
	replicas := make([]*corev1.Pod, n)
	var condemned []*corev1.Pod
	for _, p := range pods {
		if o := podOrdinal(set, p); o >= start && o < start+n {
			replicas[o-start] = p
		} else {
			condemned = append(condemned, p)
		}
	}
	slices.SortFunc(condemned, func(a, b *corev1.Pod) int { return podOrdinal(set, b) - podOrdinal(set, a) })
	status := s.computeStatus(pods)
	ordered := set.Spec.PodManagementPolicy != appsv1.ParallelPodManagement
	minReady := set.Spec.MinReadySeconds

	// Failed pods are replaced; missing ones made.
	for i, p := range replicas {
		if p != nil && p.Status.Phase == corev1.PodRunning {
			delete(s.sc.replaced, p.Namespace+"/"+p.Name)
		}
		if p != nil && (p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded) && p.DeletionTimestamp == nil {
			if err := s.deletePod(ctx, p); err != nil {
				return status, err
			}
			r := s.sc.replaced[p.Namespace+"/"+p.Name]
			s.sc.replaced[p.Namespace+"/"+p.Name] = replacements{count: r.count + 1, last: s.now}
			replicas[i] = nil
			if ordered {
				return status, nil
			}
		}
	}
	healthy := func(p *corev1.Pod) bool {
		if p == nil || p.DeletionTimestamp != nil || !runningAndReady(p) {
			return false
		}
		in := podAvailableIn(p, minReady, s.now)
		s.lookAgain(in)
		return in == 0
	}
	for i, p := range replicas {
		ordinal := start + i
		if p == nil {
			p = s.podFor(ordinal)
			r := s.sc.replaced[p.Namespace+"/"+p.Name]
			if wait := r.last.Add(r.wait()).Sub(s.now); wait > 0 {
				s.lookAgain(wait)
				if ordered {
					return status, nil
				}
				continue
			}
			if err := s.createPod(ctx, p, ordinal); err != nil {
				return status, err
			}
			if ordered {
				return status, nil
			}
			continue
		}
		if ordered && !healthy(p) {
			return status, nil // wait for it before the next
		}
	}
	for _, p := range condemned {
		if p.DeletionTimestamp != nil {
			if ordered {
				return status, nil
			}
			continue
		}
		if ordered && slices.ContainsFunc(replicas, func(r *corev1.Pod) bool { return !healthy(r) }) {
			return status, nil
		}
		if err := s.markScaledDown(ctx, p, podOrdinal(set, p)); err != nil {
			return status, err
		}
		if err := s.deletePod(ctx, p); err != nil {
			return status, err
		}
		if ordered {
			return status, nil
		}
	}
	if set.Spec.UpdateStrategy.Type == appsv1.OnDeleteStatefulSetStrategyType {
		return status, nil
	}
	// Rolling update: the highest ordinal first, down to the partition,
	// once every pod is healthy.
	if slices.ContainsFunc(replicas, func(r *corev1.Pod) bool { return !healthy(r) }) {
		return status, nil
	}
	partition := 0
	if ru := set.Spec.UpdateStrategy.RollingUpdate; ru != nil {
		partition = int(ptrOr(ru.Partition, 0))
	}
	for i := len(replicas) - 1; i >= partition; i-- {
		p := replicas[i]
		if podRevision(p) != s.update.Name && p.DeletionTimestamp == nil {
			return status, s.deletePod(ctx, p)
		}
	}
	return status, nil
}

// computeStatus counts the pods as the StatefulSet's status does.
func (s *statefulSync) computeStatus(pods []*corev1.Pod) appsv1.StatefulSetStatus {
	set := s.set
	st := appsv1.StatefulSetStatus{ObservedGeneration: set.Generation, CurrentRevision: s.current.Name, UpdateRevision: s.update.Name,
		CollisionCount: &s.collisionCount, Conditions: set.Status.Conditions}
	for _, p := range pods {
		if p.Status.Phase != "" {
			st.Replicas++
		}
		if runningAndReady(p) {
			st.ReadyReplicas++
			if podAvailableIn(p, set.Spec.MinReadySeconds, s.now) == 0 {
				st.AvailableReplicas++
			}
		}
		if p.Status.Phase != "" && p.DeletionTimestamp == nil {
			switch podRevision(p) {
			case s.current.Name:
				st.CurrentReplicas++
			}
			if podRevision(p) == s.update.Name {
				st.UpdatedReplicas++
			}
		}
	}
	return st
}

// writeStatus writes the status; a rolling update whose pods are all
// updated and ready makes the update revision the current one.
func (s *statefulSync) writeStatus(ctx context.Context, st appsv1.StatefulSetStatus) error {
	set := s.set
	if set.Spec.UpdateStrategy.Type != appsv1.OnDeleteStatefulSetStrategyType && st.UpdatedReplicas == st.Replicas && st.ReadyReplicas == st.Replicas &&
		st.Replicas == ptrOr(set.Spec.Replicas, 1) {
		st.CurrentReplicas, st.CurrentRevision = st.UpdatedReplicas, st.UpdateRevision
	}
	if apiequality.Semantic.DeepEqual(set.Status, st) {
		return nil
	}
	set.Status = st
	return s.sc.c.Do(ctx, "PUT", namedPath("apps/v1", "statefulsets", set.Namespace, set.Name)+"/status", set, nil)
}

// truncateHistory deletes the oldest revisions no pod uses beyond
// revisionHistoryLimit.
func (s *statefulSync) truncateHistory(ctx context.Context, pods []*corev1.Pod) error {
	live := map[string]bool{s.current.Name: true, s.update.Name: true}
	for _, p := range pods {
		live[podRevision(p)] = true
	}
	var dead []*appsv1.ControllerRevision
	for _, r := range s.revs {
		if !live[r.Name] {
			dead = append(dead, r)
		}
	}
	limit := int(ptrOr(s.set.Spec.RevisionHistoryLimit, 10))
	for i := 0; i < len(dead)-limit; i++ {
		err := s.sc.c.Do(ctx, "DELETE", namedPath("apps/v1", "controllerrevisions", dead[i].Namespace, dead[i].Name), nil, nil)
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return nil
}
