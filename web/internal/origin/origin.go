// Package origin guards the UI's forms that change something.
package origin

import (
	"net/http"
	"net/url"
	"strings"
)

// Same refuses writes another site's page makes a visitor's browser send:
// the Origin, when sent, must be this host.
func Same(r *http.Request) bool {
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

// ParseForm parses the form of a POST that changes something, answering
// 403 to another site's page and 400 to a malformed form; it reports
// whether the request may go on.
func ParseForm(w http.ResponseWriter, r *http.Request) bool {
	if !Same(r) {
		http.Error(w, "cross-origin writes are refused", http.StatusForbidden)
		return false
	}
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return false
	}
	return true
}

// LocalPath is back if it is a path on this site, else "/": a form's
// redirect to the page it came from never leads elsewhere.
func LocalPath(back string) string {
	if !strings.HasPrefix(back, "/") || strings.HasPrefix(back, "//") || strings.ContainsAny(back, "\\\r\n") {
		return "/"
	}
	return back
}
