package server

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"kubeplay/internal/jsonmap"
	"kubeplay/server/audit"
	"kubeplay/server/catalog"
)

// The admission plugins of nodes and of the pods bound to them.

var nodesGVR = schema.GroupVersionResource{Version: "v1", Resource: "nodes"}

// The taint TaintNodesByCondition puts on a new node, which the node
// lifecycle controller removes once the node is Ready.
const (
	notReadyTaintKey    = "node.kubernetes.io/not-ready"
	notReadyTaintEffect = "NoSchedule"
)

// admitNode is TaintNodesByCondition: a new node is not ready until its
// kubelet says so, so no pod is scheduled to it before; a node that has
// the taint (its key and effect) keeps it as sent.
func admitNode(_ *admission, ctx context.Context, _ *catalog.Resource, _ string, obj object) (func(podSecurity func() error) error, error) {
	spec := jsonmap.Ensure(obj, "spec")
	taints, _ := spec["taints"].([]any)
	tainted := false
	for _, t := range taints {
		m, _ := t.(map[string]any)
		tainted = tainted || m["key"] == notReadyTaintKey && m["effect"] == notReadyTaintEffect
	}
	if !tainted {
		spec["taints"] = append(taints, map[string]any{"key": notReadyTaintKey, "effect": notReadyTaintEffect})
	}
	return nil, audit.FromContext(ctx).Ran(mutating("TaintNodesByCondition"), nil)
}

// topologyLabels are the node labels PodTopologyLabels copies to the pods
// bound to the node.
var topologyLabels = []string{"topology.kubernetes.io/zone", "topology.kubernetes.io/region"}

// admitPodTopology is PodTopologyLabels (when its feature gate is on): the
// labels, of a new pod created on a node or of a Binding to a node, get
// the node's topologyLabels, over those they have. A node that does not
// exist has none.
func (s *admission) admitPodTopology(ctx context.Context, node string, md map[string]any) error {
	if !s.enabled(PodTopologyLabelsAdmission) {
		return nil
	}
	rec := audit.FromContext(ctx)
	if node == "" {
		return rec.Ran(mutating("PodTopologyLabels"), nil)
	}
	n, _, err := s.getObject(ctx, catalog.LookupBuiltin(nodesGVR), "", node)
	if err != nil && !apierrors.IsNotFound(err) {
		return rec.Ran(mutating("PodTopologyLabels"), err)
	}
	nodeLabels := jsonmap.Child(n, "metadata", "labels")
	for _, k := range topologyLabels {
		if v, ok := nodeLabels[k]; ok {
			jsonmap.Ensure(md, "labels")[k] = v
		}
	}
	return rec.Ran(mutating("PodTopologyLabels"), nil)
}
