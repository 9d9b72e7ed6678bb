package server_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// serve sends one request to h and returns the response.
func serve(h http.Handler, method, path, contentType, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

// widgetsCRD is the CRD of TestKubectl_CRD: a schema with defaults, enums,
// ranges, a list map and CEL rules (one a transition rule).
func widgetsCRD(tb testing.TB) string {
	tb.Helper()
	y, err := os.ReadFile("../testdata/crd/widgets.yaml")
	if err != nil {
		tb.Fatal(err)
	}
	j, err := yaml.YAMLToJSON(y)
	if err != nil {
		tb.Fatal(err)
	}
	return string(j)
}

// BenchmarkCreateCustomObject measures creating one custom object (schema
// pruning, defaulting and validation, two CEL rules, managedFields typed by
// the schema) through the whole handler and the store.
func BenchmarkCreateCustomObject(b *testing.B) {
	h := newTestServer(b)
	if w := serve(h, http.MethodPost, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", "application/json", widgetsCRD(b)); w.Code != http.StatusCreated {
		b.Fatalf("CRD: %d %s", w.Code, w.Body)
	}
	for i := 0; b.Loop(); i++ {
		body := fmt.Sprintf(`{"apiVersion":"kubectl.example.com/v1","kind":"Widget","metadata":{"name":"w%d"},"spec":{"color":"red","ports":[{"name":"http","port":80}]}}`, i)
		if w := serve(h, http.MethodPost, "/apis/kubectl.example.com/v1/namespaces/default/widgets", "application/json", body); w.Code != http.StatusCreated {
			b.Fatalf("create: %d %s", w.Code, w.Body)
		}
	}
}

// BenchmarkCreateCRD measures creating a CRD: validation, compiling and
// costing its CEL rules, establishing it and generating its OpenAPI
// document.
func BenchmarkCreateCRD(b *testing.B) {
	h := newTestServer(b)
	crd := widgetsCRD(b)
	for i := 0; b.Loop(); i++ {
		body := strings.ReplaceAll(crd, "kubectl.example.com", fmt.Sprintf("g%d.example.com", i))
		if w := serve(h, http.MethodPost, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", "application/json", body); w.Code != http.StatusCreated {
			b.Fatalf("CRD: %d %s", w.Code, w.Body)
		}
	}
}
