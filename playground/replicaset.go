package playground

import (
	"context"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"kubeplay/internal/jsonmap"
	"kubeplay/server/inproc"
	"kubeplay/store"
)

// replicaManager is kube-controller-manager's ReplicaSet controller, and
// its ReplicationController controller (the same controller, reading a
// ReplicationController as a ReplicaSet): it claims the pods a selector
// matches, makes or deletes pods until there are as many as wanted, and
// writes the status. Its keys are "<namespace>/<name>" of its owners.
type replicaManager struct {
	c      *inproc.Client
	now    func() time.Time
	events *eventRecorder
	kind   replicaKind
	keys   *selectorKeys
}

// replicaKind is what differs between ReplicaSets and
// ReplicationControllers.
type replicaKind struct {
	group, resource, apiVersion, kind string
	// get reads an owner as a ReplicaSet; nil if there is none.
	get func(ctx context.Context, c *inproc.Client, ns, name string) (*appsv1.ReplicaSet, error)
	// putStatus writes rs's status to the owner.
	putStatus func(ctx context.Context, c *inproc.Client, rs *appsv1.ReplicaSet) error
	// selectorOf reads an owner's selector.
	selectorOf func(jsonmap.Object) labels.Selector
	// countsTerminating says whether the status counts terminating pods
	// (terminatingReplicas: ReplicaSets only).
	countsTerminating bool
}

// burstReplicas is the most pods one sync creates or deletes, as upstream.
const burstReplicas = 500

var (
	replicaSetDef = controllerDef{name: "replicaSet", title: "replicaset controller", serviceAccount: "replicaset-controller",
		start: func(sb *Sandbox) reconciler { return newReplicaManager(sb, "replicaset-controller", replicaSetKind) }}
	replicationControllerDef = controllerDef{name: "replicationController", title: "replication controller", serviceAccount: "replication-controller",
		start: func(sb *Sandbox) reconciler {
			return newReplicaManager(sb, "replication-controller", replicationControllerKind)
		}}
)

func newReplicaManager(sb *Sandbox, component string, kind replicaKind) *replicaManager {
	c := inproc.New(sb.handler, controllerAgent(component))
	gvr := appsV1(kind.resource)
	if kind.group == "" {
		gvr = coreV1(kind.resource)
	}
	return &replicaManager{c: c, now: sb.clock.Now, events: newEventRecorder(c, component, "", sb.clock.Now), kind: kind,
		keys: newSelectorKeys(gvr, coreV1("pods"), kind.kind, kind.selectorOf)}
}

var replicaSetKind = replicaKind{group: "apps/v1", resource: "replicasets", apiVersion: "apps/v1", kind: "ReplicaSet",
	get: func(ctx context.Context, c *inproc.Client, ns, name string) (*appsv1.ReplicaSet, error) {
		return getTyped[appsv1.ReplicaSet](ctx, c, namedPath("apps/v1", "replicasets", ns, name))
	},
	putStatus: func(ctx context.Context, c *inproc.Client, rs *appsv1.ReplicaSet) error {
		return c.Do(ctx, "PUT", namedPath("apps/v1", "replicasets", rs.Namespace, rs.Name)+"/status", rs, nil)
	},
	selectorOf:        labelSelectorOf,
	countsTerminating: true,
}

var replicationControllerKind = replicaKind{group: "", resource: "replicationcontrollers", apiVersion: "v1", kind: "ReplicationController",
	get: func(ctx context.Context, c *inproc.Client, ns, name string) (*appsv1.ReplicaSet, error) {
		rc, err := getTyped[corev1.ReplicationController](ctx, c, namedPath("", "replicationcontrollers", ns, name))
		if rc == nil || err != nil {
			return nil, err
		}
		return rcAsReplicaSet(rc), nil
	},
	putStatus: func(ctx context.Context, c *inproc.Client, rs *appsv1.ReplicaSet) error {
		// The status is all a PUT of /status changes.
		rc := corev1.ReplicationController{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ReplicationController"}, ObjectMeta: rs.ObjectMeta,
			Status: corev1.ReplicationControllerStatus{Replicas: rs.Status.Replicas, FullyLabeledReplicas: rs.Status.FullyLabeledReplicas,
				ReadyReplicas: rs.Status.ReadyReplicas, AvailableReplicas: rs.Status.AvailableReplicas, ObservedGeneration: rs.Status.ObservedGeneration}}
		for _, cond := range rs.Status.Conditions {
			rc.Status.Conditions = append(rc.Status.Conditions, corev1.ReplicationControllerCondition{Type: corev1.ReplicationControllerConditionType(cond.Type),
				Status: cond.Status, LastTransitionTime: cond.LastTransitionTime, Reason: cond.Reason, Message: cond.Message})
		}
		return c.Do(ctx, "PUT", namedPath("", "replicationcontrollers", rs.Namespace, rs.Name)+"/status", rc, nil)
	},
	selectorOf: func(o jsonmap.Object) labels.Selector {
		sel := map[string]string{}
		for k, v := range jsonmap.Child(o, "spec", "selector") {
			s, _ := v.(string)
			sel[k] = s
		}
		if len(sel) == 0 {
			return nil
		}
		return labels.SelectorFromSet(sel)
	},
}

// rcAsReplicaSet reads a ReplicationController as the ReplicaSet it is
// equivalent to.
func rcAsReplicaSet(rc *corev1.ReplicationController) *appsv1.ReplicaSet {
	rs := &appsv1.ReplicaSet{ObjectMeta: rc.ObjectMeta, Spec: appsv1.ReplicaSetSpec{Replicas: rc.Spec.Replicas, MinReadySeconds: rc.Spec.MinReadySeconds,
		Selector: &metav1.LabelSelector{MatchLabels: rc.Spec.Selector}}}
	if rc.Spec.Template != nil {
		rs.Spec.Template = *rc.Spec.Template
	}
	rs.Status = appsv1.ReplicaSetStatus{Replicas: rc.Status.Replicas, FullyLabeledReplicas: rc.Status.FullyLabeledReplicas,
		ReadyReplicas: rc.Status.ReadyReplicas, AvailableReplicas: rc.Status.AvailableReplicas, ObservedGeneration: rc.Status.ObservedGeneration}
	for _, c := range rc.Status.Conditions {
		rs.Status.Conditions = append(rs.Status.Conditions, appsv1.ReplicaSetCondition{Type: appsv1.ReplicaSetConditionType(c.Type),
			Status: c.Status, LastTransitionTime: c.LastTransitionTime, Reason: c.Reason, Message: c.Message})
	}
	return rs
}

func (rm *replicaManager) resync(ctx context.Context, _ int64) ([]string, error) {
	return rm.keys.resync(ctx, rm.c, deleting)
}

func (rm *replicaManager) keysOf(ev store.Event, q queue) { rm.keys.keysOf(ev, q) }

func (rm *replicaManager) reconcile(ctx context.Context, key string) (time.Duration, error) {
	ns, name, _ := strings.Cut(key, "/")
	rs, err := rm.kind.get(ctx, rm.c, ns, name)
	if err != nil || rs == nil {
		return 0, err
	}
	pods, err := listTyped[corev1.Pod](ctx, rm.c, workloadCollection("", "pods", ns))
	if err != nil {
		return 0, err
	}
	sel, err := metav1.LabelSelectorAsSelector(rs.Spec.Selector)
	if err != nil {
		return 0, nil // the API refuses such a selector; nothing to do
	}
	var live []*corev1.Pod
	for _, p := range pods {
		if podActive(p) || podTerminating(p) {
			live = append(live, p)
		}
	}
	m := &claimer{c: rm.c, owner: rs, apiVersion: rm.kind.apiVersion, kind: rm.kind.kind, selector: sel,
		ownedResource: "pods", ownerPath: namedPath(rm.kind.group, rm.kind.resource, ns, name)}
	claimed, err := claim(ctx, m, live)
	if err != nil {
		return 0, err
	}
	var active, terminating []*corev1.Pod
	for _, p := range claimed {
		if podActive(p) {
			active = append(active, p)
		} else {
			terminating = append(terminating, p)
		}
	}
	var manageErr error
	if rs.DeletionTimestamp == nil {
		active, manageErr = rm.manageReplicas(ctx, rs, active)
	}
	after, err := rm.writeStatus(ctx, rs, active, terminating, manageErr)
	if manageErr != nil {
		return 0, manageErr
	}
	return after, err
}

// manageReplicas creates or deletes pods until rs has as many active ones
// as it wants, and returns the active pods then.
func (rm *replicaManager) manageReplicas(ctx context.Context, rs *appsv1.ReplicaSet, active []*corev1.Pod) ([]*corev1.Pod, error) {
	ref := typedRef(rs, rm.kind.apiVersion, rm.kind.kind)
	diff := len(active) - int(ptrOr(rs.Spec.Replicas, 1))
	switch {
	case diff < 0:
		owner := asJSONMap(rs)
		for range min(-diff, burstReplicas) {
			made, err := createPod(ctx, rm.c, owner, rm.kind.apiVersion, rm.kind.kind, nil)
			if err != nil {
				if !apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
					rm.events.event(ctx, ref, "Warning", "FailedCreate", "Error creating: "+err.Error())
				}
				return active, err
			}
			rm.events.event(ctx, ref, "Normal", "SuccessfulCreate", "Created pod: "+jsonmap.String(made, "metadata", "name"))
			var p corev1.Pod
			if decodeInto(made, &p) == nil {
				active = append(active, &p)
			}
		}
	case diff > 0:
		slices.SortStableFunc(active, podDeletionOrder)
		n := min(diff, burstReplicas)
		for _, p := range active[:n] {
			err := rm.c.Do(ctx, "DELETE", namedPath("", "pods", p.Namespace, p.Name), nil, nil)
			if err != nil && !apierrors.IsNotFound(err) {
				rm.events.event(ctx, ref, "Warning", "FailedDelete", "Error deleting: "+err.Error())
				return active, err
			}
			if err == nil {
				rm.events.event(ctx, ref, "Normal", "SuccessfulDelete", "Deleted pod: "+p.Name)
			}
		}
		active = active[n:]
	}
	return active, nil
}

// writeStatus writes rs's status as its pods make it and returns when a
// ready pod becomes available (minReadySeconds), if one will.
func (rm *replicaManager) writeStatus(ctx context.Context, rs *appsv1.ReplicaSet, active, terminating []*corev1.Pod, manageErr error) (time.Duration, error) {
	now := rm.now()
	st := rs.Status
	st.ObservedGeneration = rs.Generation
	st.Replicas = int32(len(active))
	st.FullyLabeledReplicas, st.ReadyReplicas, st.AvailableReplicas = 0, 0, 0
	templateLabels := labels.SelectorFromSet(rs.Spec.Template.Labels)
	var after time.Duration
	for _, p := range active {
		if templateLabels.Matches(labels.Set(p.Labels)) {
			st.FullyLabeledReplicas++
		}
		switch in := podAvailableIn(p, rs.Spec.MinReadySeconds, now); {
		case in == 0:
			st.ReadyReplicas++
			st.AvailableReplicas++
		case in > 0:
			st.ReadyReplicas++
			if after == 0 || in < after {
				after = in
			}
		}
	}
	st.TerminatingReplicas = nil
	if rm.kind.countsTerminating {
		n := int32(len(terminating))
		st.TerminatingReplicas = &n
	}
	failure := slices.IndexFunc(st.Conditions, func(c appsv1.ReplicaSetCondition) bool { return c.Type == appsv1.ReplicaSetReplicaFailure })
	switch {
	case manageErr != nil && failure < 0:
		reason := "FailedCreate"
		if len(active) > int(ptrOr(rs.Spec.Replicas, 1)) {
			reason = "FailedDelete"
		}
		st.Conditions = append(slices.Clone(st.Conditions), appsv1.ReplicaSetCondition{Type: appsv1.ReplicaSetReplicaFailure, Status: corev1.ConditionTrue,
			LastTransitionTime: metav1.NewTime(now), Reason: reason, Message: manageErr.Error()})
	case manageErr == nil && failure >= 0:
		st.Conditions = slices.Delete(slices.Clone(st.Conditions), failure, failure+1)
	}
	if jsonEqual(st, rs.Status) {
		return after, nil
	}
	rs.Status = st
	return after, rm.kind.putStatus(ctx, rm.c, rs)
}

// ptrOr is *p, or def when p is nil (a field the API defaults).
func ptrOr[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}
