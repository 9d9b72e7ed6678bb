package playground_test

import (
	"fmt"
	"net/http"
	"testing"
)

// quotaUsed is the status.used of the quota at path, "" before it has one.
func quotaUsed(t *testing.T, h http.Handler, path string) string {
	t.Helper()
	q := mustDo(t, h, 200, "GET", path, "")
	st, _ := q["status"].(map[string]any)
	if st == nil || st["used"] == nil {
		return ""
	}
	return jsonOf(st["used"])
}

// The controller writes a new quota's status from what the namespace holds,
// admission charges what is created, and the controller releases what goes.
func TestResourceQuota_usage(t *testing.T) {
	sb := openSandbox(t)
	h := sb.Handler()
	mustDo(t, h, 201, "POST", "/api/v1/namespaces/default/configmaps", `{"metadata":{"name":"before"}}`)
	const qPath = "/api/v1/namespaces/default/resourcequotas/q"
	mustDo(t, h, 201, "POST", "/api/v1/namespaces/default/resourcequotas",
		`{"metadata":{"name":"q"},"spec":{"hard":{"configmaps":"3","pods":"2","requests.memory":"1Gi","count/deployments.apps":"1"}}}`)
	// Other controllers may publish ConfigMaps too (kube-root-ca.crt):
	// the test's own is one of those counted.
	var cms string
	waitFor(t, "the quota's usage", func() bool {
		cms = fmt.Sprint(len(items(t, h, "/api/v1/namespaces/default/configmaps")))
		return quotaUsed(t, h, qPath) == `{"configmaps":"`+cms+`","count/deployments.apps":"0","pods":"0","requests.memory":"0"}`
	})
	q := mustDo(t, h, 200, "GET", qPath, "")
	if hard := jsonOf(q["status"].(map[string]any)["hard"]); hard != `{"configmaps":"3","count/deployments.apps":"1","pods":"2","requests.memory":"1Gi"}` {
		t.Errorf("status.hard %s", hard)
	}
	pod := `{"metadata":{"name":"%s"},"spec":{"containers":[{"name":"c","image":"nginx","resources":{"requests":{"memory":"400Mi"}}}]}}`
	mustDo(t, h, 201, "POST", "/api/v1/namespaces/default/pods", fmt.Sprintf(pod, "a"))
	mustDo(t, h, 201, "POST", "/api/v1/namespaces/default/pods", fmt.Sprintf(pod, "b"))
	if used := quotaUsed(t, h, qPath); used != `{"configmaps":"`+cms+`","count/deployments.apps":"0","pods":"2","requests.memory":"800Mi"}` {
		t.Errorf("used after two pods %s", used)
	}
	mustDo(t, h, 403, "POST", "/api/v1/namespaces/default/pods", fmt.Sprintf(pod, "c"))
	mustDo(t, h, 200, "DELETE", "/api/v1/namespaces/default/pods/a?gracePeriodSeconds=0", "")
	waitFor(t, "the pod's usage released", func() bool {
		return quotaUsed(t, h, qPath) == `{"configmaps":"`+cms+`","count/deployments.apps":"0","pods":"1","requests.memory":"400Mi"}`
	})
	mustDo(t, h, 201, "POST", "/api/v1/namespaces/default/pods", fmt.Sprintf(pod, "c"))

	// A new limit is counted at once.
	q = mustDo(t, h, 200, "GET", qPath, "")
	q["spec"].(map[string]any)["hard"].(map[string]any)["secrets"] = "5"
	mustDo(t, h, 200, "PUT", qPath, jsonOf(q))
	waitFor(t, "the secrets counted", func() bool {
		return quotaUsed(t, h, qPath) == `{"configmaps":"`+cms+`","count/deployments.apps":"0","pods":"2","requests.memory":"800Mi","secrets":"0"}`
	})
	waitIdle(t, sb)
	assertStaysIdle(t, sb)
}

// Hard limits written into the status by hand are set back to the spec's.
func TestResourceQuota_statusReset(t *testing.T) {
	sb := openSandbox(t)
	h := sb.Handler()
	const qPath = "/api/v1/namespaces/default/resourcequotas/q"
	mustDo(t, h, 201, "POST", "/api/v1/namespaces/default/resourcequotas", `{"metadata":{"name":"q"},"spec":{"hard":{"cpu":"1"}}}`)
	waitFor(t, "the quota's status", func() bool { return quotaUsed(t, h, qPath) == `{"cpu":"0"}` })
	q := mustDo(t, h, 200, "GET", qPath, "")
	q["status"].(map[string]any)["hard"] = map[string]any{"cpu": "2"}
	mustDo(t, h, 200, "PUT", qPath+"/status", jsonOf(q))
	waitFor(t, "the status reset", func() bool {
		q := mustDo(t, h, 200, "GET", qPath, "")
		return jsonOf(q["status"].(map[string]any)["hard"]) == `{"cpu":"1"}`
	})
	waitIdle(t, sb)
}
