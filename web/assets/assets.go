// Package assets holds the UI's static files (CSS and a little JavaScript),
// embedded into the binary, and serves them. Pages link to them with URL;
// web mounts Handler at Prefix.
package assets

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Prefix is the URL path under which the assets are served.
const Prefix = "/ui/assets/"

//go:embed *.css *.js
var files embed.FS

// FS returns the embedded files, named as under Prefix ("style.css").
func FS() fs.FS { return files }

// URL returns the path a page links to for the asset name ("style.css").
func URL(name string) string { return Prefix + name }

// Handler serves the assets below Prefix, GET and HEAD only, with a strong
// ETag per file so that a cache can revalidate cheaply (cache policy itself is
// set where the handler is mounted). Unknown names get 404.
type Handler struct {
	// files are read, and their ETags computed, at the first request, not
	// at the server's start: editor.js alone is 330 KB, copied and hashed,
	// which a server that answers no UI request never needs.
	files func() map[string]asset
}

type asset struct {
	data []byte
	etag string
}

// NewHandler returns the handler; it reads the embedded files once, when
// it is first asked for one.
func NewHandler() *Handler {
	return &Handler{files: sync.OnceValue(readAll)}
}

func readAll() map[string]asset {
	all := map[string]asset{}
	_ = fs.WalkDir(files, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(files, name)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		all[name] = asset{data: data, etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
		return nil
	})
	return all
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	a, ok := h.files()[strings.TrimPrefix(r.URL.Path, Prefix)]
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("ETag", a.etag)
	// ServeContent sets Content-Type from the extension and answers
	// If-None-Match, HEAD and Range requests.
	http.ServeContent(w, r, r.URL.Path, time.Time{}, bytes.NewReader(a.data))
}
