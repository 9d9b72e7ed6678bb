package sandboxes_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"kubeplay/playground"
	"kubeplay/playground/api"
	"kubeplay/web/internal/htmltest"
	"kubeplay/web/sandboxes"
)

// newPage returns the page over a playground API, and that API.
func newPage(t *testing.T) (*sandboxes.Handler, http.Handler) {
	t.Helper()
	m, err := playground.NewManager(playground.ManagerOptions{InMemory: true, Limits: playground.Limits{RequestsPerSecond: -1}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	play := api.New(m)
	return sandboxes.New(play), play
}

func get(t *testing.T, h http.Handler, target string) htmltest.Node {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequestWithContext(t.Context(), "GET", target, nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", target, rec.Code, rec.Body)
	}
	return htmltest.Parse(t, rec.Body)
}

func post(t *testing.T, h http.Handler, form url.Values, header ...string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequestWithContext(t.Context(), "POST", sandboxes.Path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// redirected checks a 303 back to the page and returns the page it leads to.
func redirected(t *testing.T, h http.Handler, rec *httptest.ResponseRecorder) htmltest.Node {
	t.Helper()
	loc := rec.Header().Get("Location")
	if rec.Code != http.StatusSeeOther || !strings.HasPrefix(loc, sandboxes.Path+"?notice=") {
		t.Fatalf("POST: %d, Location %q: %s", rec.Code, loc, rec.Body)
	}
	return get(t, h, loc)
}

func TestHandler_lifecycle(t *testing.T) {
	h, _ := newPage(t)
	doc := get(t, h, sandboxes.Path)
	if !doc.Has("p", "class", "empty") || doc.Has("table", "class", "sandbox-list") {
		t.Fatal("a new playground lists sandboxes")
	}
	options := htmltest.Texts(doc.One(t, "form", "class", "create").All("option"))
	if len(options) < 20 || options[0] != "empty" || !strings.Contains(strings.Join(options, ","), "set up by dry-run") {
		t.Errorf("create options %q", options)
	}

	doc = redirected(t, h, post(t, h, url.Values{"action": {"create"}, "scenario": {"dry-run"}}))
	notice := doc.One(t, "p", "class", "notice").Text()
	rows := doc.All("tr", "data-id", "*")
	if len(rows) != 1 || !strings.HasSuffix(notice, ", set up by the scenario dry-run (every step passed).") {
		t.Fatalf("%d rows, notice %q", len(rows), notice)
	}
	id, _ := rows[0].Attr("data-id")
	if !strings.Contains(notice, id) {
		t.Errorf("notice %q names another sandbox than %s", notice, id)
	}
	// Its controllers, the simulated ones marked.
	if ctrl := rows[0].One(t, "td", "class", "controllers").Text(); !strings.Contains(ctrl, "kubelet simulated") || !strings.Contains(ctrl, "garbageCollector") {
		t.Errorf("controllers %q", ctrl)
	}
	links := map[string]bool{}
	for _, a := range rows[0].All("a") {
		href, _ := a.Attr("href")
		links[href] = true
	}
	if !links["/playground/v1/sandboxes/"+id+"/kubeconfig"] || !links["/playground/v1/sandboxes/"+id+"/snapshot"] {
		t.Errorf("links %v", links)
	}

	if !doc.Has("form", "class", "run-own") {
		t.Error("no form to run one's own scenario")
	}

	doc = redirected(t, h, post(t, h, url.Values{"action": {"reset"}, "id": {id}}))
	if n := doc.One(t, "p", "class", "notice").Text(); n != "Reset sandbox "+id+": it is empty again." {
		t.Errorf("notice %q", n)
	}
	doc = redirected(t, h, post(t, h, url.Values{"action": {"delete"}, "id": {id}}))
	if doc.Has("tr", "data-id", id) {
		t.Error("the deleted sandbox is listed")
	}
	// An error of the API shows on the page.
	rec := post(t, h, url.Values{"action": {"delete"}, "id": {id}})
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "DELETE /playground/v1/sandboxes/"+id+": 404 sandbox &#34;"+id+"&#34; not found") {
		t.Errorf("deleting it again: %d %s", rec.Code, rec.Body)
	}
	if rec := post(t, h, url.Values{"action": {"create"}}, "Origin", "https://elsewhere.example"); rec.Code != http.StatusForbidden {
		t.Errorf("a cross-origin create: %d", rec.Code)
	}
}

func TestHandler_unavailable(t *testing.T) {
	doc := get(t, sandboxes.New(nil), sandboxes.Path)
	// The header's request-as switch is the only form left.
	if !strings.Contains(doc.One(t, "p", "class", "unavailable").Text(), "playground API") || len(doc.All("form")) != len(doc.All("form", "class", "request-as")) {
		t.Error("without a playground API the page offers actions")
	}
}

// TestHandler_emulate switches a sandbox's emulated release and a feature
// gate from its row.
func TestHandler_emulate(t *testing.T) {
	h, _ := newPage(t)
	doc := redirected(t, h, post(t, h, url.Values{"action": {"create"}}))
	row := doc.One(t, "tr", "data-id", "*")
	id, _ := row.Attr("data-id")
	if v := row.Selected(t, "version"); v != "1.35" {
		t.Errorf("a new sandbox's row selects %q, want 1.35", v)
	}
	if g := row.One(t, "select", "name", "gate.WatchList").All("option")[0].Text(); g != "on" {
		t.Errorf("WatchList shown %q in 1.35, want on", g)
	}

	// 1.28: WatchList alpha, switched on here.
	doc = redirected(t, h, post(t, h, url.Values{"action": {"emulate"}, "id": {id}, "version": {"1.28"},
		"gate": {"WatchList", "AllowUnsafeMalformedObjectDeletion"}, "gate.WatchList": {"on"}, "gate.AllowUnsafeMalformedObjectDeletion": {""}}))
	if n := doc.One(t, "p", "class", "notice").Text(); n != "Sandbox "+id+" emulates Kubernetes v1.28." {
		t.Errorf("notice %q", n)
	}
	row = doc.One(t, "tr", "data-id", id)
	if v := row.Selected(t, "version"); v != "1.28" {
		t.Errorf("row selects %q after the switch, want 1.28", v)
	}
	if g := row.One(t, "select", "name", "gate.WatchList").All("option")[0].Text(); g != "on" {
		t.Errorf("WatchList shown %q in 1.28 switched on, want on", g)
	}
	if row.Has("select", "name", "gate.CBORServingAndStorage") {
		t.Error("1.28 shows CBORServingAndStorage, a gate of 1.32")
	}

	rec := post(t, h, url.Values{"action": {"emulate"}, "id": {id}, "version": {"1.99"}})
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "400 emulatedVersion: unsupported Kubernetes version &#34;1.99&#34;") {
		t.Errorf("switching to 1.99: %d %s", rec.Code, rec.Body)
	}
}
