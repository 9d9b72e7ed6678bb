package playground

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/klog/v2"

	"kubeplay/server/inproc"
	"kubeplay/store"
)

// daemonSetHashLabel labels a DaemonSet's pods and revisions with the hash
// of the template they were made from.
const daemonSetHashLabel = "controller-revision-hash"

// daemonSetController is kube-controller-manager's DaemonSet controller: it
// keeps one pod on every node the template can run on (its node selector,
// required node affinity, and the taints it tolerates), each pinned to its
// node by node affinity on metadata.name, rolls pods to a new template
// within maxUnavailable, keeps the template's history as
// ControllerRevisions, and writes the status. Its keys are
// "<namespace>/<name>" of DaemonSets; a change of a node names them all.
type daemonSetController struct {
	c      *inproc.Client
	now    func() time.Time
	events *eventRecorder
	keys   *selectorKeys
}

var daemonSetDef = controllerDef{name: "daemonSet", title: "daemonset controller", serviceAccount: "daemon-set-controller",
	start: func(sb *Sandbox) reconciler {
		c := inproc.New(sb.handler, controllerAgent("daemon-set-controller"))
		return &daemonSetController{c: c, now: sb.clock.Now, events: newEventRecorder(c, "daemonset-controller", "", sb.clock.Now),
			keys: newSelectorKeys(appsV1("daemonsets"), coreV1("pods"), "DaemonSet", labelSelectorOf)}
	}}

var nodeKeyPrefix = builtinKeyPrefix(coreV1("nodes"))

func (dc *daemonSetController) resync(ctx context.Context, _ int64) ([]string, error) {
	return dc.keys.resync(ctx, dc.c, deleting)
}

func (dc *daemonSetController) keysOf(ev store.Event, q queue) {
	if strings.HasPrefix(ev.KV.Key, nodeKeyPrefix) {
		dc.keys.mu.Lock()
		defer dc.keys.mu.Unlock()
		for ns, names := range dc.keys.selectors {
			for name := range names {
				q.Add(ns + "/" + name)
			}
		}
		return
	}
	dc.keys.keysOf(ev, q)
}

// daemonSync is one look at a DaemonSet.
type daemonSync struct {
	dc    *daemonSetController
	ds    *appsv1.DaemonSet
	now   time.Time
	hash  string // of the current template
	after time.Duration
}

func (dc *daemonSetController) reconcile(ctx context.Context, key string) (time.Duration, error) {
	ns, name, _ := strings.Cut(key, "/")
	path := namedPath("apps/v1", "daemonsets", ns, name)
	ds, err := getTyped[appsv1.DaemonSet](ctx, dc.c, path)
	if err != nil || ds == nil {
		return 0, err
	}
	sel, err := metav1.LabelSelectorAsSelector(ds.Spec.Selector)
	if err != nil || sel.Empty() {
		return 0, nil
	}
	all, err := listTyped[corev1.Pod](ctx, dc.c, workloadCollection("", "pods", ns))
	if err != nil {
		return 0, err
	}
	m := &claimer{c: dc.c, owner: ds, apiVersion: "apps/v1", kind: "DaemonSet", selector: sel, ownedResource: "pods", ownerPath: path}
	pods, err := claim(ctx, m, all)
	if err != nil || ds.DeletionTimestamp != nil {
		return 0, err
	}
	nodes, err := listTyped[corev1.Node](ctx, dc.c, "/api/v1/nodes")
	if err != nil {
		return 0, err
	}
	s := &daemonSync{dc: dc, ds: ds, now: dc.now()}
	revs, err := revisions(ctx, dc.c, ds, "DaemonSet", path, sel)
	if err != nil {
		return 0, err
	}
	if err := s.syncHistory(ctx, revs); err != nil {
		return 0, err
	}
	byNode := map[string][]*corev1.Pod{}
	for _, p := range pods {
		byNode[podNode(p)] = append(byNode[podNode(p)], p)
	}
	if err := s.manage(ctx, nodes, byNode); err != nil {
		return 0, err
	}
	if ds.Spec.UpdateStrategy.Type != appsv1.OnDeleteDaemonSetStrategyType {
		if err := s.rollingUpdate(ctx, nodes, byNode); err != nil {
			return 0, err
		}
	}
	if err := s.cleanupHistory(ctx, revs, pods); err != nil {
		return 0, err
	}
	return s.after, s.writeStatus(ctx, nodes, byNode)
}

// podNode is the node a daemon pod runs on, or is pinned to.
func podNode(p *corev1.Pod) string {
	if p.Spec.NodeName != "" {
		return p.Spec.NodeName
	}
	if a := p.Spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		for _, t := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
			for _, f := range t.MatchFields {
				if f.Key == "metadata.name" && f.Operator == corev1.NodeSelectorOpIn && len(f.Values) == 1 {
					return f.Values[0]
				}
			}
		}
	}
	return ""
}

// syncHistory finds or makes the revision of the current template, the
// newest of all.
func (s *daemonSync) syncHistory(ctx context.Context, revs []*appsv1.ControllerRevision) error {
	ds := s.ds
	data, err := templatePatch(ds)
	if err != nil {
		return err
	}
	var cur *appsv1.ControllerRevision
	var newest int64
	for _, r := range revs {
		var x, y any
		json.Unmarshal(r.Data.Raw, &x)
		json.Unmarshal(data, &y)
		if jsonEqual(x, y) && (cur == nil || r.Revision > cur.Revision) {
			cur = r
		}
		newest = max(newest, r.Revision)
	}
	if cur != nil {
		if cur.Revision < newest {
			cur = cur.DeepCopy()
			cur.Revision = newest + 1
			if err := s.dc.c.Do(ctx, "PUT", namedPath("apps/v1", "controllerrevisions", cur.Namespace, cur.Name), cur, nil); err != nil {
				return err
			}
		}
		s.hash = cur.Labels[daemonSetHashLabel]
		return nil
	}
	hash := podTemplateHash(&ds.Spec.Template, ds.Status.CollisionCount)
	yes := true
	rev := &appsv1.ControllerRevision{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "ControllerRevision"},
		ObjectMeta: metav1.ObjectMeta{Name: ds.Name + "-" + hash, Namespace: ds.Namespace, Labels: withLabel(ds.Spec.Template.Labels, daemonSetHashLabel, hash),
			Annotations:     ds.Annotations,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: ds.Name, UID: ds.UID, Controller: &yes, BlockOwnerDeletion: &yes}}},
		Data: runtime.RawExtension{Raw: data}, Revision: newest + 1}
	err = s.dc.c.Do(ctx, "POST", workloadCollection("apps/v1", "controllerrevisions", ds.Namespace), rev, nil)
	if apierrors.IsAlreadyExists(err) {
		// Another template's revision has the name: hash again.
		ds.Status.CollisionCount = ptrTo(ptrOr(ds.Status.CollisionCount, 0) + 1)
		if putErr := s.dc.c.Do(ctx, "PUT", namedPath("apps/v1", "daemonsets", ds.Namespace, ds.Name)+"/status", ds, nil); putErr != nil {
			return putErr
		}
	}
	if err != nil {
		return err
	}
	s.hash = hash
	return nil
}

// cleanupHistory deletes the oldest revisions no pod runs beyond
// revisionHistoryLimit.
func (s *daemonSync) cleanupHistory(ctx context.Context, revs []*appsv1.ControllerRevision, pods []*corev1.Pod) error {
	live := map[string]bool{s.hash: true}
	for _, p := range pods {
		live[p.Labels[daemonSetHashLabel]] = true
	}
	var dead []*appsv1.ControllerRevision
	for _, r := range revs {
		if !live[r.Labels[daemonSetHashLabel]] {
			dead = append(dead, r)
		}
	}
	for i := 0; i < len(dead)-int(ptrOr(s.ds.Spec.RevisionHistoryLimit, 10)); i++ {
		err := s.dc.c.Do(ctx, "DELETE", namedPath("apps/v1", "controllerrevisions", dead[i].Namespace, dead[i].Name), nil, nil)
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return nil
}

// daemonTolerations are those every daemon pod gets, so that it runs on
// nodes that are not ready, unreachable, under pressure or cordoned.
var daemonTolerations = []corev1.Toleration{
	{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
	{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
	{Key: corev1.TaintNodeDiskPressure, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
	{Key: corev1.TaintNodeMemoryPressure, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
	{Key: corev1.TaintNodePIDPressure, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
	{Key: corev1.TaintNodeUnschedulable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
}

// podSpecFor is the template's pod spec for node: pinned to it, with the
// daemon tolerations.
func (s *daemonSync) podSpecFor(node string) corev1.PodSpec {
	spec := *s.ds.Spec.Template.Spec.DeepCopy()
	tolerations := slices.Clone(daemonTolerations)
	if spec.HostNetwork {
		tolerations = append(tolerations, corev1.Toleration{Key: corev1.TaintNodeNetworkUnavailable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule})
	}
	for _, t := range tolerations {
		if !slices.ContainsFunc(spec.Tolerations, func(o corev1.Toleration) bool { return o.MatchToleration(&t) }) {
			spec.Tolerations = append(spec.Tolerations, t)
		}
	}
	pin := &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{
		{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{node}}}}}}
	switch {
	case spec.Affinity == nil:
		spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: pin}}
	case spec.Affinity.NodeAffinity == nil:
		spec.Affinity.NodeAffinity = &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: pin}
	default:
		spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = pin
	}
	return spec
}

// shouldRun reports whether a daemon pod should be made on node, and
// whether one there should go on running.
func (s *daemonSync) shouldRun(node *corev1.Node) (run, keep bool) {
	spec := s.ds.Spec.Template.Spec
	if !selectsNode(&spec, node) {
		return false, false
	}
	tolerations := append(slices.Clone(spec.Tolerations), daemonTolerations...)
	run, keep = true, true
	for i := range node.Spec.Taints {
		taint := &node.Spec.Taints[i]
		if taint.Effect == corev1.TaintEffectPreferNoSchedule {
			continue
		}
		if !slices.ContainsFunc(tolerations, func(t corev1.Toleration) bool { return t.ToleratesTaint(klog.Background(), taint, false) }) {
			run = false
			if taint.Effect == corev1.TaintEffectNoExecute {
				keep = false
			}
		}
	}
	return run, keep
}

// selectsNode reports whether spec's node selector and required node
// affinity admit node.
func selectsNode(spec *corev1.PodSpec, node *corev1.Node) bool {
	if !labels.SelectorFromSet(spec.NodeSelector).Matches(labels.Set(node.Labels)) {
		return false
	}
	a := spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return true
	}
	for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		if termMatches(term.MatchExpressions, node.Labels) && termMatches(term.MatchFields, map[string]string{"metadata.name": node.Name}) &&
			len(term.MatchExpressions)+len(term.MatchFields) > 0 {
			return true
		}
	}
	return false
}

func termMatches(reqs []corev1.NodeSelectorRequirement, values map[string]string) bool {
	ops := map[corev1.NodeSelectorOperator]selection.Operator{corev1.NodeSelectorOpIn: selection.In, corev1.NodeSelectorOpNotIn: selection.NotIn,
		corev1.NodeSelectorOpExists: selection.Exists, corev1.NodeSelectorOpDoesNotExist: selection.DoesNotExist,
		corev1.NodeSelectorOpGt: selection.GreaterThan, corev1.NodeSelectorOpLt: selection.LessThan}
	for _, r := range reqs {
		req, err := labels.NewRequirement(r.Key, ops[r.Operator], r.Values)
		if err != nil || !req.Matches(labels.Set(values)) {
			return false
		}
	}
	return true
}

// manage makes the missing daemon pods and deletes those that should not
// run: on nodes they should not run on, failed ones, and duplicates.
func (s *daemonSync) manage(ctx context.Context, nodes []*corev1.Node, byNode map[string][]*corev1.Pod) error {
	ds := s.ds
	ref := typedRef(ds, "apps/v1", "DaemonSet")
	var create []string
	var remove []*corev1.Pod
	for _, node := range nodes {
		run, keep := s.shouldRun(node)
		pods := byNode[node.Name]
		switch {
		case run && len(pods) == 0:
			create = append(create, node.Name)
		case keep:
			var running []*corev1.Pod
			failed := false
			for _, p := range pods {
				switch {
				case p.DeletionTimestamp != nil:
				case p.Status.Phase == corev1.PodFailed:
					s.dc.events.event(ctx, ref, "Warning", "FailedDaemonPod",
						fmt.Sprintf("Found failed daemon pod %s/%s on node %s, will try to kill it", p.Namespace, p.Name, node.Name))
					remove = append(remove, p)
					failed = true
				case p.Status.Phase == corev1.PodSucceeded:
					s.dc.events.event(ctx, ref, "Normal", "SucceededDaemonPod",
						fmt.Sprintf("Found succeeded daemon pod %s/%s on node %s, will try to delete it", p.Namespace, p.Name, node.Name))
					remove = append(remove, p)
					failed = true
				default:
					running = append(running, p)
				}
			}
			if run && len(running) == 0 && !failed && !slices.ContainsFunc(pods, func(p *corev1.Pod) bool { return p.DeletionTimestamp != nil }) {
				create = append(create, node.Name)
			}
			// One pod per node: the oldest stays.
			slices.SortFunc(running, func(a, b *corev1.Pod) int {
				if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
					return boolOrder(a.CreationTimestamp.Before(&b.CreationTimestamp))
				}
				return strings.Compare(a.Name, b.Name)
			})
			if len(running) > 1 {
				remove = append(remove, running[1:]...)
			}
		default:
			for _, p := range pods {
				if p.DeletionTimestamp == nil {
					remove = append(remove, p)
				}
			}
		}
	}
	// Pods pinned to nodes that are gone go too.
	names := map[string]bool{}
	for _, n := range nodes {
		names[n.Name] = true
	}
	for node, pods := range byNode {
		if !names[node] {
			for _, p := range pods {
				if p.DeletionTimestamp == nil {
					remove = append(remove, p)
				}
			}
		}
	}
	for _, node := range create {
		if err := s.createPod(ctx, ref, node); err != nil {
			return err
		}
	}
	for _, p := range remove {
		if err := s.deletePod(ctx, ref, p); err != nil {
			return err
		}
	}
	return nil
}

func (s *daemonSync) createPod(ctx context.Context, ref objectRef, node string) error {
	ds := s.ds
	yes := true
	p := &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{GenerateName: ds.Name + "-", Namespace: ds.Namespace,
			Labels: withLabel(ds.Spec.Template.Labels, daemonSetHashLabel, s.hash), Annotations: maps.Clone(ds.Spec.Template.Annotations),
			Finalizers:      slices.Clone(ds.Spec.Template.Finalizers),
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: ds.Name, UID: ds.UID, Controller: &yes, BlockOwnerDeletion: &yes}}},
		Spec: s.podSpecFor(node)}
	var made corev1.Pod
	if err := s.dc.c.Do(ctx, "POST", workloadCollection("", "pods", ds.Namespace), p, &made); err != nil {
		if !apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
			s.dc.events.event(ctx, ref, "Warning", "FailedCreate", "Error creating: "+err.Error())
		}
		return err
	}
	s.dc.events.event(ctx, ref, "Normal", "SuccessfulCreate", "Created pod: "+made.Name)
	return nil
}

func (s *daemonSync) deletePod(ctx context.Context, ref objectRef, p *corev1.Pod) error {
	err := s.dc.c.Do(ctx, "DELETE", namedPath("", "pods", p.Namespace, p.Name), nil, nil)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		s.dc.events.event(ctx, ref, "Warning", "FailedDelete", "Error deleting: "+err.Error())
		return err
	}
	s.dc.events.event(ctx, ref, "Normal", "SuccessfulDelete", "Deleted pod: "+p.Name)
	return nil
}

// available reports whether p has been ready for minReadySeconds, asking
// for a look when it will have been.
func (s *daemonSync) available(p *corev1.Pod) bool {
	in := podAvailableIn(p, s.ds.Spec.MinReadySeconds, s.now)
	if in > 0 && (s.after == 0 || in < s.after) {
		s.after = in
	}
	return in == 0 && p.DeletionTimestamp == nil
}

// rollingUpdate deletes pods of old templates (for manage to replace), the
// unavailable ones at once and the others while fewer than maxUnavailable
// nodes are without an available pod.
func (s *daemonSync) rollingUpdate(ctx context.Context, nodes []*corev1.Node, byNode map[string][]*corev1.Pod) error {
	desired := 0
	for _, n := range nodes {
		if run, _ := s.shouldRun(n); run {
			desired++
		}
	}
	maxUnavailable := 1
	if ru := s.ds.Spec.UpdateStrategy.RollingUpdate; ru != nil && ru.MaxUnavailable != nil {
		maxUnavailable, _ = intstr.GetScaledValueFromIntOrPercent(ru.MaxUnavailable, desired, true)
		if maxUnavailable == 0 {
			maxUnavailable = 1
		}
	}
	unavailable := 0
	var now, candidates []*corev1.Pod
	for _, n := range nodes {
		if run, _ := s.shouldRun(n); !run {
			continue
		}
		var newPod, oldPod *corev1.Pod
		dup := false
		for _, p := range byNode[n.Name] {
			if p.DeletionTimestamp != nil {
				continue
			}
			target := &oldPod
			if p.Labels[daemonSetHashLabel] == s.hash {
				target = &newPod
			}
			dup = dup || *target != nil
			*target = p
		}
		switch {
		case dup:
		case oldPod == nil && newPod == nil, oldPod != nil && newPod != nil:
			unavailable++
		case newPod != nil:
			if !s.available(newPod) {
				unavailable++
			}
		case !s.available(oldPod):
			now = append(now, oldPod)
		case unavailable < maxUnavailable:
			candidates = append(candidates, oldPod)
		}
	}
	if room := maxUnavailable - unavailable - len(now); room > 0 {
		now = append(now, candidates[:min(room, len(candidates))]...)
	}
	ref := typedRef(s.ds, "apps/v1", "DaemonSet")
	for _, p := range now {
		if err := s.deletePod(ctx, ref, p); err != nil {
			return err
		}
	}
	return nil
}

// writeStatus writes the counts of nodes and pods the status reports.
func (s *daemonSync) writeStatus(ctx context.Context, nodes []*corev1.Node, byNode map[string][]*corev1.Pod) error {
	ds := s.ds
	st := appsv1.DaemonSetStatus{ObservedGeneration: ds.Generation, CollisionCount: ds.Status.CollisionCount, Conditions: ds.Status.Conditions}
	for _, n := range nodes {
		run, _ := s.shouldRun(n)
		var pods []*corev1.Pod
		for _, p := range byNode[n.Name] {
			if p.DeletionTimestamp == nil {
				pods = append(pods, p)
			}
		}
		if !run {
			if len(pods) > 0 {
				st.NumberMisscheduled++
			}
			continue
		}
		st.DesiredNumberScheduled++
		if len(pods) == 0 {
			continue
		}
		st.CurrentNumberScheduled++
		p := pods[0]
		if podIsReady(p) {
			st.NumberReady++
			if s.available(p) {
				st.NumberAvailable++
			}
		}
		if p.Labels[daemonSetHashLabel] == s.hash {
			st.UpdatedNumberScheduled++
		}
	}
	st.NumberUnavailable = max(0, st.DesiredNumberScheduled-st.NumberAvailable)
	if apiequality.Semantic.DeepEqual(ds.Status, st) {
		return nil
	}
	ds.Status = st
	return s.dc.c.Do(ctx, "PUT", namedPath("apps/v1", "daemonsets", ds.Namespace, ds.Name)+"/status", ds, nil)
}
