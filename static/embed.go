// Package static holds the browser mode of kubeplay as files: the page that
// boots the engine in the tab (index.html, page.js, boot.css), the transport
// module that talks to it (kubeplay.js) and the Web Worker it runs in
// (worker.js, with cel.mjs, which loads the CEL module when first needed); embedded documentation examples (embed.js, embed.html,
// example.js, script.js, state.js) and a page of them (docs.html); the service worker
// for offline use (sw.js); and in dist/ the built artifacts (kubeplay.wasm,
// kubeplay-cel.wasm, Go's wasm_exec.js, SQLite WASM), made by build.sh.
//
// All paths are relative, so the files work mounted under any prefix of a
// server (the native server mounts them at /browser/) or copied out as a
// plain static site. When dist/ holds only its README (a fresh clone), the
// page loads and reports that the site has no browser build.
package static

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/andybalholm/brotli"
)

//go:embed index.html page.js kubeplay.js worker.js cel.mjs script.js state.js boot.css embed.html example.js embed.js docs.html sw.js all:dist
var files embed.FS

// FS returns the files, named as served ("index.html", "dist/kubeplay.wasm").
func FS() fs.FS { return files }

// Handler serves FS (as http.FileServerFS does: index.html for the
// directory, Content-Type from the extension, including application/wasm for
// .wasm, which WebAssembly streaming compilation requires) with a strong ETag
// per file: embedded files have no modification time, so without it a
// browser would download the engine again on every visit. Where build.sh left
// a precompressed copy (name.br, name.gz) and the client accepts its
// encoding, the copy is sent instead; the page's own text files (sources,
// not built) are compressed the first time they are asked for. Cache policy
// is the mounter's; a file is hashed the first time it is asked for.
func Handler() http.Handler {
	return &handler{fs: http.FileServerFS(files), etags: make(map[string]string), made: make(map[string][]byte)}
}

// encodings are the precompressed variants, best first, with how to make
// one.
var encodings = []struct {
	name, suffix string
	compress     func(io.Writer) io.WriteCloser
}{
	{"br", ".br", func(w io.Writer) io.WriteCloser { return brotli.NewWriterLevel(w, brotli.BestCompression) }},
	{"gzip", ".gz", func(w io.Writer) io.WriteCloser { z, _ := gzip.NewWriterLevel(w, gzip.BestCompression); return z }},
}

type handler struct {
	fs    http.Handler
	mu    sync.Mutex
	etags map[string]string // file name -> ETag
	made  map[string][]byte // compressed copies made here, by their name (page.js.br)
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(path.Clean("/"+r.URL.Path), "/")
	if name == "" || strings.HasSuffix(r.URL.Path, "/") {
		name = path.Join(name, "index.html")
	}
	if h.serveCompressed(w, r, name) {
		return
	}
	if etag := h.etag(name); etag != "" {
		w.Header().Set("ETag", etag)
	}
	h.fs.ServeHTTP(w, r)
}

// serveCompressed sends a precompressed copy of name if there is one the
// client accepts, and reports whether it did.
func (h *handler) serveCompressed(w http.ResponseWriter, r *http.Request, name string) bool {
	for _, enc := range encodings {
		if !accepts(r.Header.Get("Accept-Encoding"), enc.name) {
			continue
		}
		var f io.ReadSeeker
		etag := h.etag(name + enc.suffix)
		if etag != "" {
			file, err := files.Open(name + enc.suffix)
			if err != nil {
				continue
			}
			defer file.Close()
			// Embedded files are seekable.
			f = file.(io.ReadSeeker)
		} else if data := h.compressed(r, name, enc.suffix, enc.compress); data != nil {
			f, etag = bytes.NewReader(data), etagOf(data)
		} else {
			continue
		}
		hdr := w.Header()
		hdr.Add("Vary", "Accept-Encoding")
		hdr.Set("Content-Encoding", enc.name)
		hdr.Set("Content-Type", mime.TypeByExtension(path.Ext(name)))
		hdr.Set("ETag", etag)
		// For the page's download progress, which counts decoded bytes.
		if info, err := fs.Stat(files, name); err == nil {
			hdr.Set("X-Decoded-Content-Length", strconv.FormatInt(info.Size(), 10))
		}
		// ServeContent answers ranges and If-None-Match.
		http.ServeContent(w, r, name, time.Time{}, f)
		return true
	}
	return false
}

// compressed returns a compressed copy of name, a text file of the page
// (HTML, JavaScript, CSS outside dist/), made once; nil for other files,
// and for .../index.html, which FileServer redirects to the directory.
func (h *handler) compressed(r *http.Request, name, suffix string, compress func(io.Writer) io.WriteCloser) []byte {
	switch path.Ext(name) {
	case ".html", ".js", ".css":
		if strings.HasPrefix(name, "dist/") || strings.HasSuffix(r.URL.Path, "/index.html") {
			return nil
		}
	default:
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if data, ok := h.made[name+suffix]; ok {
		return data
	}
	raw, err := fs.ReadFile(files, name)
	if err != nil {
		return nil // not a file: FileServer answers
	}
	var b bytes.Buffer
	w := compress(&b)
	w.Write(raw) // a bytes.Buffer does not fail
	w.Close()
	h.made[name+suffix] = b.Bytes()
	return b.Bytes()
}

// accepts reports whether an Accept-Encoding header lists coding with a
// non-zero quality.
func accepts(header, coding string) bool {
	for _, part := range strings.Split(header, ",") {
		c, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(c), coding) {
			continue
		}
		q, ok := strings.CutPrefix(strings.TrimSpace(params), "q=")
		if !ok {
			return true
		}
		weight, err := strconv.ParseFloat(q, 64)
		return err == nil && weight > 0
	}
	return false
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
	etag := etagOf(data)
	h.etags[name] = etag
	return etag
}

// etagOf is a strong ETag for data.
func etagOf(data []byte) string {
	sum := sha256.Sum256(data)
	return `"` + hex.EncodeToString(sum[:12]) + `"`
}
