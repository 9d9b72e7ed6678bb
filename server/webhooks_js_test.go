//go:build js && wasm

package server_test

import (
	"encoding/json"
	"net/http"
	"testing"
)

// TestWebhooks_Browser checks that the browser engine's webhook calls fail
// as calls to an unreachable webhook do: the request fails under
// failurePolicy Fail and goes on under Ignore.
func TestWebhooks_Browser(t *testing.T) {
	h := newTestServer(t)
	config := `{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingWebhookConfiguration","metadata":{"name":"test"},"webhooks":[
{"name":"fail.webhooks.test","clientConfig":{"url":"https://127.0.0.1:9443/validate"},"sideEffects":"None","admissionReviewVersions":["v1"],
 "objectSelector":{"matchLabels":{"wh":"fail"}},"rules":[{"operations":["CREATE"],"apiGroups":[""],"apiVersions":["v1"],"resources":["configmaps"]}]},
{"name":"ignore.webhooks.test","clientConfig":{"url":"https://127.0.0.1:9443/validate"},"sideEffects":"None","admissionReviewVersions":["v1"],"failurePolicy":"Ignore",
 "objectSelector":{"matchLabels":{"wh":"ignore"}},"rules":[{"operations":["CREATE"],"apiGroups":[""],"apiVersions":["v1"],"resources":["configmaps"]}]}]}`
	if w := serve(h, http.MethodPost, "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations", "application/json", config); w.Code != http.StatusCreated {
		t.Fatalf("configuration: %d %s", w.Code, w.Body)
	}
	w := serve(h, http.MethodPost, "/api/v1/namespaces/default/configmaps", "application/json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","labels":{"wh":"fail"}}}`)
	var status struct{ Message string }
	json.Unmarshal(w.Body.Bytes(), &status)
	want := `Internal error occurred: failed calling webhook "fail.webhooks.test": failed to call webhook: Post "https://127.0.0.1:9443/validate?timeout=10s": webhooks cannot be reached from the browser engine`
	if w.Code != http.StatusInternalServerError || status.Message != want {
		t.Errorf("Fail: %d %s", w.Code, w.Body)
	}
	if w := serve(h, http.MethodPost, "/api/v1/namespaces/default/configmaps", "application/json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b","labels":{"wh":"ignore"}}}`); w.Code != http.StatusCreated {
		t.Errorf("Ignore: %d %s", w.Code, w.Body)
	}
}
