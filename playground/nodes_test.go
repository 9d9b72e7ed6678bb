package playground_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"kubeplay/playground"
)

// nodeReady reports whether the node name is registered, Ready and free of
// the not-ready taint.
func nodeReady(t testing.TB, sb *playground.Sandbox, name string) bool {
	code, node := do(t, sb.Handler(), "GET", "/api/v1/nodes/"+name, "")
	if code != 200 {
		return false
	}
	taints, _ := lookup(node, "spec.taints").([]any)
	for _, t := range taints {
		if t.(map[string]any)["key"] == "node.kubernetes.io/not-ready" {
			return false
		}
	}
	return condition(node, "Ready")["status"] == "True"
}

func TestNodes_registerAndLease(t *testing.T) {
	sb := openSandboxWith(t, playground.Options{Controllers: playground.Controllers{Nodes: 2}})
	h := sb.Handler()
	for _, name := range []string{"kubeplay-worker", "kubeplay-worker2"} {
		waitFor(t, name+" to be ready", func() bool { return nodeReady(t, sb, name) })
	}
	waitIdle(t, sb)
	nodes := items(t, h, "/api/v1/nodes")
	if len(nodes) != 3 {
		t.Fatalf("%d nodes, want the control plane's and 2 workers", len(nodes))
	}
	node := mustDo(t, h, 200, "GET", "/api/v1/nodes/kubeplay-worker2", "")
	for path, want := range map[string]string{
		"metadata.labels.kubernetes.io/hostname": "kubeplay-worker2",
		"spec.podCIDR":                           "10.244.2.0/24",
		"status.allocatable.pods":                "110",
		"status.nodeInfo.kubeletVersion":         "v1.35.4",
		"status.addresses.0.address":             "172.18.0.4",
	} {
		if got := lookup(node, path); got != want {
			t.Errorf("%s = %v, want %s", path, got, want)
		}
	}
	for _, c := range []struct{ t, status, reason string }{
		{"MemoryPressure", "False", "KubeletHasSufficientMemory"},
		{"DiskPressure", "False", "KubeletHasNoDiskPressure"},
		{"PIDPressure", "False", "KubeletHasSufficientPID"},
		{"Ready", "True", "KubeletReady"},
	} {
		if got := condition(node, c.t); got["status"] != c.status || got["reason"] != c.reason {
			t.Errorf("condition %s: %v", c.t, got)
		}
	}
	leasePath := "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/kubeplay-worker2"
	lease := mustDo(t, h, 200, "GET", leasePath, "")
	if holder := lookup(lease, "spec.holderIdentity"); holder != "kubeplay-worker2" {
		t.Errorf("lease holder %v", holder)
	}
	if owner := lease["metadata"].(map[string]any)["ownerReferences"].([]any)[0].(map[string]any); owner["uid"] != uidOf(node) {
		t.Errorf("lease owner %v, want the node", owner)
	}
	assertStaysIdle(t, sb)

	// Advancing the clock past the renewal interval renews the Leases.
	renewed := lookup(lease, "spec.renewTime")
	sb.AdvanceClock(time.Minute)
	waitFor(t, "the lease to be renewed", func() bool {
		return lookup(mustDo(t, h, 200, "GET", leasePath, ""), "spec.renewTime") != renewed
	})

	// A deleted node registers again, as its kubelet would.
	mustDo(t, h, 200, "DELETE", "/api/v1/nodes/kubeplay-worker2", "")
	waitFor(t, "the node to register again", func() bool {
		code, again := do(t, h, "GET", "/api/v1/nodes/kubeplay-worker2", "")
		return code == 200 && uidOf(again) != uidOf(node)
	})
	waitIdle(t, sb)
}

// lookup is the value at a dotted path in o ("status.addresses.0.address"),
// the last segment taken whole if it holds dots (a label's key).
func lookup(o map[string]any, path string) any {
	var v any = o
	for path != "" {
		switch m := v.(type) {
		case map[string]any:
			if whole, ok := m[path]; ok {
				return whole
			}
			key, rest, _ := strings.Cut(path, ".")
			v, path = m[key], rest
		case []any:
			key, rest, _ := strings.Cut(path, ".")
			i, err := strconv.Atoi(key)
			if err != nil || i >= len(m) {
				return nil
			}
			v, path = m[i], rest
		default:
			return nil
		}
	}
	return v
}
