package playground_test

import (
	"strings"
	"testing"
)

const pdbs = "/apis/policy/v1/namespaces/default/poddisruptionbudgets"

// budgetStatus waits for the budget name to have observed its generation
// and returns its status.
func budgetStatus(t *testing.T, get func() map[string]any, want string) map[string]any {
	t.Helper()
	var st map[string]any
	waitFor(t, want, func() bool {
		st, _ = get()["status"].(map[string]any)
		return st != nil && strings.Contains(jsonOf(st), want)
	})
	return st
}

func TestDisruption_budgetOfADeployment(t *testing.T) {
	sb := openSandbox(t)
	h := sb.Handler()
	mustDo(t, h, 201, "POST", "/apis/apps/v1/namespaces/default/deployments", strings.Replace(deploymentJSON, `"replicas":2`, `"replicas":3`, 1))
	waitFor(t, "three running pods", func() bool { return rolledOut(t, h, 3, "nginx") })
	mustDo(t, h, 201, "POST", pdbs, `{"metadata":{"name":"min"},"spec":{"minAvailable":2,"selector":{"matchLabels":{"app":"web"}}}}`)
	mustDo(t, h, 201, "POST", pdbs, `{"metadata":{"name":"pct"},"spec":{"maxUnavailable":"50%","selector":{"matchLabels":{"app":"web"}}}}`)
	get := func(name string) func() map[string]any {
		return func() map[string]any { return mustDo(t, h, 200, "GET", pdbs+"/"+name, "") }
	}
	st := budgetStatus(t, get("min"), `"currentHealthy":3`)
	if got := jsonOf(map[string]any{"c": st["currentHealthy"], "d": st["desiredHealthy"], "e": st["expectedPods"], "a": st["disruptionsAllowed"], "g": st["observedGeneration"]}); got != `{"a":1,"c":3,"d":2,"e":3,"g":1}` {
		t.Errorf("minAvailable 2: %s", jsonOf(st))
	}
	cond := st["conditions"].([]any)[0].(map[string]any)
	if cond["type"] != "DisruptionAllowed" || cond["status"] != "True" || cond["reason"] != "SufficientPods" || cond["observedGeneration"] != 1.0 {
		t.Errorf("condition %s", jsonOf(cond))
	}
	// 50% of 3 unavailable rounds up to 2: one must stay healthy.
	st = budgetStatus(t, get("pct"), `"currentHealthy":3`)
	if st["desiredHealthy"] != 1.0 || st["expectedPods"] != 3.0 || st["disruptionsAllowed"] != 2.0 {
		t.Errorf("maxUnavailable 50%%: %s", jsonOf(st))
	}
	mustDo(t, h, 200, "DELETE", pdbs+"/pct", "")
	waitIdle(t, sb)
	assertStaysIdle(t, sb)

	// One eviction is allowed; it uses the budget up until the pod is
	// replaced and ready.
	pods := items(t, h, "/api/v1/namespaces/default/pods")
	evict := func(pod string) (int, map[string]any) {
		return do(t, h, "POST", "/api/v1/namespaces/default/pods/"+pod+"/eviction",
			`{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"`+pod+`"}}`)
	}
	first := pods[0]["metadata"].(map[string]any)["name"].(string)
	if code, out := evict(first); code != 201 {
		t.Fatalf("first eviction: %d %v", code, out)
	}
	second := pods[1]["metadata"].(map[string]any)["name"].(string)
	code, out := evict(second)
	if code != 429 || !strings.Contains(jsonOf(out), "Cannot evict pod as it would violate the pod's disruption budget.") {
		t.Fatalf("second eviction: %d %v", code, out)
	}
	budgetStatus(t, get("min"), `"currentHealthy":3,"desiredHealthy":2,"disruptionsAllowed":1`)
	if code, out := evict(second); code != 201 {
		t.Fatalf("eviction once the pod was replaced: %d %v", code, out)
	}
	waitIdle(t, sb)
}

func TestDisruption_unmanagedPods(t *testing.T) {
	sb := openSandbox(t)
	h := sb.Handler()
	mustDo(t, h, 201, "POST", "/api/v1/namespaces/default/pods", podJSON("a"))
	mustDo(t, h, 201, "POST", pdbs, `{"metadata":{"name":"pct"},"spec":{"minAvailable":"50%","selector":{"matchLabels":{"app":"web"}}}}`)
	mustDo(t, h, 201, "POST", pdbs, `{"metadata":{"name":"none"},"spec":{"minAvailable":1,"selector":{"matchLabels":{"app":"nothing"}}}}`)
	st := budgetStatus(t, func() map[string]any { return mustDo(t, h, 200, "GET", pdbs+"/pct", "") }, `"observedGeneration":1`)
	// An unmanaged pod counts for no scale: nothing is expected, nothing
	// may be disrupted.
	if st["expectedPods"] != 0.0 || st["desiredHealthy"] != 0.0 || st["disruptionsAllowed"] != 0.0 {
		t.Errorf("status %s", jsonOf(st))
	}
	waitFor(t, "the events", func() bool {
		evs := jsonOf(items(t, h, "/api/v1/namespaces/default/events"))
		return strings.Contains(evs, `"reason":"UnmanagedPods"`) && strings.Contains(evs, `"message":"No matching pods found"`)
	})
	waitIdle(t, sb)
}
