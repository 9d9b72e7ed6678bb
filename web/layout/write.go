package layout

import (
	"bytes"
	"net/http"
	"net/url"
	"strconv"

	"github.com/a-h/templ"
)

// Write renders page and sends it with code; a page that fails to render
// is a 500 with the error.
func Write(w http.ResponseWriter, r *http.Request, code int, page templ.Component) {
	var buf bytes.Buffer
	if err := page.Render(r.Context(), &buf); err != nil {
		http.Error(w, "rendering the page: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(code)
	_, _ = w.Write(buf.Bytes())
}

// OnlyGet answers 405 to any method but GET and HEAD, and reports whether
// the request may go on.
func OnlyGet(w http.ResponseWriter, r *http.Request) bool {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return true
	}
	w.Header().Set("Allow", "GET, HEAD")
	http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	return false
}

// sameOrigin refuses writes another site's page makes a visitor's browser
// send: the Origin, when sent, must be this host.
func sameOrigin(r *http.Request) bool {
	if r.Header.Get("Sec-Fetch-Site") == "cross-site" {
		return false
	}
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	u, err := url.Parse(o)
	return err == nil && u.Host == r.Host
}

// PostedForm reads the form of a POST from this site, answering 403 to
// another site's and 400 to a malformed one itself (ok false).
func PostedForm(w http.ResponseWriter, r *http.Request) (form url.Values, ok bool) {
	if !sameOrigin(r) {
		http.Error(w, "cross-origin writes are refused", http.StatusForbidden)
		return nil, false
	}
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return nil, false
	}
	return r.PostForm, true
}
