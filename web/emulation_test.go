//go:build !js

package web_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"kubeplay/server"
	"kubeplay/web"
	"kubeplay/web/internal/htmltest"
)

// TestSite_emulation switches the emulated release from the header and the
// emulation page, and checks that the header, the page, the explorer's
// types (discovery) and the API follow at once.
func TestSite_emulation(t *testing.T) {
	sb, _ := openSandbox(t)
	site := web.New(sb)
	send := func(method, target, body string, header ...string) *httptest.ResponseRecorder {
		t.Helper()
		req := httptest.NewRequest(method, target, strings.NewReader(body))
		if method == "POST" {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		rec := httptest.NewRecorder()
		site.ServeHTTP(rec, req)
		return rec
	}
	selected := func(doc htmltest.Node, form string, name string) string {
		t.Helper()
		return doc.One(t, "form", "class", form).Selected(t, name)
	}
	// extensions is the group of the old Ingress, served up to v1.21.
	extensions := func(doc htmltest.Node) bool { return doc.Has("details", "data-group", "extensions") }

	explorer := htmltest.Parse(t, send("GET", "/", "").Body)
	if v := selected(explorer, "emulation", "version"); v != "1.35" {
		t.Errorf("header selects %q, want 1.35", v)
	}
	if extensions(explorer) {
		t.Error("explorer of v1.35 lists the extensions group")
	}

	// The header's form: back to the page it was on.
	page := "/?r=v1/configmaps&ns=default"
	form := url.Values{"version": {"1.21"}, "back": {page}}
	if rec := send("POST", "/ui/emulation", form.Encode()); rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != page {
		t.Fatalf("switching to 1.21: %d %q %s", rec.Code, rec.Header().Get("Location"), rec.Body)
	}
	if sb.Version() != 21 {
		t.Errorf("sandbox emulates 1.%d, want 1.21", sb.Version())
	}
	explorer = htmltest.Parse(t, send("GET", page, "").Body)
	if v := selected(explorer, "emulation", "version"); v != "1.21" {
		t.Errorf("header selects %q after the switch, want 1.21", v)
	}
	if !extensions(explorer) {
		t.Error("explorer of v1.21 lacks the extensions group (Ingress)")
	}
	rec := send("POST", "/apis/extensions/v1beta1/namespaces/default/ingresses",
		`{"metadata":{"name":"old"},"spec":{"backend":{"serviceName":"web","servicePort":80}}}`, "Content-Type", "application/json")
	if rec.Code != http.StatusCreated || !strings.Contains(rec.Header().Get("Warning"), "extensions/v1beta1 Ingress is deprecated in v1.14+, unavailable in v1.22+") {
		t.Errorf("creating an extensions/v1beta1 Ingress in 1.21: %d %q %s", rec.Code, rec.Header().Get("Warning"), rec.Body)
	}

	// The page: no gate kubeplay follows is in 1.21.
	doc := htmltest.Parse(t, send("GET", "/ui/emulation", "").Body)
	if h := doc.One(t, "h1").Text(); !strings.Contains(h, "v1.21") {
		t.Errorf("page title %q", h)
	}
	if m := doc.One(t, "p", "class", "missing-gates").Text(); !strings.Contains(m, "WatchList") || !strings.Contains(m, "CBORServingAndStorage") {
		t.Errorf("missing gates: %q", m)
	}

	// The page's form switches release and gates at once.
	form = url.Values{"version": {"1.28"}, "WatchList": {"true"}, "back": {"/ui/emulation"}}
	if rec := send("POST", "/ui/emulation", form.Encode()); rec.Code != http.StatusSeeOther {
		t.Fatalf("switching to 1.28: %d %s", rec.Code, rec.Body)
	}
	if !sb.FeatureGates()[server.WatchList] || sb.SwitchedFeatureGates()[server.WatchList] != true {
		t.Errorf("WatchList: %v, switched %v; want switched on", sb.FeatureGates(), sb.SwitchedFeatureGates())
	}
	doc = htmltest.Parse(t, send("GET", "/ui/emulation", "").Body)
	if v := selected(doc, "emulation-form", "WatchList"); v != "true" {
		t.Errorf("page selects WatchList=%q, want true", v)
	}
	if v := selected(doc, "emulation-form", "version"); v != "1.28" {
		t.Errorf("page selects release %q, want 1.28", v)
	}
	explorer = htmltest.Parse(t, send("GET", "/", "").Body)
	if extensions(explorer) {
		t.Error("explorer of v1.28 still lists the extensions group")
	}
	// The header's form leaves the gates as switched; the page's, without
	// a value, at the release's default (off in 1.28), and a gate the
	// release lacks (so the page does not list it) as switched.
	send("POST", "/ui/emulation", url.Values{"version": {"1.29"}}.Encode())
	if sb.Version() != 29 || !sb.SwitchedFeatureGates()[server.WatchList] {
		t.Errorf("after the header's switch: 1.%d, gates %v", sb.Version(), sb.SwitchedFeatureGates())
	}
	send("POST", "/ui/emulation", url.Values{"version": {"1.35"}, "AllowUnsafeMalformedObjectDeletion": {"true"}}.Encode())
	send("POST", "/ui/emulation", url.Values{"version": {"1.28"}, "WatchList": {""}}.Encode())
	if g := sb.SwitchedFeatureGates(); len(g) != 1 || !g[server.AllowUnsafeMalformedObjectDeletion] {
		t.Errorf("after switching WatchList to its default in 1.28: switched %v, want AllowUnsafeMalformedObjectDeletion kept", g)
	}
	send("POST", "/ui/emulation", url.Values{"version": {"1.35"}, "AllowUnsafeMalformedObjectDeletion": {""}}.Encode())
	send("POST", "/ui/emulation", url.Values{"version": {"1.28"}}.Encode())
	if len(sb.SwitchedFeatureGates()) != 0 || sb.FeatureGates()[server.WatchList] {
		t.Errorf("after switching WatchList to its default: %v, switched %v", sb.FeatureGates(), sb.SwitchedFeatureGates())
	}

	for _, tc := range []struct {
		name, body, origin string
		want               int
		wantBody           string
	}{
		{"release not emulated", "version=1.15", "", 400, `unsupported Kubernetes version "1.15": kubeplay emulates 1.16 to 1.35`},
		{"not a release", "version=latest", "", 400, `invalid Kubernetes version "latest": want 1.MINOR`},
		{"gate not boolean", "version=1.30&WatchList=maybe", "", 400, `invalid syntax`},
		{"another site's page", "version=1.16", "https://elsewhere.example", 403, "cross-origin"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var h []string
			if tc.origin != "" {
				h = []string{"Origin", tc.origin}
			}
			rec := send("POST", "/ui/emulation", tc.body, h...)
			if rec.Code != tc.want || !strings.Contains(rec.Body.String(), tc.wantBody) {
				t.Errorf("%d %q, want %d %q", rec.Code, rec.Body, tc.want, tc.wantBody)
			}
			if sb.Version() != 28 {
				t.Errorf("the sandbox switched to 1.%d", sb.Version())
			}
		})
	}
	if rec := send("DELETE", "/ui/emulation", ""); rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Allow") != "GET, HEAD, POST" {
		t.Errorf("DELETE: %d, Allow %q", rec.Code, rec.Header().Get("Allow"))
	}
}

// TestSite_noEmulation: a cluster that cannot switch releases has no
// switch in the header and no emulation page.
func TestSite_noEmulation(t *testing.T) {
	site := web.New(sandbox(newAPI(t)))
	rec := httptest.NewRecorder()
	site.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	if doc := htmltest.Parse(t, rec.Body); doc.Has("form", "class", "emulation") {
		t.Error("the header has the emulation switch")
	}
	rec = httptest.NewRecorder()
	site.ServeHTTP(rec, httptest.NewRequest("GET", "/ui/emulation", nil))
	if rec.Code != http.StatusNotFound {
		t.Errorf("GET /ui/emulation: %d, want 404", rec.Code)
	}
}
