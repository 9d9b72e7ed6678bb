// Package fakeapi is a canned Kubernetes API for UI tests: an http.Handler
// that answers GET requests from a table of path → (code, JSON body) and
// records every request it receives. Unknown paths get the real API server's
// 404 Status.
package fakeapi

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/duration"
)

// API is the fake. The zero value is not usable; call New.
type API struct {
	mu        sync.Mutex
	responses map[string]response
	requests  []string
}

type response struct {
	code int
	body []byte
}

// NotFound is the body kube-apiserver sends for a path it does not serve.
const NotFound = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the server could not find the requested resource","reason":"NotFound","details":{},"code":404}`

// New returns an API serving nothing but 404s.
func New() *API {
	return &API{responses: map[string]response{}}
}

// LoadDiscovery serves the legacy discovery documents recorded from a real
// kube-apiserver in dir: a file "apis__apps__v1.json" answers GET
// /apis/apps/v1. Files starting with "aggregated_" are skipped.
func (a *API) LoadDiscovery(t testing.TB, dir string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no discovery documents in %s: %v", dir, err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		if strings.HasPrefix(name, "aggregated_") {
			continue
		}
		body, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		a.Set("/"+strings.ReplaceAll(name, "__", "/"), http.StatusOK, string(body))
	}
}

// Set makes GET path (without query) answer code and body.
func (a *API) Set(path string, code int, body string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.responses[path] = response{code: code, body: []byte(body)}
}

// Requests returns "METHOD /path?query" for every request received so far.
func (a *API) Requests() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.requests...)
}

// ServeHTTP answers from the table.
func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	a.requests = append(a.requests, r.Method+" "+r.URL.RequestURI())
	resp, ok := a.responses[r.URL.Path]
	a.mu.Unlock()
	if !ok || (r.Method != http.MethodGet && r.Method != http.MethodHead) {
		resp = response{code: http.StatusNotFound, body: []byte(NotFound)}
	}
	body := resp.body
	if strings.Contains(r.Header.Get("Accept"), "as=Table") && resp.code == http.StatusOK {
		body = asTable(body)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(resp.code)
	_, _ = w.Write(body)
}

// asTable turns a list into the Table the API server's default printer
// makes of it (Name and Age; the age as of now), each row carrying the
// item's metadata. Anything else is returned unchanged.
func asTable(body []byte) []byte {
	var list struct {
		Metadata map[string]any `json:"metadata"`
		Items    []struct {
			Metadata map[string]any `json:"metadata"`
		} `json:"items"`
	}
	if json.Unmarshal(body, &list) != nil || list.Items == nil {
		return body
	}
	rows := []map[string]any{}
	for _, item := range list.Items {
		age := "<unknown>"
		if ts, _ := item.Metadata["creationTimestamp"].(string); ts != "" {
			if t, err := time.Parse(time.RFC3339, ts); err == nil {
				age = duration.HumanDuration(time.Since(t))
			}
		}
		rows = append(rows, map[string]any{
			"cells":  []any{item.Metadata["name"], age},
			"object": map[string]any{"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": item.Metadata},
		})
	}
	b, _ := json.Marshal(map[string]any{
		"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": list.Metadata,
		"columnDefinitions": []map[string]any{
			{"name": "Name", "type": "string", "format": "name", "priority": 0},
			{"name": "Age", "type": "string", "priority": 0},
		},
		"rows": rows,
	})
	return b
}

// List returns the JSON of a list as the API server sends it: kind,
// apiVersion, metadata.resourceVersion and items.
func List(kind, apiVersion, resourceVersion string, items ...map[string]any) string {
	if items == nil {
		items = []map[string]any{}
	}
	b, err := json.Marshal(map[string]any{
		"kind":       kind,
		"apiVersion": apiVersion,
		"metadata":   map[string]any{"resourceVersion": resourceVersion},
		"items":      items,
	})
	if err != nil {
		panic(err) // maps of strings always marshal
	}
	return string(b)
}

// Object returns a minimal list item: metadata with name, namespace (omitted
// when empty) and creationTimestamp (RFC 3339).
func Object(namespace, name, created string) map[string]any {
	md := map[string]any{"name": name, "creationTimestamp": created}
	if namespace != "" {
		md["namespace"] = namespace
	}
	return map[string]any{"metadata": md}
}
