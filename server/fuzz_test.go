package server_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// FuzzServer sends arbitrary bodies, content types, paths and selectors: the
// server must answer every one with a Status, never a panic or a 5xx.
func FuzzServer(f *testing.F) {
	f.Add("POST", "/api/v1/namespaces/default/configmaps", "application/json", `{"metadata":{"name":"a"},"data":{"k":"v"}}`, "")
	f.Add("POST", "/api/v1/namespaces/default/configmaps", "application/yaml", "metadata: {name: b}\ndata: [1, 2]", "")
	f.Add("PUT", "/api/v1/namespaces/default/configmaps/a", "application/json", `{"metadata":{"name":"a","resourceVersion":"x"}}`, "")
	f.Add("POST", "/api/v1/namespaces", "application/json", `{"metadata":7}`, "")
	f.Add("GET", "/api/v1/configmaps", "", "", "labelSelector=a+in+(b,c),!d&fieldSelector=metadata.name!=x&limit=1")
	f.Add("GET", "/api/v1/configmaps", "", "", "continue=eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MSwic3RhcnQiOiJ4In0")
	f.Add("DELETE", "/apis/apps/v1/namespaces/default/deployments", "application/json", `{"preconditions":{"uid":"x"}}`, "labelSelector=x")
	f.Add("POST", "/api/v1/namespaces/default/secrets", "application/vnd.kubernetes.protobuf", "k8s\x00\n\x0c\n\x02v1\x12\x06Secret", "")
	f.Add("PATCH", "/api/v1/namespaces/default/configmaps/a", "application/json-patch+json", `[{"op":"test","path":"/data/k","value":"v"}]`, "")
	f.Add("PATCH", "/api/v1/namespaces/default/configmaps/a", "application/strategic-merge-patch+json", `{"data":{"$patch":"replace"}}`, "")
	f.Add("PATCH", "/apis/apps/v1/namespaces/default/deployments/d/scale", "application/apply-patch+yaml", "apiVersion: autoscaling/v1\nkind: Scale\nspec: {replicas: 2}", "fieldManager=f&force=true")
	f.Add("POST", "/api/v1/namespaces/default/pods", "application/json", `{"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"nginx","ports":[{"containerPort":80}],"livenessProbe":{"httpGet":{"port":80}}}],"volumes":[{"name":"v","projected":{"sources":[{"downwardAPI":{"items":[null]}}]}}]}}`, "")
	f.Add("POST", "/api/v1/namespaces/default/services", "application/json", `{"metadata":{"name":"s"},"spec":{"type":"NodePort","ports":[{"port":80,"nodePort":30000},null]}}`, "")
	f.Add("PATCH", "/apis/batch/v1/namespaces/default/jobs/j", "application/apply-patch+yaml", "apiVersion: batch/v1\nkind: Job\nspec: {selector: {matchLabels: {a: b}}, template: {spec: {containers: [{name: c, image: x}]}}}", "fieldManager=f")
	f.Add("POST", "/apis/apps/v1/namespaces/default/deployments", "application/json", `{"metadata":{"name":"d"},"spec":{"selector":{"matchExpressions":[{"key":"a","operator":"Bad"}]},"template":{"spec":{"containers":[{}]}}}}`, "")
	f.Fuzz(func(t *testing.T, method, path, contentType, body, query string) {
		h := newTestServer(t)
		createDefaultServiceAccount(t, h, "default")
		if !strings.HasPrefix(path, "/") {
			path = "/" + path
		}
		u := &url.URL{Path: path, RawQuery: query}
		req, err := http.NewRequest(method, "http://kubeplay"+u.RequestURI(), strings.NewReader(body))
		if err != nil {
			return // not a request an HTTP client could send
		}
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Errorf("%s %s %q: %d %s", method, u.RequestURI(), body, rec.Code, rec.Body)
		}
	})
}
