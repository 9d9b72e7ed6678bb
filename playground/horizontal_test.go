package playground_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestHorizontalPodAutoscaler_scalesOnSimulatedLoad(t *testing.T) {
	sb := openSandbox(t)
	h := sb.Handler()
	mustDo(t, h, 201, "POST", "/apis/apps/v1/namespaces/default/deployments",
		strings.Replace(deploymentJSON, `"image":"nginx"`, `"image":"nginx","resources":{"requests":{"cpu":"100m"}}`, 1))
	waitFor(t, "two running pods", func() bool { return rolledOut(t, h, 2, "nginx") })
	const hpas = "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers"
	// 300m shared by two pods requesting 100m: 150% of requests, three
	// times the target; the first step is bounded by the scale-up rate.
	mustDo(t, h, 201, "POST", hpas, `{"metadata":{"name":"web","annotations":{"simulated.kubeplay.dev/cpu-usage":"300m"}},
		"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},"minReplicas":1,"maxReplicas":5,
		"metrics":[{"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":50}}}]}}`)
	var hpa map[string]any
	desiredRolledOut := func(want ...float64) bool {
		hpa = mustDo(t, h, 200, "GET", hpas+"/web", "")
		st, _ := hpa["status"].(map[string]any)
		if st == nil {
			return false
		}
		desired, _ := st["desiredReplicas"].(float64)
		return slices.Contains(want, desired) && rolledOut(t, h, int(desired), "nginx")
	}
	// Each step waits, on the sandbox's clock, for a metrics window (15 s)
	// to start after the pods' readiness, and the second for the scale-up
	// period (15 s) too: let that time pass rather than wait for it.
	waitFor(t, "the HPA's first look", func() bool {
		return mustDo(t, h, 200, "GET", hpas+"/web", "")["status"].(map[string]any)["conditions"] != nil
	})
	sb.AdvanceClock(16 * time.Second)
	waitFor(t, "the first step", func() bool { return desiredRolledOut(4, 5) })
	sb.AdvanceClock(16 * time.Second)
	waitFor(t, "the HPA to reach its maximum", func() bool { return desiredRolledOut(5) })
	events := jsonOf(items(t, h, "/api/v1/namespaces/default/events"))
	for _, msg := range []string{"New size: 4; reason: cpu resource utilization (percentage of request) above target", "New size: 5; reason: cpu resource utilization (percentage of request) above target"} {
		if !strings.Contains(events, `"message":"`+msg+`"`) || !strings.Contains(events, `"reason":"SuccessfulRescale"`) {
			t.Errorf("no event %q in %s", msg, events)
		}
	}
	// Five ready pods share the load: 60% each, once the fifth pod's
	// metrics window has passed since it became ready. Read once the
	// controllers are idle: while pods turn ready, the HPA's list of pods
	// and the metrics it reads next may see different ready pods.
	sb.AdvanceClock(16 * time.Second)
	waitFor(t, "the status at five replicas", func() bool {
		hpa = mustDo(t, h, 200, "GET", hpas+"/web", "")
		return strings.Contains(jsonOf(hpa["status"]), `"averageUtilization":60`)
	})
	waitIdle(t, sb)
	hpa = mustDo(t, h, 200, "GET", hpas+"/web", "")
	st := jsonOf(hpa["status"])
	for _, want := range []string{`"currentReplicas":5`, `"averageValue":"60m"`, `"reason":"ValidMetricFound"`, `"reason":"TooManyReplicas"`} {
		if !strings.Contains(st, want) {
			t.Errorf("status lacks %s: %s", want, st)
		}
	}
	waitIdle(t, sb)

	// Less load: the scale-down waits for the stabilization window.
	code, out := doPatch(t, h, hpas+"/web", `{"metadata":{"annotations":{"simulated.kubeplay.dev/cpu-usage":"100m"}}}`)
	if code != 200 {
		t.Fatalf("annotating the HPA: %d %v", code, out)
	}
	waitFor(t, "the scale-down held back", func() bool {
		return strings.Contains(jsonOf(mustDo(t, h, 200, "GET", hpas+"/web", "")["status"]), `"reason":"ScaleDownStabilized"`)
	})
	sb.AdvanceClock(6 * time.Minute)
	waitFor(t, "two replicas", func() bool { return rolledOut(t, h, 2, "nginx") })
	// A recommendation made while the pods went (the same race) may hold a
	// recheck for when its window ends: past it, nothing is left to do.
	sb.AdvanceClock(6 * time.Minute)
	waitIdle(t, sb)
	if got := mustDo(t, h, 200, "GET", "/apis/apps/v1/namespaces/default/deployments/web", "")["spec"].(map[string]any)["replicas"]; got != 2.0 {
		t.Errorf("after the window, %v replicas, want 2", got)
	}
}

// doPatch sends a JSON merge patch.
func doPatch(t testing.TB, h http.Handler, path, patch string) (int, map[string]any) {
	t.Helper()
	req := httptest.NewRequest("PATCH", path, strings.NewReader(patch))
	req.Header.Set("Content-Type", "application/merge-patch+json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var out map[string]any
	json.Unmarshal(rec.Body.Bytes(), &out)
	return rec.Code, out
}
