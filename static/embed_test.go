package static_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/andybalholm/brotli"

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
		{path: "/worker.js", contentType: "text/javascript"},
		{path: "/cel.mjs", contentType: "text/javascript"},
		{path: "/page.js", contentType: "text/javascript"},
		{path: "/boot.css", contentType: "text/css"},
		{path: "/dist/README.md"},
		{path: "/dist/kubeplay.wasm", contentType: "application/wasm", built: true},
		{path: "/dist/kubeplay-cel.wasm", contentType: "application/wasm", built: true},
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

// TestHandler_precompressed checks the compressed copies of a built file
// (made by build.sh) and of one of the page's own (made by the handler).
func TestHandler_precompressed(t *testing.T) {
	for _, name := range []string{"dist/wasm_exec.js", "page.js"} {
		t.Run(name, func(t *testing.T) { testCompressed(t, name) })
	}
	// FileServer redirects .../index.html to the directory, compressed
	// or not.
	req := httptest.NewRequest(http.MethodGet, "/index.html", nil)
	req.Header.Set("Accept-Encoding", "br")
	rec := httptest.NewRecorder()
	static.Handler().ServeHTTP(rec, req)
	if rec.Code != http.StatusMovedPermanently {
		t.Errorf("/index.html: status %d, want 301", rec.Code)
	}
}

func testCompressed(t *testing.T, name string) {
	raw, err := fs.ReadFile(static.FS(), name)
	if err != nil {
		t.Skip("no browser build in dist/ (a fresh clone): the browser test fails on it, not this one")
	}
	decoders := map[string]func(io.Reader) (io.Reader, error){
		"gzip": func(r io.Reader) (io.Reader, error) { return gzip.NewReader(r) },
		"br":   func(r io.Reader) (io.Reader, error) { return brotli.NewReader(r), nil },
		"":     func(r io.Reader) (io.Reader, error) { return r, nil },
	}
	tests := []struct {
		acceptEncoding, want string
	}{
		{"gzip, deflate, br, zstd", "br"},
		{"gzip, deflate", "gzip"},
		{"br;q=0, gzip;q=0.5", "gzip"},
		{"gzip;q=0", ""},
		{"", ""},
	}
	h := static.Handler()
	for _, tt := range tests {
		t.Run(tt.acceptEncoding, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, "/"+name, nil)
			req.Header.Set("Accept-Encoding", tt.acceptEncoding)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if got := rec.Header().Get("Content-Encoding"); rec.Code != http.StatusOK || got != tt.want {
				t.Fatalf("status %d, Content-Encoding %q, want %q", rec.Code, got, tt.want)
			}
			if got := rec.Header().Get("Content-Type"); !strings.HasPrefix(got, "text/javascript") {
				t.Errorf("Content-Type %q", got)
			}
			r, err := decoders[tt.want](rec.Body)
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(r)
			if err != nil || !bytes.Equal(body, raw) {
				t.Errorf("decoded body differs from %s (err %v)", name, err)
			}
			if tt.want == "" {
				return
			}
			if vary := rec.Header().Get("Vary"); vary != "Accept-Encoding" {
				t.Errorf("Vary %q", vary)
			}
			req.Header.Set("If-None-Match", rec.Header().Get("ETag"))
			rec = httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != http.StatusNotModified {
				t.Errorf("revalidation: status %d, want 304", rec.Code)
			}
		})
	}
}
