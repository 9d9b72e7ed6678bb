package server_test

import (
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"kubeplay/server"
)

// TestRuntimeConfig switches a group version and a single resource off and
// on again, with the answers kube-apiserver v1.35 gave when started with
// --runtime-config=batch/v1=false and --runtime-config=batch/v1/cronjobs=false.
func TestRuntimeConfig(t *testing.T) {
	rc, err := server.ParseRuntimeConfig("batch/v1=false")
	if err != nil {
		t.Fatal(err)
	}
	srv := newTestServerWith(t, server.Options{RuntimeConfig: rc}).(*server.Server)
	body := func(rec *httptest.ResponseRecorder) string { return strings.TrimSpace(rec.Body.String()) }

	// A switched-off group version is no longer there at all.
	for _, path := range []string{"/apis/batch/v1/namespaces/default/jobs", "/apis/batch/v1", "/apis/batch"} {
		if rec := get(t, srv, http.MethodGet, path, nil); rec.Code != http.StatusNotFound || body(rec) != "404 page not found" {
			t.Errorf("GET %s = %d %q", path, rec.Code, body(rec))
		}
	}
	if rec := get(t, srv, http.MethodGet, "/apis", nil); strings.Contains(rec.Body.String(), `"batch"`) {
		t.Errorf("/apis lists batch: %s", rec.Body)
	}
	if rec := get(t, srv, http.MethodGet, "/openapi/v3", nil); strings.Contains(rec.Body.String(), "apis/batch/v1") || rec.Code != http.StatusOK {
		t.Errorf("/openapi/v3 = %d, lists batch/v1: %s", rec.Code, rec.Body)
	}
	if rec := get(t, srv, http.MethodGet, "/openapi/v3/apis/batch/v1", nil); rec.Code != http.StatusNotFound {
		t.Errorf("/openapi/v3/apis/batch/v1 = %d", rec.Code)
	}

	// A single resource: the rest of its group version stays.
	rc, err = server.ParseRuntimeConfig("batch/v1/cronjobs=false")
	if err != nil {
		t.Fatal(err)
	}
	srv.SetRuntimeConfig(rc)
	var list struct {
		Resources []struct{ Name string } `json:"resources"`
	}
	if err := json.Unmarshal(get(t, srv, http.MethodGet, "/apis/batch/v1", nil).Body.Bytes(), &list); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range list.Resources {
		names = append(names, r.Name)
	}
	if strings.Join(names, ",") != "jobs,jobs/status" {
		t.Errorf("/apis/batch/v1 lists %v, want jobs, jobs/status", names)
	}
	want := `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the server could not find the requested resource","reason":"NotFound","details":{},"code":404}`
	for _, path := range []string{"/apis/batch/v1/cronjobs", "/apis/batch/v1/namespaces/default/cronjobs/x"} {
		if rec := get(t, srv, http.MethodGet, path, nil); rec.Code != http.StatusNotFound || body(rec) != want {
			t.Errorf("GET %s = %d %s", path, rec.Code, body(rec))
		}
	}
	if rec := get(t, srv, http.MethodGet, "/apis/batch/v1/namespaces/default/jobs", nil); rec.Code != http.StatusOK {
		t.Errorf("jobs = %d %s", rec.Code, rec.Body)
	}
	// The OpenAPI document keeps the paths and schemas of jobs only, as the
	// oracle's (recorded under --runtime-config=batch/v1/cronjobs=false).
	checkOpenAPIWithoutCronJobs(t, srv)

	// Back to the defaults.
	srv.SetRuntimeConfig(nil)
	if rec := get(t, srv, http.MethodGet, "/apis/batch/v1/namespaces/default/cronjobs", nil); rec.Code != http.StatusOK {
		t.Errorf("cronjobs = %d %s", rec.Code, rec.Body)
	}
}

func checkOpenAPIWithoutCronJobs(t *testing.T, h http.Handler) {
	t.Helper()
	var want struct{ Paths, Schemas []string }
	raw, err := os.ReadFile(filepath.Join("testdata", "oracle", "openapi_batch_v1_without_cronjobs.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	rec := get(t, h, http.MethodGet, "/openapi/v3/apis/batch/v1", nil)
	var doc struct {
		Paths      map[string]any
		Components struct{ Schemas map[string]any }
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if got := slices.Sorted(maps.Keys(doc.Paths)); !slices.Equal(got, want.Paths) {
		t.Errorf("paths %v\nwant %v", got, want.Paths)
	}
	if got := slices.Sorted(maps.Keys(doc.Components.Schemas)); !slices.Equal(got, want.Schemas) {
		t.Errorf("schemas %v\nwant %v", got, want.Schemas)
	}
	// The index names the document by its hash, the ETag.
	var index struct {
		Paths map[string]struct{ ServerRelativeURL string }
	}
	if err := json.Unmarshal(get(t, h, http.MethodGet, "/openapi/v3", nil).Body.Bytes(), &index); err != nil {
		t.Fatal(err)
	}
	if url, etag := index.Paths["apis/batch/v1"].ServerRelativeURL, rec.Header().Get("Etag"); !strings.HasSuffix(url, "?hash="+strings.Trim(etag, `"`)) {
		t.Errorf("index has %s, document's ETag %s", url, etag)
	}
}

func TestParseRuntimeConfig(t *testing.T) {
	for _, tc := range []struct {
		in      string
		wantErr bool
	}{
		{"", false},
		{"api/all=false,v1=true", false},
		{"api/v1=false", false},
		{"batch/v1", false},
		{"autoscaling/v1/horizontalpodautoscalers=false", false},
		{"batch/v1=maybe", true},
		{"nope.example.com/v1=true", true},
		// A beta group version of kube-apiserver v1.35 that kubeplay does
		// not implement.
		{"resource.k8s.io/v1beta2=true", true},
		// One that older releases served.
		{"networking.k8s.io/v1beta1=true", false},
	} {
		if _, err := server.ParseRuntimeConfig(tc.in); (err != nil) != tc.wantErr {
			t.Errorf("ParseRuntimeConfig(%q) error = %v", tc.in, err)
		}
	}
}
