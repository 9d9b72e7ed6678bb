package object_test

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"kubeplay/web/internal/fakeapi"
	"kubeplay/web/internal/htmltest"
	"kubeplay/web/object"
)

// A Deployment-like object written by an applier and a controller: a
// container owned by key, a finalizer owned by value, a shared label.
const managed = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x<b>y","namespace":"default","uid":"u1",
	"labels":{"app":"<script>alert(1)</script>","shared":"yes"},
	"finalizers":["example.com/hold"],
	"managedFields":[
		{"manager":"kubectl","operation":"Apply","apiVersion":"v1","time":"2026-01-01T00:00:00Z","fieldsType":"FieldsV1",
		 "fieldsV1":{"f:metadata":{"f:labels":{"f:app":{},"f:shared":{}},"f:finalizers":{"v:\"example.com/hold\"":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"c\"}":{".":{},"f:image":{},"f:name":{}}}}}},
		{"manager":"ctrl","operation":"Update","subresource":"status","apiVersion":"v1","time":"2026-01-01T00:00:01Z","fieldsType":"FieldsV1",
		 "fieldsV1":{"f:metadata":{"f:labels":{"f:shared":{}}}}}]},
	"spec":{"containers":[{"name":"c","image":"nginx"}]}}`

func TestHandler_ManagedFields(t *testing.T) {
	api := fakeapi.New()
	api.LoadDiscovery(t, "../../server/testdata/oracle/discovery")
	api.Set("/api/v1/namespaces/default/configmaps/x<b>y", http.StatusOK, managed)
	rec := httptest.NewRecorder()
	object.New(api, nil).ServeHTTP(rec, httptest.NewRequestWithContext(t.Context(), "GET",
		object.URL("v1/configmaps", "default", "x<b>y", object.TabFields), nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d:\n%s", rec.Code, rec.Body)
	}
	if body := rec.Body.String(); strings.Contains(body, "<script>alert") || strings.Contains(body, "<b>y") {
		t.Error("object values written as markup")
	}
	doc := htmltest.Parse(t, rec.Body)
	owned := map[string]string{}
	for _, l := range doc.All("span", "class", "yl") {
		o, _ := l.Attr("data-owners")
		owned[strings.ReplaceAll(l.Text(), " :", ":")] = o // Text spaces the token spans apart
	}
	for line, want := range map[string]string{
		"app: <script>alert(1)</script>": "0",
		"shared: \"yes\"":                "0 1",
		"- example.com/hold":             "0",
		"- image: nginx":                 "0",
		"name: c":                        "0",
		"kind: ConfigMap":                "",
	} {
		if got, ok := owned[line]; !ok || got != want {
			t.Errorf("line %q owned by %q (found %v), want %q", line, got, ok, want)
		}
	}
	if doc.Has("span", "class", "yl", "data-owners", "0 1") && len(doc.All("span", "class", "shared")) != 1 {
		t.Error("the shared label is not marked shared")
	}
	if slices.ContainsFunc(doc.All("span", "class", "y-key"), func(n htmltest.Node) bool { return n.Text() == "managedFields" }) {
		t.Error("managedFields printed in the fields view")
	}
	rows := doc.One(t, "table", "class", "managers").One(t, "tbody").All("tr")
	if got := htmltest.Texts(rows[1].All("td")); !slices.Equal(got, []string{"ctrl", "Update", "status", "v1", "2026-01-01T00:00:01Z", "1"}) {
		t.Errorf("ctrl row %q", got)
	}
	if title, _ := doc.One(t, "span", "data-owners", "0 1").Attr("title"); !strings.Contains(title, "ctrl · Update /status · v1") {
		t.Errorf("hover %q", title)
	}

	// The per-manager view: what ctrl owns.
	rec = httptest.NewRecorder()
	object.New(api, nil).ServeHTTP(rec, httptest.NewRequestWithContext(t.Context(), "GET",
		object.URL("v1/configmaps", "default", "x<b>y", object.TabFields)+"&manager=ctrl", nil))
	doc = htmltest.Parse(t, rec.Body)
	if got := htmltest.Texts(doc.One(t, "details", "class", "owned-fields").All("li")); !slices.Equal(got, []string{".metadata.labels.shared"}) {
		t.Errorf("ctrl owns %q", got)
	}
	if n := len(doc.All("span", "class", "yl")) - len(doc.All("span", "class", "dim")); n != 1 {
		t.Errorf("%d lines not dimmed, want 1", n)
	}
}

func TestHandler_YAMLAndErrors(t *testing.T) {
	api := fakeapi.New()
	api.LoadDiscovery(t, "../../server/testdata/oracle/discovery")
	api.Set("/api/v1/namespaces/default/configmaps/x", http.StatusOK, managed)
	h := object.New(api, nil)
	get := func(target string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequestWithContext(t.Context(), "GET", target, nil))
		return rec
	}

	rec := get(object.URL("v1/configmaps", "default", "x", ""))
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d", rec.Code)
	}
	doc := htmltest.Parse(t, rec.Body)
	pre := doc.One(t, "pre", "class", "yaml")
	if !slices.Contains(htmltest.Texts(pre.All("span", "class", "y-key")), "managedFields") {
		t.Error("the YAML tab leaves out managedFields")
	}
	if got := htmltest.Texts(pre.All("span", "class", "y-str")); !slices.Contains(got, "<script>alert(1)</script>") {
		t.Errorf("strings %q", got)
	}
	if doc.Has("span", "data-owners", "*") {
		t.Error("owner marks on the YAML tab")
	}
	if cur, _ := doc.One(t, "a", "aria-current", "page").Attr("href"); cur != object.URL("v1/configmaps", "default", "x", "") {
		t.Errorf("current tab %q", cur)
	}

	for target, want := range map[string]int{
		object.URL("v1/configmaps", "default", "missing", ""): http.StatusNotFound,
		object.URL("v1/configmaps", "Bad_NS", "x", ""):        http.StatusBadRequest,
		object.URL("v1/configmaps", "default", "a/b", ""):     http.StatusBadRequest,
		object.URL("v1/nosuchthings", "default", "x", ""):     http.StatusNotFound,
		object.URL("not a ref", "default", "x", ""):           http.StatusBadRequest,
	} {
		rec := get(target)
		if rec.Code != want {
			t.Errorf("GET %s: %d, want %d", target, rec.Code, want)
			continue
		}
		htmltest.Parse(t, rec.Body).One(t, "div", "role", "alert")
	}
}

func TestHandler_Events(t *testing.T) {
	api := fakeapi.New()
	api.LoadDiscovery(t, "../../server/testdata/oracle/discovery")
	api.Set("/api/v1/namespaces/default/configmaps/x<b>y", http.StatusOK, managed)
	api.Set("/api/v1/namespaces/default/events", http.StatusOK, `{"kind":"EventList","apiVersion":"v1","metadata":{},"items":[
		{"metadata":{"name":"b"},"type":"Normal","reason":"Scheduled","message":"Successfully assigned default/x to node-2",
		 "eventTime":"2026-01-01T00:00:02.000000Z","reportingComponent":"default-scheduler","reportingInstance":"default-scheduler-kubeplay",
		 "series":{"count":3,"lastObservedTime":"2026-01-01T00:00:05.000000Z"}},
		{"metadata":{"name":"a"},"type":"Warning","reason":"BackOff","message":"Back-off restarting failed container",
		 "source":{"component":"kubelet","host":"node-2"},"firstTimestamp":"2026-01-01T00:00:01Z","lastTimestamp":"2026-01-01T00:00:01Z","count":1}]}`)
	rec := httptest.NewRecorder()
	object.New(api, nil).ServeHTTP(rec, httptest.NewRequestWithContext(t.Context(), "GET",
		object.URL("v1/configmaps", "default", "x<b>y", object.TabYAML), nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d:\n%s", rec.Code, rec.Body)
	}
	if !slices.Contains(api.Requests(), "GET /api/v1/namespaces/default/events?fieldSelector=involvedObject.uid%3Du1") {
		t.Errorf("the events were not selected by the object's uid: %q", api.Requests())
	}
	doc := htmltest.Parse(t, rec.Body)
	var rows []string
	for _, tr := range doc.All("tr", "class", "*") {
		rows = append(rows, strings.Join(strings.Fields(tr.Text()), " "))
	}
	want := []string{
		"Warning BackOff 00:00:01 kubelet, node-2 Back-off restarting failed container",
		"Normal Scheduled 00:00:05 (×3) default-scheduler, default-scheduler-kubeplay Successfully assigned default/x to node-2",
	}
	if !slices.Equal(rows, want) {
		t.Errorf("events:\n%q\nwant\n%q", rows, want)
	}
	// The time of day shown, the whole timestamp in its title.
	if title, _ := doc.One(t, "time", "datetime", "2026-01-01T00:00:01Z").Attr("title"); title != "2026-01-01T00:00:01Z" {
		t.Errorf("the time's title %q", title)
	}
}
