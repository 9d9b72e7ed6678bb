package playground_test

import (
	"testing"

	"kubeplay/playground"
)

// taintOf is the node's taint of key with effect NoSchedule (nil if none).
func taintOf(t testing.TB, sb *playground.Sandbox, node, key string) map[string]any {
	_, n := do(t, sb.Handler(), "GET", "/api/v1/nodes/"+node, "")
	taints, _ := lookup(n, "spec.taints").([]any)
	for _, x := range taints {
		if m := x.(map[string]any); m["key"] == key && m["effect"] == "NoSchedule" {
			return m
		}
	}
	return nil
}

// TestNodeLifecycle_taints: the node lifecycle controller keeps the
// NoSchedule taints of a node's conditions and cordoning, as
// kube-controller-manager's does; a node's not-ready taint, which the API
// adds on create, goes only once it reports Ready.
func TestNodeLifecycle_taints(t *testing.T) {
	sb := openSandboxWith(t, playground.Options{Controllers: playground.Controllers{Nodes: 1}})
	h := sb.Handler()
	waitFor(t, "kubeplay-worker to be ready", func() bool { return nodeReady(t, sb, "kubeplay-worker") })

	mergePatch(t, h, "/api/v1/nodes/kubeplay-worker", `{"spec":{"unschedulable":true}}`)
	waitFor(t, "the unschedulable taint", func() bool { return taintOf(t, sb, "kubeplay-worker", "node.kubernetes.io/unschedulable") != nil })
	if added := taintOf(t, sb, "kubeplay-worker", "node.kubernetes.io/unschedulable")["timeAdded"]; added == nil {
		t.Error("the unschedulable taint has no timeAdded")
	}
	mergePatch(t, h, "/api/v1/nodes/kubeplay-worker", `{"spec":{"unschedulable":null}}`)
	waitFor(t, "the unschedulable taint to go", func() bool { return taintOf(t, sb, "kubeplay-worker", "node.kubernetes.io/unschedulable") == nil })

	// A node of the user's, not ready, then ready and under memory pressure.
	mustDo(t, h, 201, "POST", "/api/v1/nodes", `{"metadata":{"name":"mine"},"status":{"conditions":[{"type":"Ready","status":"False","reason":"Starting"}]}}`)
	waitIdle(t, sb)
	if taintOf(t, sb, "mine", "node.kubernetes.io/not-ready") == nil {
		t.Fatal("a node not ready lost its not-ready taint")
	}
	mergePatch(t, h, "/api/v1/nodes/mine/status", `{"status":{"conditions":[{"type":"Ready","status":"True","reason":"KubeletReady"},{"type":"MemoryPressure","status":"True","reason":"Low"}]}}`)
	waitFor(t, "the not-ready taint to go", func() bool { return taintOf(t, sb, "mine", "node.kubernetes.io/not-ready") == nil })
	waitFor(t, "the memory-pressure taint", func() bool { return taintOf(t, sb, "mine", "node.kubernetes.io/memory-pressure") != nil })
}
