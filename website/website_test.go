package website_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"kubeplay/playground"
	"kubeplay/server"
	"kubeplay/store"
	"kubeplay/website"
)

func TestNew(t *testing.T) {
	st, err := store.Open(t.Context(), ":memory:", store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sb, err := playground.Open(t.Context(), playground.Options{Store: st})
	if err != nil {
		st.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	// stub answers with its name and the path it was given.
	stub := func(name string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, name+" "+r.URL.Path) })
	}
	full := website.Options{Sandbox: sb, Playground: stub("playground"), Browser: stub("browser")}
	hosted, rbac := full, full
	hosted.Hosted = true
	rbac.Anonymous = server.AnonymousRBAC
	const emulationSwitch = `action="/ui/emulation"`
	for _, tc := range []struct {
		name      string
		opts      website.Options
		path      string
		status    int
		body      string // what the body contains
		notBody   string // what it must not contain ("": anything)
		noCaching bool   // the browser files' headers
	}{
		{name: "browser files", opts: full, path: "/browser/page.js", status: 200, body: "browser /page.js", noCaching: true},
		{name: "playground API", opts: full, path: "/playground/v1/sandboxes", status: 200, body: "playground /playground/v1/sandboxes"},
		{name: "a sandbox's API", opts: full, path: "/sandboxes/x/api", status: 200, body: "playground /sandboxes/x/api"},
		{name: "the root's API", opts: full, path: "/api/v1/namespaces/default", status: 200, body: `"kind":"Namespace"`},
		{name: "no browser files", opts: website.Options{Sandbox: sb}, path: "/browser/page.js", status: 404, notBody: "browser"},
		{name: "no playground API", opts: website.Options{Sandbox: sb}, path: "/playground/v1/sandboxes", status: 404, notBody: "playground /"},
		{name: "emulation switch", opts: full, path: "/", status: 200, body: emulationSwitch},
		{name: "no emulation switch when hosted", opts: hosted, path: "/", status: 200, notBody: emulationSwitch},
		{name: "no emulation switch with RBAC", opts: rbac, path: "/", status: 200, notBody: emulationSwitch},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			website.New(tc.opts).ServeHTTP(w, httptest.NewRequest("GET", tc.path, nil))
			body := w.Body.String()
			if w.Code != tc.status || !strings.Contains(body, tc.body) || tc.notBody != "" && strings.Contains(body, tc.notBody) {
				t.Errorf("GET %s: %d %.300s; want %d with %q, without %q", tc.path, w.Code, body, tc.status, tc.body, tc.notBody)
			}
			cc, nosniff := w.Header().Get("Cache-Control"), w.Header().Get("X-Content-Type-Options")
			if tc.noCaching && (cc != "no-cache" || nosniff != "nosniff") {
				t.Errorf("GET %s: Cache-Control %q, X-Content-Type-Options %q", tc.path, cc, nosniff)
			}
		})
	}
}
