package openapi

import (
	"bytes"
	"crypto/sha512"
	"embed"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

//go:embed spec/v3/*.json
var documents embed.FS

// Handler serves /openapi/v2 and /openapi/v3: the index, and the documents
// of what kubeplay serves.
type Handler struct {
	served  func(schema.GroupVersion) bool
	off     func(schema.GroupVersion) []string
	modTime time.Time
	hashes  sync.Map // document path -> hash, computed on first use
	custom  sync.Map // document path -> customDoc, of CRD group versions
	// v2 is the v2 document with custom resources; nil without any.
	v2 atomic.Pointer[customV2]
}

type customDoc struct {
	doc  []byte
	hash string
}

// SetCustom serves doc as the document of path ("apis/example.com/v1"), a
// group version of custom resources; a nil doc stops serving it.
func (h *Handler) SetCustom(path string, doc []byte) {
	if doc == nil {
		h.custom.Delete(path)
		return
	}
	sum := sha512.Sum512(doc)
	h.custom.Store(path, customDoc{doc: doc, hash: strings.ToUpper(hex.EncodeToString(sum[:]))})
}

// NewHandler returns a handler for the documents of what served reports
// true for: a group version, or a group when Version is empty. The
// documents of /api, /apis and /version are always served; those of a
// group version leave out the resources off lists as switched off.
// modTime is the documents' Last-Modified time (kube-apiserver's is when it
// built them).
func NewHandler(served func(schema.GroupVersion) bool, off func(schema.GroupVersion) []string, modTime time.Time) *Handler {
	return &Handler{served: served, off: off, modTime: modTime}
}

// docFile maps "api/v1" or "apis/apps/v1" to its embedded file.
func docFile(path string) string {
	return "spec/v3/" + strings.ReplaceAll(path, "/", "__") + "_openapi.json"
}

// isServed reports whether the document of path ("api/v1", "apis/apps",
// "version") describes something kubeplay serves.
func (h *Handler) isServed(path string) bool {
	parts := strings.Split(path, "/")
	switch {
	case len(parts) == 1:
		return parts[0] == "api" || parts[0] == "apis" || parts[0] == "version"
	case len(parts) == 2 && parts[0] == "api":
		return h.served(schema.GroupVersion{Version: parts[1]})
	case len(parts) == 2 && parts[0] == "apis":
		return h.served(schema.GroupVersion{Group: parts[1]})
	case len(parts) == 3 && parts[0] == "apis":
		return h.served(schema.GroupVersion{Group: parts[1], Version: parts[2]})
	}
	return false
}

// document returns the document of path, and the key of its hash: path,
// with the resources left out if any.
func (h *Handler) document(path string) (doc []byte, key string, ok bool) {
	if c, ok := h.custom.Load(path); ok {
		return c.(customDoc).doc, path, true
	}
	if !h.isServed(path) {
		return nil, "", false
	}
	b, err := documents.ReadFile(docFile(path))
	if err != nil {
		return nil, "", false
	}
	var gv schema.GroupVersion
	switch parts := strings.Split(path, "/"); {
	case len(parts) == 2 && parts[0] == "api":
		gv = schema.GroupVersion{Version: parts[1]}
	case len(parts) == 3:
		gv = schema.GroupVersion{Group: parts[1], Version: parts[2]}
	default:
		return b, path, true
	}
	off := h.off(gv)
	if len(off) == 0 {
		return b, path, true
	}
	return withoutResources(b, "/"+path+"/", off), path + " without " + strings.Join(off, ","), true
}

// hash is kube-apiserver's ETag and ?hash= value of a document: its
// SHA-512 in upper-case hex.
func (h *Handler) hash(path string, doc []byte) string {
	if c, ok := h.custom.Load(path); ok {
		return c.(customDoc).hash
	}
	if v, ok := h.hashes.Load(path); ok {
		return v.(string)
	}
	sum := sha512.Sum512(doc)
	hash := strings.ToUpper(hex.EncodeToString(sum[:]))
	h.hashes.Store(path, hash)
	return hash
}

// ServeHTTP serves /openapi/v2 and /openapi/v3/...; other paths are not
// found.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/openapi/v2":
		h.serveV2(w, r)
	case r.URL.Path == "/openapi/v3" || strings.HasPrefix(r.URL.Path, "/openapi/v3/"):
		h.serveV3(w, r)
	default:
		http.NotFound(w, r)
	}
}

// serveV3 serves the part of the URL path after /openapi/v3 as
// kube-apiserver does: documents are JSON, revalidated by ETag unless
// requested with their current ?hash=, which makes them cacheable for a
// year; an outdated ?hash= redirects to the current one.
func (h *Handler) serveV3(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/openapi/v3" {
		h.serveIndex(w, r)
		return
	}
	rest := strings.TrimPrefix(r.URL.Path, "/openapi/v3/")
	doc, key, ok := h.document(rest)
	if !ok {
		w.WriteHeader(http.StatusNotFound) // kube-apiserver's 404 here has no body
		return
	}
	hash := h.hash(key, doc)
	header := w.Header()
	header.Set("Content-Type", "application/json")
	header.Set("Etag", `"`+hash+`"`)
	header.Set("Vary", "Accept")
	if want := r.URL.Query().Get("hash"); want != "" {
		if want != hash {
			header.Set("Location", "/openapi/v3/"+rest+"?hash="+hash)
			header.Set("Content-Length", "0")
			w.WriteHeader(http.StatusMovedPermanently)
			return
		}
		header.Set("Cache-Control", "public, immutable")
		header.Set("Expires", time.Now().AddDate(1, 0, 0).UTC().Format(time.RFC1123))
	}
	http.ServeContent(w, r, "", h.modTime, bytes.NewReader(doc))
}

type indexEntry struct {
	ServerRelativeURL string `json:"serverRelativeURL"`
}

// serveIndex lists the served documents with their current hashes. Like
// kube-apiserver, it leaves the content type to http.ServeContent, which
// sniffs text/plain.
func (h *Handler) serveIndex(w http.ResponseWriter, r *http.Request) {
	entries, _ := documents.ReadDir("spec/v3")
	paths := map[string]indexEntry{}
	for _, e := range entries {
		path := strings.ReplaceAll(strings.TrimSuffix(e.Name(), "_openapi.json"), "__", "/")
		if doc, key, ok := h.document(path); ok {
			paths[path] = indexEntry{ServerRelativeURL: "/openapi/v3/" + path + "?hash=" + h.hash(key, doc)}
		}
	}
	h.custom.Range(func(k, v any) bool {
		path := k.(string)
		paths[path] = indexEntry{ServerRelativeURL: "/openapi/v3/" + path + "?hash=" + v.(customDoc).hash}
		return true
	})
	b, _ := json.Marshal(map[string]any{"paths": paths})
	// Like kube-apiserver's, the index is always new: it changes with the
	// CRDs, and a client revalidating by date must not keep an old one.
	http.ServeContent(w, r, "", time.Now(), bytes.NewReader(b))
}
