package openapi

import (
	"crypto/sha512"
	"embed"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

//go:embed spec/v3/*.json
var documents embed.FS

// Handler serves /openapi/v3 (the index) and /openapi/v3/<api path> (one
// group version's document) for the group versions served reports true for.
type Handler struct {
	served func(schema.GroupVersion) bool
	hashes sync.Map // document path -> hash, computed on first use
}

// NewHandler returns a handler for the documents of the served group versions.
func NewHandler(served func(schema.GroupVersion) bool) *Handler {
	return &Handler{served: served}
}

// docFile maps "api/v1" or "apis/apps/v1" to its embedded file.
func docFile(path string) string {
	return "spec/v3/" + strings.ReplaceAll(path, "/", "__") + "_openapi.json"
}

func groupVersion(path string) (schema.GroupVersion, bool) {
	parts := strings.Split(path, "/")
	switch {
	case len(parts) == 2 && parts[0] == "api":
		return schema.GroupVersion{Version: parts[1]}, true
	case len(parts) == 3 && parts[0] == "apis":
		return schema.GroupVersion{Group: parts[1], Version: parts[2]}, true
	}
	return schema.GroupVersion{}, false
}

func (h *Handler) document(path string) ([]byte, bool) {
	gv, ok := groupVersion(path)
	if !ok || !h.served(gv) {
		return nil, false
	}
	b, err := documents.ReadFile(docFile(path))
	return b, err == nil
}

func (h *Handler) hash(path string, doc []byte) string {
	if v, ok := h.hashes.Load(path); ok {
		return v.(string)
	}
	sum := sha512.Sum512(doc)
	hash := strings.ToUpper(hex.EncodeToString(sum[:]))
	h.hashes.Store(path, hash)
	return hash
}

// ServeHTTP serves rest, the part of the URL path after /openapi/v3.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rest := strings.Trim(strings.TrimPrefix(r.URL.Path, "/openapi/v3"), "/")
	if rest == "" {
		h.serveIndex(w)
		return
	}
	doc, ok := h.document(rest)
	if !ok {
		http.NotFound(w, r)
		return
	}
	hash := h.hash(rest, doc)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Etag", `"`+hash+`"`)
	if r.URL.Query().Get("hash") == hash {
		w.Header().Set("Cache-Control", "public, immutable")
	} else {
		w.Header().Set("Cache-Control", "no-cache, private")
	}
	if match := r.Header.Get("If-None-Match"); match == `"`+hash+`"` {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Write(doc)
}

type indexEntry struct {
	ServerRelativeURL string `json:"serverRelativeURL"`
}

func (h *Handler) serveIndex(w http.ResponseWriter) {
	entries, _ := documents.ReadDir("spec/v3")
	paths := map[string]indexEntry{}
	for _, e := range entries {
		path := strings.ReplaceAll(strings.TrimSuffix(e.Name(), "_openapi.json"), "__", "/")
		if doc, ok := h.document(path); ok {
			paths[path] = indexEntry{ServerRelativeURL: "/openapi/v3/" + path + "?hash=" + h.hash(path, doc)}
		}
	}
	b, _ := json.Marshal(map[string]any{"paths": paths})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-cache, private")
	w.Write(b)
}
