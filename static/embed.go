// Package static holds the browser mode of kubeplay as files: the page that
// boots the engine in the tab (index.html, page.js, boot.css), the transport
// module that talks to it (kubeplay.js), and in dist/ the built artifacts
// (kubeplay.wasm, Go's wasm_exec.js, SQLite WASM), made by build.sh.
//
// All paths are relative, so the files work mounted under any prefix of a
// server (the native server mounts them at /browser/) or copied out as a
// plain static site. When dist/ holds only its README (a fresh clone), the
// page loads and reports that the site has no browser build.
package static

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"sync"
)

//go:embed index.html page.js kubeplay.js boot.css all:dist
var files embed.FS

// FS returns the files, named as served ("index.html", "dist/kubeplay.wasm").
func FS() fs.FS { return files }

// Handler serves FS (as http.FileServerFS does: index.html for the
// directory, Content-Type from the extension, including application/wasm for
// .wasm, which WebAssembly streaming compilation requires) with a strong ETag
// per file: embedded files have no modification time, so without it a
// browser would download the engine again on every visit. Cache policy is the
// mounter's; a file is hashed the first time it is asked for.
func Handler() http.Handler {
	return &handler{fs: http.FileServerFS(files), etags: make(map[string]string)}
}

type handler struct {
	fs    http.Handler
	mu    sync.Mutex
	etags map[string]string // file name -> ETag
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(path.Clean("/"+r.URL.Path), "/")
	if name == "" || strings.HasSuffix(r.URL.Path, "/") {
		name = path.Join(name, "index.html")
	}
	if etag := h.etag(name); etag != "" {
		w.Header().Set("ETag", etag)
	}
	h.fs.ServeHTTP(w, r)
}

func (h *handler) etag(name string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if etag, ok := h.etags[name]; ok {
		return etag
	}
	data, err := fs.ReadFile(files, name)
	if err != nil {
		return "" // not a file: FileServer answers
	}
	sum := sha256.Sum256(data)
	etag := `"` + hex.EncodeToString(sum[:12]) + `"`
	h.etags[name] = etag
	return etag
}
