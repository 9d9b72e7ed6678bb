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

// TestDeleteCRD_WaitsForFinalizers deletes a CRD one of whose objects has
// a finalizer: as kube-apiserver, the CRD stays, Terminating with reason
// InstanceDeletionInProgress, until the finalizer is removed, and then goes
// with its resource (the crd-deletion scenario checks the rest against
// kube-apiserver, whose controller finishes after a delay).
func TestDeleteCRD_WaitsForFinalizers(t *testing.T) {
	h := newTestServer(t)
	crds := "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
	fins := "/apis/f.example.com/v1/namespaces/default/fins"
	steps := []struct {
		method, path, contentType, body string
		code                            int
	}{
		{"POST", crds, "application/json", `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"fins.f.example.com"},"spec":{"group":"f.example.com","scope":"Namespaced","names":{"plural":"fins","kind":"Fin"},"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}`, 201},
		{"POST", fins, "application/json", `{"apiVersion":"f.example.com/v1","kind":"Fin","metadata":{"name":"held","finalizers":["example.com/hold"]}}`, 201},
		{"DELETE", crds + "/fins.f.example.com", "", "", 200},
	}
	for _, st := range steps {
		if w := serve(h, st.method, st.path, st.contentType, st.body); w.Code != st.code {
			t.Fatalf("%s %s: %d %s", st.method, st.path, w.Code, w.Body)
		}
	}
	w := serve(h, "GET", crds+"/fins.f.example.com", "", "")
	for _, want := range []string{`"finalizers":["customresourcecleanup.apiextensions.k8s.io"]`, `"reason":"InstanceDeletionInProgress"`, `"message":"CustomResource deletion is in progress"`} {
		if !strings.Contains(w.Body.String(), want) {
			t.Errorf("CRD waiting for its objects lacks %s: %s", want, w.Body)
		}
	}
	if w := serve(h, "PATCH", fins+"/held", "application/merge-patch+json", `{"metadata":{"finalizers":null}}`); w.Code != http.StatusOK {
		t.Fatalf("removing the finalizer: %d %s", w.Code, w.Body)
	}
	if w := serve(h, "GET", crds+"/fins.f.example.com", "", ""); w.Code != http.StatusNotFound {
		t.Errorf("CRD after its last object went: %d %s", w.Code, w.Body)
	}
	if w := serve(h, "GET", fins, "", ""); w.Code != http.StatusNotFound {
		t.Errorf("resource after its CRD went: %d %s", w.Code, w.Body)
	}
}

// FuzzCustomResources writes arbitrary CRDs and custom objects of the
// widgets CRD (a schema with defaults, list maps and CEL rules): every one
// must get a Status, never a panic or a 5xx.
func FuzzCustomResources(f *testing.F) {
	widgets := "/apis/kubectl.example.com/v1/namespaces/default/widgets"
	crds := "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
	f.Add("POST", widgets, "application/json", `{"apiVersion":"kubectl.example.com/v1","kind":"Widget","metadata":{"name":"a"},"spec":{"color":"red","size":11,"ports":[{"name":"a","port":0}]}}`)
	f.Add("POST", widgets, "application/json", `{"apiVersion":"kubectl.example.com/v1","kind":"Widget","metadata":{"name":"b"},"spec":{"color":7,"ports":{"x":1},"size":null}}`)
	f.Add("PATCH", widgets+"/w", "application/merge-patch+json", `{"spec":{"ports":[{"port":"x"}]}}`)
	f.Add("PATCH", widgets+"/w?fieldManager=f", "application/apply-patch+yaml", `{"apiVersion":"kubectl.example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"ports":[{"name":1}]}}`)
	f.Add("PUT", widgets+"/w/status", "application/json", `{"apiVersion":"kubectl.example.com/v1","kind":"Widget","metadata":{"name":"w"},"status":[1]}`)
	f.Add("POST", crds, "application/json", `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"as.b.c"},"spec":{"group":"b.c","scope":"Cluster","names":{"plural":"as","kind":"A"},"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","properties":{"x":{"type":"array","items":{"type":"object","x-kubernetes-validations":[{"rule":"self.y.all(z, z > 0)"}]}}}}}}]}}`)
	f.Add("POST", crds, "application/json", `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"as.b.c"},"spec":{"versions":[{"schema":{"openAPIV3Schema":{"properties":{"x":{"default":{"y":[]},"x-kubernetes-list-map-keys":7}}}}}]}}`)
	f.Fuzz(func(t *testing.T, method, path, contentType, body string) {
		h := newTestServer(t)
		if w := serve(h, http.MethodPost, crds, "application/json", widgetsCRD(t)); w.Code != http.StatusCreated {
			t.Fatalf("CRD: %d %s", w.Code, w.Body)
		}
		serve(h, http.MethodPost, widgets, "application/json", `{"apiVersion":"kubectl.example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"color":"red","ports":[{"name":"a","port":1}]}}`)
		if !strings.HasPrefix(path, "/") {
			path = "/" + path
		}
		req, err := http.NewRequest(method, "http://kubeplay"+path, strings.NewReader(body))
		if err != nil {
			return
		}
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		// kube-apiserver answers an applied configuration that does not fit
		// the schema with a 500 of its field manager's error; so does kubeplay.
		typedPatch := rec.Code == http.StatusInternalServerError && strings.Contains(rec.Body.String(), "failed to create typed patch object")
		if rec.Code >= 500 && !typedPatch {
			t.Errorf("%s %s %q: %d %s", method, path, body, rec.Code, rec.Body)
		}
	})
}
