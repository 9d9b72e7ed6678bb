package playground

import (
	"context"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"kubeplay/server/inproc"
	"kubeplay/store"
)

// nodeLifecycleController is the part of kube-controller-manager's node
// lifecycle controller that follows a node's conditions with NoSchedule
// taints (its "NoSchedule tainting pass", run on every change of a node):
// a node not Ready is tainted not-ready (unreachable if its readiness is
// Unknown), one under memory, disk or PID pressure or without network is
// tainted so, a cordoned one unschedulable; each taint goes when its cause
// does. So the not-ready taint the API puts on a new node
// (TaintNodesByCondition) goes once its kubelet reports it Ready. Its keys
// are node names. Nothing here polls the nodes' heartbeats: a simulated
// node is never marked NotReady (see nodes.go).
type nodeLifecycleController struct {
	c   *inproc.Client
	now func() time.Time
}

var nodeLifecycleDef = controllerDef{name: "nodeLifecycle", title: "node-lifecycle-controller", serviceAccount: "node-controller",
	start: func(sb *Sandbox) reconciler {
		return &nodeLifecycleController{c: inproc.New(sb.handler, controllerAgent("node-controller")), now: sb.clock.Now}
	}}

// conditionTaints are the NoSchedule taints a node's conditions call for,
// by condition type and status.
var conditionTaints = map[corev1.NodeConditionType]map[corev1.ConditionStatus]string{
	corev1.NodeReady:              {corev1.ConditionFalse: corev1.TaintNodeNotReady, corev1.ConditionUnknown: corev1.TaintNodeUnreachable},
	corev1.NodeMemoryPressure:     {corev1.ConditionTrue: corev1.TaintNodeMemoryPressure},
	corev1.NodeDiskPressure:       {corev1.ConditionTrue: corev1.TaintNodeDiskPressure},
	corev1.NodeNetworkUnavailable: {corev1.ConditionTrue: corev1.TaintNodeNetworkUnavailable},
	corev1.NodePIDPressure:        {corev1.ConditionTrue: corev1.TaintNodePIDPressure},
}

func (nc *nodeLifecycleController) resync(ctx context.Context, _ int64) ([]string, error) {
	all, err := listAs[corev1.Node](ctx, nc.c, allPath(coreV1("nodes")))
	keys := make([]string, 0, len(all))
	for _, n := range all {
		keys = append(keys, n.Name)
	}
	return keys, err
}

func (nc *nodeLifecycleController) keysOf(ev store.Event, q queue) {
	if name, ok := strings.CutPrefix(ev.KV.Key, nodeKeyPrefix); ok && ev.Type != store.Deleted {
		q.Add(name)
	}
}

func (nc *nodeLifecycleController) reconcile(ctx context.Context, name string) (time.Duration, error) {
	node, err := getTyped[corev1.Node](ctx, nc.c, "/api/v1/nodes/"+name)
	if err != nil || node == nil {
		return 0, err
	}
	var want []corev1.Taint
	for _, c := range node.Status.Conditions {
		if key, ok := conditionTaints[c.Type][c.Status]; ok {
			want = append(want, corev1.Taint{Key: key, Effect: corev1.TaintEffectNoSchedule})
		}
	}
	if node.Spec.Unschedulable {
		want = append(want, corev1.Taint{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule})
	}
	// The controller's own taints: NoSchedule ones of the keys it manages.
	owned := func(t corev1.Taint) bool {
		if t.Effect != corev1.TaintEffectNoSchedule {
			return false
		}
		if t.Key == corev1.TaintNodeUnschedulable {
			return true
		}
		for _, byStatus := range conditionTaints {
			for _, key := range byStatus {
				if key == t.Key {
					return true
				}
			}
		}
		return false
	}
	has := func(list []corev1.Taint, t corev1.Taint) bool {
		return slices.ContainsFunc(list, func(o corev1.Taint) bool { return o.MatchTaint(&t) })
	}
	var add []corev1.Taint
	for _, t := range want {
		if !has(node.Spec.Taints, t) {
			now := metav1.NewTime(nc.now().Truncate(time.Second))
			t.TimeAdded = &now
			add = append(add, t)
		}
	}
	stale := func(t corev1.Taint) bool { return owned(t) && !has(want, t) }
	// As kube-controller-manager, taints are added in one patch and removed
	// in another, each naming the node's resourceVersion.
	if len(add) > 0 {
		if node, err = nc.patchTaints(ctx, node, append(slices.Clone(node.Spec.Taints), add...)); err != nil {
			return 0, err
		}
	}
	if slices.ContainsFunc(node.Spec.Taints, stale) {
		_, err = nc.patchTaints(ctx, node, slices.DeleteFunc(slices.Clone(node.Spec.Taints), stale))
	}
	return 0, err
}

// patchTaints sets node's taints by a strategic merge patch that names its
// resourceVersion (taints are an atomic list: a concurrent change is a
// conflict, retried), and returns the node patched.
func (nc *nodeLifecycleController) patchTaints(ctx context.Context, node *corev1.Node, taints []corev1.Taint) (*corev1.Node, error) {
	var list any = taints
	if len(taints) == 0 {
		list = nil
	}
	patch := map[string]any{"metadata": map[string]any{"resourceVersion": node.ResourceVersion}, "spec": map[string]any{"taints": list}}
	var out corev1.Node
	err := nc.c.Patch(ctx, "/api/v1/nodes/"+node.Name, "application/strategic-merge-patch+json", patch, &out)
	return &out, err
}
