package playground_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"kubeplay/playground"
	"kubeplay/server"
)

// TestSandbox_RuntimeConfig switches a sandbox's group version off and on
// again, without a restart; its objects stay.
func TestSandbox_RuntimeConfig(t *testing.T) {
	rc, err := server.ParseRuntimeConfig("batch/v1=false")
	if err != nil {
		t.Fatal(err)
	}
	sb := openSandboxWith(t, playground.Options{})
	mustDo(t, sb.Handler(), http.StatusCreated, "POST", "/apis/batch/v1/namespaces/default/cronjobs",
		`{"apiVersion":"batch/v1","kind":"CronJob","metadata":{"name":"c"},"spec":{"schedule":"* * * * *","jobTemplate":{"spec":{"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"busybox"}]}}}}}}`)
	code := func() int {
		rec := httptest.NewRecorder()
		sb.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/apis/batch/v1/namespaces/default/cronjobs/c", nil))
		return rec.Code
	}
	sb.SetRuntimeConfig(rc)
	if got := code(); got != http.StatusNotFound {
		t.Errorf("with batch/v1=false: %d", got)
	}
	sb.SetRuntimeConfig(nil)
	if got := code(); got != http.StatusOK {
		t.Errorf("with the defaults again: %d", got)
	}
}
