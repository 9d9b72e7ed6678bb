// Package origin guards the UI's forms that change something.
package origin

import (
	"net/http"
	"net/url"
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
