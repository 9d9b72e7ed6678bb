//go:build !js

package web_test

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"

	"kubeplay/web"
)

// The object page's History tab shows each version the store keeps, newest
// first, with the request that wrote it and a diff against the version
// before; a deleted object keeps its history.
func TestObject_History(t *testing.T) {
	sb, st := openSandbox(t)
	h := web.New(sb)
	send := func(method, path, body string) {
		t.Helper()
		req := httptest.NewRequestWithContext(t.Context(), method, path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("User-Agent", "kubectl/v1.35.4 (linux/amd64) kubernetes/7b8c6cf")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 300 {
			t.Fatalf("%s %s: %d %s", method, path, rec.Code, rec.Body)
		}
	}
	const cms = "/api/v1/namespaces/default/configmaps"
	send("POST", cms, `{"metadata":{"name":"app"},"data":{"color":"blue","size":"m"}}`)
	send("PUT", cms+"/app", `{"metadata":{"name":"app"},"data":{"color":"green","size":"m"}}`)
	send("DELETE", cms+"/app", "")

	doc := page(t, h, "/ui/object?r=v1%2Fconfigmaps&ns=default&name=app&tab=history", http.StatusOK)
	revs := doc.All("li", "class", "*")
	var changes []string
	for _, li := range revs {
		changes = append(changes, li.One(t, "span", "class", "change").Text())
	}
	if !slices.Equal(changes, []string{"deleted", "updated", "created"}) {
		t.Fatalf("changes %q", changes)
	}
	if w := strings.Join(strings.Fields(revs[1].One(t, "span", "class", "writer").Text()), " "); !strings.HasPrefix(w, "by system:anonymous PUT /api/v1/namespaces/default/configmaps/app kubectl/v1.35.4") {
		// A sandbox opened with no access settings serves anonymous
		// requests as the cluster administrator's.
		t.Errorf("the update's writer %q", w)
	}
	var diff []string
	for _, l := range revs[1].One(t, "pre", "class", "diff").All("span", "class", "*") {
		if c, _ := l.Attr("class"); c != "diff-same" {
			diff = append(diff, l.Text())
		}
	}
	// (Text collapses the YAML's indentation.)
	if want := []string{"- color: blue", "+ color: green", "… 5 unchanged lines"}; !slices.Equal(diff, want) {
		t.Errorf("the update's diff %q, want %q", diff, want)
	}
	rev, _ := revs[1].Attr("data-revision")
	if href, _ := revs[1].One(t, "a").Attr("href"); href != "/?r=v1%2Fconfigmaps&rv="+rev+"&ns=default" {
		t.Errorf("the cluster then: %q", href)
	}
	// The cluster then: the ConfigMap in the list at that revision, its
	// link to its history.
	then := page(t, h, "/?r=v1%2Fconfigmaps&rv="+rev+"&ns=default", http.StatusOK)
	if got := then.One(t, "a", "class", "api-path").Text(); !strings.Contains(got, "resourceVersion="+rev+"&resourceVersionMatch=Exact") {
		t.Errorf("the list behind the past: %q", got)
	}
	var listed []string
	for _, a := range then.One(t, "table", "class", "objects").All("a") {
		listed = append(listed, a.Text())
	}
	if !slices.Contains(listed, "app") {
		t.Errorf("at revision %s the list shows %q", rev, listed)
	}
	// The timeline to scrub: every revision up to now, at this one, in
	// the same namespace.
	scrub := then.One(t, "form", "class", "revision-scrub")
	slider := scrub.One(t, "input", "type", "range")
	at, _ := slider.Attr("value")
	lo, _ := slider.Attr("min")
	hi, _ := slider.Attr("max")
	ns, _ := scrub.One(t, "input", "name", "ns").Attr("value")
	if at != rev || lo != "1" || mustAtoi(t, hi) < mustAtoi(t, rev) || ns != "default" {
		t.Errorf("the scrubber: at %s of %s..%s in %q, want at %s", at, lo, hi, ns, rev)
	}
	created, _ := revs[2].Attr("data-revision")
	// Compacted past the update, the history starts from the object as of
	// the horizon, and the cluster before it is gone.
	if err := st.Compact(t.Context(), mustAtoi(t, rev)); err != nil {
		t.Fatal(err)
	}
	doc = page(t, h, "/ui/object?r=v1%2Fconfigmaps&ns=default&name=app&tab=history", http.StatusOK)
	changes = nil
	for _, li := range doc.All("li", "class", "*") {
		changes = append(changes, li.One(t, "span", "class", "change").Text())
	}
	if !slices.Equal(changes, []string{"deleted", "as of the horizon"}) {
		t.Errorf("after compaction, changes %q", changes)
	}
	gone := page(t, h, "/?r=v1%2Fconfigmaps&rv="+created+"&ns=default", http.StatusOK)
	if alert := gone.One(t, "", "role", "alert").Text(); !strings.Contains(alert, "(410)") {
		t.Errorf("a list at a compacted revision: %q", alert)
	}
	if !strings.Contains(gone.One(t, "p", "class", "hint").Text(), "was compacted") {
		t.Error("the 410 is not explained")
	}
}

func mustAtoi(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
