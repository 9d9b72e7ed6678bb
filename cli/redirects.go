package cli

import (
	"errors"
	"fmt"
	"net/http"
)

// followRedirects answers req as an http.Client with transport rt would,
// following redirects (the engine redirects an outdated /openapi/v3 ?hash=)
// with the requests the client would make: up to 10; after a 301, 302 or
// 303 a GET (HEAD stays HEAD) without the body and its Content-* headers,
// after a 307 or 308 the same request again; the original headers and a
// Referer. Not an http.Client, because using one links its network
// transport (TLS, HTTP/2: 2 MB of wasm) into the browser's engine, which
// never needs it.
// The in-process console sends no credentials, which the client would drop
// on the way to another host.
func followRedirects(rt http.RoundTripper, req *http.Request) (*http.Response, error) {
	first, withBody := req, true
	for hops := 0; ; hops++ {
		res, err := rt.RoundTrip(req)
		if err != nil {
			return nil, err
		}
		method := req.Method
		switch res.StatusCode {
		case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther:
			if method != http.MethodHead {
				method = http.MethodGet
			}
			withBody = false
		case http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		default:
			return res, nil
		}
		loc := res.Header.Get("Location")
		if loc == "" {
			return res, nil
		}
		res.Body.Close()
		if hops == 10 {
			return nil, errors.New("stopped after 10 redirects")
		}
		u, err := req.URL.Parse(loc)
		if err != nil {
			return nil, fmt.Errorf("failed to parse Location header %q: %v", loc, err)
		}
		next, err := http.NewRequestWithContext(first.Context(), method, u.String(), nil)
		if err != nil {
			return nil, err
		}
		for k, v := range first.Header {
			switch http.CanonicalHeaderKey(k) {
			case "Content-Encoding", "Content-Language", "Content-Location", "Content-Type":
				if !withBody {
					continue // they describe the body
				}
			}
			next.Header[k] = v
		}
		if withBody && first.GetBody != nil {
			if next.Body, err = first.GetBody(); err != nil {
				return nil, err
			}
			next.GetBody, next.ContentLength = first.GetBody, first.ContentLength
		}
		if next.Header.Get("Referer") == "" {
			next.Header.Set("Referer", req.URL.String())
		}
		req = next
	}
}
