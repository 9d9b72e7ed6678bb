package playground_test

import "testing"

// A pod never scheduled that a finalizer holds once deleted is marked
// Failed and deleted at once by the pod garbage collector (a Job that
// replaces only failed pods waits for that).
func TestPodGC_unscheduledTerminatingPod(t *testing.T) {
	sb := jobSandbox(t)
	h := sb.Handler()
	mustDo(t, h, 201, "POST", "/api/v1/namespaces/default/pods", `{"metadata":{"name":"held","finalizers":["example.com/hold"]},"spec":{"containers":[{"name":"c","image":"busybox"}]}}`)
	mustDo(t, h, 200, "DELETE", "/api/v1/namespaces/default/pods/held", "")
	waitFor(t, "the pod to be marked Failed", func() bool {
		p := mustDo(t, h, 200, "GET", "/api/v1/namespaces/default/pods/held", "")
		return p["status"].(map[string]any)["phase"] == "Failed"
	})
	waitIdle(t, sb)
}
