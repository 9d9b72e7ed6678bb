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
