package editor_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"kubeplay/web/editor"
	"kubeplay/web/internal/fakeapi"
	"kubeplay/web/internal/htmltest"
)

const conflict = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
	"message":"Apply failed with 2 conflicts: conflicts with \"alice\" using v1:\n- .data.a\nconflicts with \"kubectl-client-side-apply\" using v1:\n- .spec.containers[name=\"c\"].image",
	"reason":"Conflict","details":{"causes":[
		{"reason":"FieldManagerConflict","message":"conflict with \"alice\" using v1","field":".data.a"},
		{"reason":"FieldManagerConflict","message":"conflict with \"kubectl-client-side-apply\" using v1","field":".spec.containers[name=\"c\"].image"}]},"code":409}`

const live = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"default"},
	"data":{"a":"live"},"spec":{"containers":[{"name":"c","image":"live:1"}]}}`

// api answers writes with code and body (and a Warning), and reads from a
// fake API with the recorded discovery documents.
func api(t *testing.T, code int, body string) (http.Handler, *[]*http.Request) {
	fake := fakeapi.New()
	fake.LoadDiscovery(t, "../../server/testdata/oracle/discovery")
	fake.Set("/api/v1/namespaces/default/pods/p", http.StatusOK, live)
	var writes []*http.Request
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			fake.ServeHTTP(w, r)
			return
		}
		writes = append(writes, r)
		w.Header().Add("Warning", `299 - "unknown field \"spec.bogus\""`)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_, _ = w.Write([]byte(body))
	}), &writes
}

func post(t *testing.T, h http.Handler, form url.Values, header ...string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequestWithContext(t.Context(), "POST", editor.Path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

const applied = `apiVersion: v1
kind: Pod
metadata:
  name: p
data:
  a: mine
  b: "<script>alert(1)</script>"
spec:
  containers:
  - name: c
    image: mine:2
`

func TestHandler_ApplyConflict(t *testing.T) {
	a, writes := api(t, http.StatusConflict, conflict)
	rec := post(t, editor.New(a), url.Values{"action": {"apply"}, "yaml": {applied}, "fieldManager": {"bob"},
		"dryRun": {"1"}, "fieldValidation": {"Warn"}})
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d", rec.Code)
	}
	if len(*writes) != 1 {
		t.Fatalf("%d writes", len(*writes))
	}
	w := (*writes)[0]
	if got := w.Method + " " + w.URL.RequestURI() + " " + w.Header.Get("Content-Type"); got != "PATCH /api/v1/namespaces/default/pods/p?dryRun=All&fieldManager=bob&fieldValidation=Warn application/apply-patch+yaml" {
		t.Errorf("sent %s", got)
	}
	if strings.Contains(rec.Body.String(), "<script>alert") {
		t.Error("the YAML was written as markup")
	}
	doc := htmltest.Parse(t, rec.Body)
	if got := doc.One(t, "p", "class", "warning").Text(); got != `Warning: 299 - "unknown field \"spec.bogus\""` {
		t.Errorf("warning %q", got)
	}
	var rows []string
	for _, tr := range doc.One(t, "table", "class", "conflicts").One(t, "tbody").All("tr") {
		rows = append(rows, strings.Join(htmltest.Texts(tr.All("td")), " | "))
	}
	if want := []string{".data.a | alice", `.spec.containers[name="c"].image | kubectl-client-side-apply`}; !slices.Equal(rows, want) {
		t.Errorf("conflicts %q, want %q", rows, want)
	}
	ways := map[string]url.Values{}
	for _, f := range doc.All("form", "class", "way") {
		v := url.Values{}
		for _, in := range f.All("input") {
			name, _ := in.Attr("name")
			val, _ := in.Attr("value")
			v.Set(name, val)
		}
		cls, _ := f.Attr("class")
		ways[strings.TrimPrefix(strings.Fields(cls)[1], "way-")] = v
	}
	if f := ways["force"]; f.Get("force") != "1" || f.Get("yaml") != applied || f.Get("dryRun") != "1" {
		t.Errorf("force form %v", f)
	}
	if y := ways["drop"].Get("yaml"); strings.Contains(y, "mine") || !strings.Contains(y, "b: <script>") || ways["drop"].Get("force") != "" {
		t.Errorf("drop form sends %q", y)
	}
	if y := ways["adopt"].Get("yaml"); !strings.Contains(y, "a: live") || !strings.Contains(y, "image: live:1") || strings.Contains(y, "mine") {
		t.Errorf("adopt form sends %q", y)
	}
}

func TestHandler_Writes(t *testing.T) {
	tests := []struct {
		action, yaml, want string
	}{
		{"create", applied, "POST /api/v1/namespaces/default/pods application/json"},
		{"replace", applied, "PUT /api/v1/namespaces/default/pods/p application/json"},
		{"merge", `{"data":{"a":null}}`, "PATCH /api/v1/namespaces/default/pods/p application/merge-patch+json"},
		{"strategic", "data:\n  a: x\n", "PATCH /api/v1/namespaces/default/pods/p application/strategic-merge-patch+json"},
		{"json", `[{"op":"remove","path":"/data/a"}]`, "PATCH /api/v1/namespaces/default/pods/p application/json-patch+json"},
	}
	for _, tt := range tests {
		t.Run(tt.action, func(t *testing.T) {
			a, writes := api(t, http.StatusOK, live)
			rec := post(t, editor.New(a), url.Values{"action": {tt.action}, "yaml": {tt.yaml}, "r": {"v1/pods"}, "ns": {"default"}, "name": {"p"}})
			if len(*writes) != 1 {
				t.Fatalf("%d writes; page:\n%s", len(*writes), rec.Body)
			}
			w := (*writes)[0]
			if got := w.Method + " " + w.URL.RequestURI() + " " + w.Header.Get("Content-Type"); got != tt.want {
				t.Errorf("sent %s, want %s", got, tt.want)
			}
			doc := htmltest.Parse(t, rec.Body)
			if got := doc.One(t, "span", "class", "code").Text(); got != "200 OK" {
				t.Errorf("result %q", got)
			}
		})
	}
}

func TestHandler_CrossOrigin(t *testing.T) {
	a, writes := api(t, http.StatusOK, live)
	form := url.Values{"action": {"create"}, "yaml": {applied}}
	if rec := post(t, editor.New(a), form, "Origin", "https://evil.example"); rec.Code != http.StatusForbidden {
		t.Errorf("cross-origin POST: %d", rec.Code)
	}
	if rec := post(t, editor.New(a), form, "Sec-Fetch-Site", "cross-site"); rec.Code != http.StatusForbidden {
		t.Errorf("cross-site POST: %d", rec.Code)
	}
	if len(*writes) != 0 {
		t.Errorf("%d writes sent", len(*writes))
	}
}
