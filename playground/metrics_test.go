package playground_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"

	"kubeplay/playground"
)

// TestMetrics_simulatedUsage: the sandbox's metrics-server reads what its
// running pods use from their requests (or their annotations), the same
// at every reading, and what the nodes use from their pods.
func TestMetrics_simulatedUsage(t *testing.T) {
	sb := openSandbox(t)
	h := sb.Handler()
	mustDo(t, h, 201, "POST", "/apis/apps/v1/namespaces/default/deployments",
		strings.Replace(deploymentJSON, `"image":"nginx"`, `"image":"nginx","resources":{"requests":{"cpu":"100m","memory":"64Mi"}}`, 1))
	waitFor(t, "two running pods", func() bool { return rolledOut(t, h, 2, "nginx") })
	const pods = "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods"
	readings := items(t, h, pods)
	if len(readings) != 2 {
		t.Fatalf("readings of the two pods: %s", jsonOf(readings))
	}
	quantity := func(container any, name string) resource.Quantity {
		usage := container.(map[string]any)["usage"].(map[string]any)
		return resource.MustParse(usage[name].(string))
	}
	podsCPU := resource.MustParse("0")
	for _, r := range readings {
		c := r["containers"].([]any)[0]
		cpu, memory := quantity(c, "cpu"), quantity(c, "memory")
		if cpu.MilliValue() < 10 || cpu.MilliValue() > 30 || memory.Value() < 64<<20*30/100-1024 || memory.Value() > 64<<20*60/100 {
			t.Errorf("a container requesting 100m and 64Mi uses %s and %s, want 10-30%% and 30-60%% of them", cpu.String(), memory.String())
		}
		if r["window"] != "15s" || r["metadata"].(map[string]any)["labels"].(map[string]any)["app"] != "web" {
			t.Errorf("a reading: %s", jsonOf(r))
		}
		podsCPU.Add(cpu)
	}
	// The usage is the same; the times are the reading's own (made now, to
	// the second), so two readings may straddle a second.
	untimed := func(rs []map[string]any) string {
		var out []any
		for _, r := range rs {
			md := r["metadata"].(map[string]any)
			out = append(out, []any{md["name"], md["labels"], r["containers"], r["window"]})
		}
		return jsonOf(out)
	}
	if again := items(t, h, pods); untimed(again) != untimed(readings) {
		t.Errorf("a second reading differs:\n%s\n%s", jsonOf(again), jsonOf(readings))
	}
	nodes := items(t, h, "/apis/metrics.k8s.io/v1beta1/nodes")
	nodesCPU := resource.MustParse("0")
	for _, n := range nodes {
		nodesCPU.Add(resource.MustParse(n["usage"].(map[string]any)["cpu"].(string)))
	}
	// The control plane's node and the three workers.
	if len(nodes) != 4 || nodesCPU.MilliValue() < podsCPU.MilliValue()+4*60 {
		t.Errorf("the four nodes use %s of cpu, their pods %s: %s", nodesCPU.String(), podsCPU.String(), jsonOf(nodes))
	}

	// An annotation sets a pod's usage, per container.
	name := readings[0]["metadata"].(map[string]any)["name"].(string)
	if code, out := doPatch(t, h, "/api/v1/namespaces/default/pods/"+name, `{"metadata":{"annotations":{"simulated.kubeplay.dev/cpu-usage":"250m","simulated.kubeplay.dev/memory-usage":"100Mi"}}}`); code != 200 {
		t.Fatalf("annotating the pod: %d %v", code, out)
	}
	reading := mustDo(t, h, 200, "GET", pods+"/"+name, "")
	if usage := jsonOf(reading["containers"]); usage != `[{"name":"nginx","usage":{"cpu":"250m","memory":"100Mi"}}]` {
		t.Errorf("the annotated pod's reading: %s", jsonOf(reading))
	}

	// A pod that does not run has no reading: metrics-server does not
	// watch it.
	mustDo(t, h, 201, "POST", "/api/v1/namespaces/default/pods",
		`{"metadata":{"name":"nowhere"},"spec":{"nodeSelector":{"no":"such-node"},"containers":[{"name":"c","image":"nginx"}]}}`)
	if out := mustDo(t, h, 404, "GET", pods+"/nowhere", ""); out["message"] != `pods "nowhere" not found` {
		t.Errorf("a pending pod's reading: %v", out)
	}

	// Switched off, the API and its APIService are gone, as without
	// metrics-server.
	sb.SetControllers(sb.Controllers().Without("metrics"))
	mustDo(t, h, 404, "GET", pods, "")
	mustDo(t, h, 404, "GET", "/apis/apiregistration.k8s.io/v1/apiservices/v1beta1.metrics.k8s.io", "")
	sb.SetControllers(playground.Controllers{})
	mustDo(t, h, 200, "GET", "/apis/apiregistration.k8s.io/v1/apiservices/v1beta1.metrics.k8s.io", "")
	waitIdle(t, sb)

	// metrics-server's manifest lets view, edit and admin read metrics.
	role := mustDo(t, h, 200, "GET", "/apis/rbac.authorization.k8s.io/v1/clusterroles/system:aggregated-metrics-reader", "")
	if rules := jsonOf(role["rules"]); rules != `[{"apiGroups":["metrics.k8s.io"],"resources":["pods","nodes"],"verbs":["get","list","watch"]}]` {
		t.Errorf("system:aggregated-metrics-reader's rules: %s", rules)
	}
	if view := jsonOf(mustDo(t, h, 200, "GET", "/apis/rbac.authorization.k8s.io/v1/clusterroles/view", "")["rules"]); !strings.Contains(view, `"metrics.k8s.io"`) {
		t.Errorf("view does not read metrics: %s", view)
	}
}
