package watch_test

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"kubeplay/web/internal/fakeapi"
	"kubeplay/web/internal/htmltest"
	"kubeplay/web/watch"
)

func TestHandler_Page(t *testing.T) {
	api := fakeapi.New()
	api.LoadDiscovery(t, "../../server/testdata/oracle/discovery")
	get := func(target string) (int, htmltest.Node) {
		rec := httptest.NewRecorder()
		watch.New(api).ServeHTTP(rec, httptest.NewRequestWithContext(t.Context(), "GET", target, nil))
		return rec.Code, htmltest.Parse(t, rec.Body)
	}

	code, doc := get(watch.Path + "?r=v1/configmaps&ns=default&labelSelector=app%3Dweb&resourceVersion=7&sendInitialEvents=1")
	if code != http.StatusOK {
		t.Fatalf("status %d", code)
	}
	section := doc.One(t, "section", "class", "watch")
	if req, _ := section.Attr("data-request"); req != "/api/v1/namespaces/default/configmaps?allowWatchBookmarks=true&labelSelector=app%3Dweb&resourceVersion=7&resourceVersionMatch=NotOlderThan&sendInitialEvents=true&watch=1" {
		t.Errorf("watch request %q", req)
	}
	var refs []string
	for _, o := range doc.One(t, "select", "name", "r").All("option") {
		v, _ := o.Attr("value")
		refs = append(refs, v)
	}
	if !slices.Contains(refs, "apps/v1/deployments") || slices.Contains(refs, "v1/bindings") {
		t.Errorf("watchable types %q", refs)
	}
	if _, ok := doc.One(t, "option", "selected", "*").Attr("value"); !ok {
		t.Error("the chosen type is not selected")
	}
	doc.One(t, "button", "id", "pause")
	doc.One(t, "ol", "id", "events")

	// Nothing chosen: the form only.
	if _, doc := get(watch.Path); doc.Has("ol", "id", "events") {
		t.Error("events list without a watch")
	}
	// A bad namespace or type is the API's error.
	for target, want := range map[string]int{
		watch.Path + "?r=v1/configmaps&ns=Bad_NS": http.StatusBadRequest,
		watch.Path + "?r=v1/nothings":             http.StatusNotFound,
	} {
		code, doc := get(target)
		if code != want || doc.Has("ol", "id", "events") {
			t.Errorf("GET %s: %d, want %d and no watch", target, code, want)
		}
	}
}
