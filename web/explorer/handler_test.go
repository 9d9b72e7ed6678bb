package explorer_test

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"kubeplay/web/explorer"
	"kubeplay/web/internal/fakeapi"
	"kubeplay/web/internal/htmltest"
)

// The objects table shows the Table's priority-0 columns, as kubectl get
// does, with each name linking to the object's page; markup in cells is text.
func TestHandler_TableColumns(t *testing.T) {
	api := fakeapi.New()
	api.LoadDiscovery(t, "../../server/testdata/oracle/discovery")
	api.Set("/api/v1/namespaces/default/pods", http.StatusOK, `{"kind":"Table","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"9"},
		"columnDefinitions":[
			{"name":"Name","type":"string","format":"name","priority":0},
			{"name":"Ready","type":"string","priority":0},
			{"name":"Restarts","type":"string","priority":0},
			{"name":"IP","type":"string","priority":1},
			{"name":"Age","type":"string","priority":0}],
		"rows":[
			{"cells":["web","1/1",0,"10.0.0.1","5m"],"object":{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"web","namespace":"default"}}},
			{"cells":["<script>x()</script>","0/1",null,"<none>","1s"],"object":{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"<script>x()</script>","namespace":"default"}}}]}`)
	rec := httptest.NewRecorder()
	explorer.New(api).ServeHTTP(rec, httptest.NewRequestWithContext(t.Context(), "GET", "/?r=v1/pods&ns=default", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d:\n%s", rec.Code, rec.Body)
	}
	if strings.Contains(rec.Body.String(), "<script>x()") {
		t.Error("a name was written as markup")
	}
	doc := htmltest.Parse(t, rec.Body)
	table := doc.One(t, "table", "class", "objects")
	if got := htmltest.Texts(table.All("th")); !slices.Equal(got, []string{"Name", "Ready", "Restarts", "Age"}) {
		t.Errorf("columns %q", got)
	}
	var rows [][]string
	for _, tr := range table.One(t, "tbody").All("tr") {
		rows = append(rows, htmltest.Texts(tr.All("td")))
	}
	want := [][]string{{"web", "1/1", "0", "5m"}, {"<script>x()</script>", "0/1", "", "1s"}}
	if !slices.EqualFunc(rows, want, slices.Equal) {
		t.Errorf("rows %q, want %q", rows, want)
	}
	if href, _ := table.All("a")[1].Attr("href"); href != "/ui/object?name=%3Cscript%3Ex%28%29%3C%2Fscript%3E&ns=default&r=v1%2Fpods" {
		t.Errorf("link %q", href)
	}
	if got := api.Requests(); !slices.Contains(got, "GET /api/v1/namespaces/default/pods?limit=500") {
		t.Errorf("requests %q", got)
	}
}

// With no type selected, the page shows the cluster's newest Events, each
// linked to the page of the object it is about.
func TestHandler_RecentEvents(t *testing.T) {
	api := fakeapi.New()
	api.LoadDiscovery(t, "../../server/testdata/oracle/discovery")
	api.Set("/api/v1/events", http.StatusOK, `{"kind":"EventList","apiVersion":"v1","metadata":{},"items":[
		{"metadata":{"name":"b"},"type":"Normal","reason":"ScalingReplicaSet","message":"Scaled up replica set web-5d8f to 2",
		 "involvedObject":{"apiVersion":"apps/v1","kind":"Deployment","namespace":"default","name":"web"},
		 "source":{"component":"deployment-controller"},"lastTimestamp":"2026-01-01T00:00:02Z","count":1},
		{"metadata":{"name":"a"},"type":"Warning","reason":"FailedScheduling","message":"0/3 nodes are available",
		 "involvedObject":{"apiVersion":"v1","kind":"Pod","namespace":"default","name":"big"},
		 "reportingComponent":"default-scheduler","eventTime":"2026-01-01T00:00:01.000000Z"}]}`)
	rec := httptest.NewRecorder()
	explorer.New(api).ServeHTTP(rec, httptest.NewRequestWithContext(t.Context(), "GET", "/", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d:\n%s", rec.Code, rec.Body)
	}
	doc := htmltest.Parse(t, rec.Body)
	var rows []string
	for _, tr := range doc.One(t, "section", "class", "recent-events").All("tr", "class", "*") {
		rows = append(rows, strings.Join(strings.Fields(tr.Text()), " "))
	}
	want := []string{
		"Warning FailedScheduling 00:00:01 pod/big 0/3 nodes are available",
		"Normal ScalingReplicaSet 00:00:02 deployment/web Scaled up replica set web-5d8f to 2",
	}
	if !slices.Equal(rows, want) {
		t.Errorf("events:\n%q\nwant\n%q", rows, want)
	}
	var links []string
	for _, a := range doc.One(t, "section", "class", "recent-events").All("a") {
		href, _ := a.Attr("href")
		links = append(links, href)
	}
	if want := []string{"/ui/object?name=big&ns=default&r=v1%2Fpods", "/ui/object?name=web&ns=default&r=apps%2Fv1%2Fdeployments"}; !slices.Equal(links, want) {
		t.Errorf("links %q, want %q", links, want)
	}
}
