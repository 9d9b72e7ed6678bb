package server_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// deploymentApply is a Deployment-sized applied configuration; %d varies
// the replicas so that every apply changes the object.
const deploymentApply = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web, tier: frontend}
spec:
  replicas: %d
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web, tier: frontend}
    spec:
      containers:
      - name: web
        image: nginx:1.27
        ports:
        - {containerPort: 80, name: http}
        env:
        - {name: MODE, value: production}
        - {name: LOG_LEVEL, value: info}
        resources:
          requests: {cpu: 100m, memory: 128Mi}
          limits: {cpu: 500m, memory: 256Mi}
      - name: sidecar
        image: busybox:1.36
        args: [sleep, infinity]
`

// BenchmarkApplyDeployment measures one Server-Side Apply PATCH of a
// Deployment that exists, through the whole handler and the store.
func BenchmarkApplyDeployment(b *testing.B) {
	h := newTestServer(b)
	apply := func(i int) (int, string) {
		req := httptest.NewRequest(http.MethodPatch, "/apis/apps/v1/namespaces/default/deployments/web?fieldManager=bench",
			strings.NewReader(fmt.Sprintf(deploymentApply, i%5+1)))
		req.Header.Set("Content-Type", "application/apply-patch+yaml")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w.Code, w.Body.String()
	}
	if code, body := apply(0); code != http.StatusCreated {
		b.Fatalf("first apply: %d %s", code, body)
	}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if code, body := apply(i); code != http.StatusOK {
			b.Fatalf("apply: %d %s", code, body)
		}
	}
}

// TestPatch_BareErrors covers the patches kube-apiserver v1.35 answers with
// a bare 500 (its field manager's and strategic merge patch's own errors):
// kubeplay answers a 400 with the same message.
func TestPatch_BareErrors(t *testing.T) {
	h := newTestServer(t)
	do := func(method, path, contentType, body string) (int, string) {
		t.Helper()
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("Content-Type", contentType)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w.Code, w.Body.String()
	}
	const cms = "/api/v1/namespaces/default/configmaps"
	if code, body := do(http.MethodPost, cms, "application/json", `{"metadata":{"name":"cm1"},"data":{"a":"1"}}`); code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, body)
	}
	if code, body := do(http.MethodPost, "/apis/apps/v1/namespaces/default/deployments", "application/json",
		`{"metadata":{"name":"d1"},"spec":{"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"i"}]}}}}`); code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, body)
	}
	for _, tc := range []struct {
		name, path, contentType, body, message string
	}{
		{"apply of a field not in the schema", cms + "/cm1?fieldManager=bob", "application/apply-patch+yaml",
			"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm1\nfoo: 1\n",
			"failed to create typed patch object (/cm1; /v1, Kind=ConfigMap): .foo: field not declared in schema"},
		{"strategic merge patch of a list item without its merge key", "/apis/apps/v1/namespaces/default/deployments/d1", "application/strategic-merge-patch+json",
			`{"spec":{"template":{"spec":{"containers":[{"image":"x"}]}}}}`,
			"map: map[image:x] does not contain declared merge key: name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := do(http.MethodPatch, tc.path, tc.contentType, tc.body)
			if code != http.StatusBadRequest || !strings.Contains(body, `"message":"`+strings.ReplaceAll(tc.message, `"`, `\"`)+`"`) {
				t.Errorf("got %d %s, want 400 with message %q", code, body, tc.message)
			}
		})
	}
}
