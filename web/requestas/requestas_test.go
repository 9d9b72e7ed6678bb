package requestas_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"kubeplay/web/requestas"
)

func post(t *testing.T, s *requestas.Switch, form url.Values, header ...string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest("POST", requestas.Path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	return rec
}

func TestSwitch_ServeHTTP(t *testing.T) {
	s := &requestas.Switch{}
	rec := post(t, s, url.Values{"user": {" alice "}, "groups": {"devs, qa testers"}, "back": {"/ui/requests?user=alice"}})
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/ui/requests?user=alice" {
		t.Errorf("answered %d to %q", rec.Code, rec.Header().Get("Location"))
	}
	if got := s.Current().String(); got != "alice (devs, qa, testers)" {
		t.Errorf("switched to %q", got)
	}
	// The redirect never leaves the site.
	for _, back := range []string{"https://example.com/", "//example.com/", "/\\example.com", ""} {
		rec := post(t, s, url.Values{"user": {"alice"}, "back": {back}})
		if loc := rec.Header().Get("Location"); loc != "/" {
			t.Errorf("back %q: redirected to %q", back, loc)
		}
	}
	// Another site's page cannot switch.
	if rec := post(t, s, url.Values{"user": {"mallory"}}, "Origin", "https://evil.example"); rec.Code != http.StatusForbidden || s.Current().User != "alice" {
		t.Errorf("cross-origin: %d, acting as %q", rec.Code, s.Current().User)
	}
	post(t, s, url.Values{"user": {"alice"}, "groups": {"devs"}, "stop": {"1"}})
	if got := s.Current(); got.User != "" || got.Groups != nil {
		t.Errorf("after stop: %+v", got)
	}
	rec = httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest("GET", requestas.Path, nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("GET: %d", rec.Code)
	}
}

func TestImpersonating(t *testing.T) {
	var got http.Header
	api := requestas.Impersonating(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = r.Header }))
	send := func(id requestas.Identity) http.Header {
		req := httptest.NewRequest("GET", "/api/v1/pods", nil)
		req.Header.Add("Impersonate-Group", "stale")
		req = req.WithContext(requestas.NewContext(req.Context(), id, "/"))
		api.ServeHTTP(httptest.NewRecorder(), req)
		return got
	}
	h := send(requestas.Identity{User: "bob", Groups: []string{"devs", "qa"}})
	if h.Get("Impersonate-User") != "bob" || strings.Join(h.Values("Impersonate-Group"), ",") != "devs,qa" {
		t.Errorf("as bob: %v", h)
	}
	// Without an identity the request goes as it came.
	if h := send(requestas.Identity{}); h.Get("Impersonate-User") != "" || strings.Join(h.Values("Impersonate-Group"), ",") != "stale" {
		t.Errorf("as the UI: %v", h)
	}
}
