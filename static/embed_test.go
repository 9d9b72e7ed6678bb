package static_test

import (
	"io/fs"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"kubeplay/static"
)

func TestHandler(t *testing.T) {
	tests := []struct {
		path        string
		contentType string // Content-Type prefix
		built       bool   // only in a built dist/
	}{
		{path: "/", contentType: "text/html"},
		{path: "/kubeplay.js", contentType: "text/javascript"},
		{path: "/page.js", contentType: "text/javascript"},
		{path: "/boot.css", contentType: "text/css"},
		{path: "/dist/README.md"},
		{path: "/dist/kubeplay.wasm", contentType: "application/wasm", built: true},
		{path: "/dist/wasm_exec.js", contentType: "text/javascript", built: true},
		{path: "/dist/sqlite3.mjs", contentType: "text/javascript", built: true},
		{path: "/dist/sqlite3.wasm", contentType: "application/wasm", built: true},
	}
	_, err := fs.Stat(static.FS(), "dist/kubeplay.wasm")
	built := err == nil
	h := static.Handler()
	for _, tt := range tests {
		if tt.built && !built {
			continue // a fresh clone: the browser test fails on it, not this one
		}
		t.Run(tt.path, func(t *testing.T) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tt.path, nil))
			if rec.Code != http.StatusOK {
				t.Fatalf("status %d", rec.Code)
			}
			if got := rec.Header().Get("Content-Type"); !strings.HasPrefix(got, tt.contentType) {
				t.Errorf("Content-Type %q, want %s...", got, tt.contentType)
			}
			etag := rec.Header().Get("ETag")
			if !strings.HasPrefix(etag, `"`) {
				t.Fatalf("ETag %q", etag)
			}
			req := httptest.NewRequest(http.MethodGet, tt.path, nil)
			req.Header.Set("If-None-Match", etag)
			rec = httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != http.StatusNotModified {
				t.Errorf("revalidation: status %d, want 304", rec.Code)
			}
		})
	}
}

func TestHandler_notFound(t *testing.T) {
	rec := httptest.NewRecorder()
	static.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/dist/missing.wasm", nil))
	if rec.Code != http.StatusNotFound || rec.Header().Get("ETag") != "" {
		t.Errorf("status %d, ETag %q", rec.Code, rec.Header().Get("ETag"))
	}
}
