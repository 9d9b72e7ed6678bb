package web_test

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"kubeplay/playground"
	"kubeplay/playground/journal"
	"kubeplay/web"
	"kubeplay/web/internal/fakeapi"
	"kubeplay/web/internal/htmltest"
)

// discoveryDir holds discovery documents recorded from kube-apiserver v1.35.
const discoveryDir = "../server/testdata/oracle/discovery"

// fakeSandbox is an API with a journal in front, as a playground sandbox has.
type fakeSandbox struct {
	api     http.Handler
	journal *journal.Journal
}

func sandbox(api http.Handler) fakeSandbox {
	j := journal.New(journal.Limits{}, nil)
	return fakeSandbox{api: j.Handler(api), journal: j}
}

func (s fakeSandbox) Handler() http.Handler     { return s.api }
func (s fakeSandbox) Journal() *journal.Journal { return s.journal }
func (s fakeSandbox) DeletionJournal() *playground.DeletionJournal {
	return nil
}

// newAPI returns a fake API serving the recorded discovery documents, three
// namespaces, a few ConfigMaps and no Events.
func newAPI(t *testing.T) *fakeapi.API {
	t.Helper()
	api := fakeapi.New()
	api.LoadDiscovery(t, discoveryDir)
	created := time.Now().Add(-90 * time.Minute).UTC().Format(time.RFC3339)
	api.Set("/api/v1/namespaces", http.StatusOK, fakeapi.List("NamespaceList", "v1", "42",
		fakeapi.Object("", "default", created),
		fakeapi.Object("", "kube-public", created),
		fakeapi.Object("", "kube-system", created),
	))
	api.Set("/api/v1/namespaces/default/configmaps", http.StatusOK, fakeapi.List("ConfigMapList", "v1", "42",
		fakeapi.Object("default", "app-config", created),
		fakeapi.Object("default", "kube-root-ca.crt", created),
	))
	api.Set("/api/v1/configmaps", http.StatusOK, fakeapi.List("ConfigMapList", "v1", "42",
		fakeapi.Object("default", "app-config", created),
		fakeapi.Object("default", "kube-root-ca.crt", created),
		fakeapi.Object("kube-system", "coredns", created),
	))
	api.Set("/apis/apps/v1/namespaces/default/deployments", http.StatusOK, fakeapi.List("DeploymentList", "apps/v1", "42"))
	api.Set("/api/v1/events", http.StatusOK, fakeapi.List("EventList", "v1", "42"))
	return api
}

func do(t *testing.T, h http.Handler, method, target string, header ...string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequestWithContext(t.Context(), method, target, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// page GETs target and parses the HTML, checking the status code.
func page(t *testing.T, h http.Handler, target string, wantCode int) htmltest.Node {
	t.Helper()
	rec := do(t, h, http.MethodGet, target)
	if rec.Code != wantCode {
		t.Fatalf("GET %s: status %d, want %d; body:\n%s", target, rec.Code, wantCode, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Fatalf("GET %s: Content-Type %q", target, ct)
	}
	return htmltest.Parse(t, rec.Body)
}

func TestNew_Routes(t *testing.T) {
	tests := []struct {
		name      string
		method    string
		target    string
		header    []string
		wantCode  int
		wantType  string // Content-Type prefix
		wantBody  string // substring
		forwarded string // the request the API must have received; "" for none
	}{
		{name: "page", method: "GET", target: "/", wantCode: 200, wantType: "text/html", wantBody: "Resource types"},
		{name: "page HEAD", method: "HEAD", target: "/", wantCode: 200, wantType: "text/html"},
		{name: "page POST", method: "POST", target: "/", wantCode: 405},
		{name: "page DELETE", method: "DELETE", target: "/?r=v1/configmaps", wantCode: 405},
		{name: "root paths for API clients", method: "GET", target: "/", header: []string{"Accept", "application/json, */*"}, wantCode: 404, forwarded: "GET /"},
		{name: "browser Accept gets the page", method: "GET", target: "/", header: []string{"Accept", "text/html,application/xhtml+xml,application/json;q=0.9,*/*;q=0.8"}, wantCode: 200, wantType: "text/html"},
		{name: "stylesheet", method: "GET", target: "/ui/assets/style.css", wantCode: 200, wantType: "text/css", wantBody: "--accent"},
		{name: "stylesheet HEAD", method: "HEAD", target: "/ui/assets/style.css", wantCode: 200, wantType: "text/css"},
		{name: "stylesheet POST", method: "POST", target: "/ui/assets/style.css", wantCode: 405},
		{name: "unknown asset", method: "GET", target: "/ui/assets/nope.js", wantCode: 404},
		{name: "unknown UI page", method: "GET", target: "/ui/nope", wantCode: 404},
		{name: "discovery", method: "GET", target: "/api/v1", wantCode: 200, wantType: "application/json", wantBody: `"kind": "APIResourceList"`, forwarded: "GET /api/v1"},
		{name: "group discovery", method: "GET", target: "/apis/apps/v1?x=1", wantCode: 200, wantType: "application/json", forwarded: "GET /apis/apps/v1?x=1"},
		{name: "healthz", method: "GET", target: "/healthz", wantCode: 404, wantBody: "the server could not find the requested resource", forwarded: "GET /healthz"},
		{name: "write", method: "POST", target: "/api/v1/namespaces/default/configmaps", wantCode: 404, forwarded: "POST /api/v1/namespaces/default/configmaps"},
		{name: "unclean path unchanged", method: "GET", target: "/api//v1/../v1", wantCode: 404, forwarded: "GET /api//v1/../v1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := newAPI(t)
			rec := do(t, web.New(sandbox(api)), tt.method, tt.target, tt.header...)
			if rec.Code != tt.wantCode {
				t.Errorf("status %d, want %d; body:\n%s", rec.Code, tt.wantCode, rec.Body)
			}
			if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, tt.wantType) {
				t.Errorf("Content-Type %q, want %q", ct, tt.wantType)
			}
			if !strings.Contains(rec.Body.String(), tt.wantBody) {
				t.Errorf("body does not contain %q:\n%s", tt.wantBody, rec.Body)
			}
			if tt.wantCode == 405 && rec.Header().Get("Allow") != "GET, HEAD" {
				t.Errorf("Allow %q, want %q", rec.Header().Get("Allow"), "GET, HEAD")
			}
			got := api.Requests()
			if tt.forwarded != "" && !slices.Contains(got, tt.forwarded) {
				t.Errorf("API received %q, want %q among them", got, tt.forwarded)
			}
			if tt.forwarded == "" && tt.wantCode != 200 && len(got) > 0 {
				t.Errorf("API received %q, want nothing", got)
			}
		})
	}
}

func TestNew_Headers(t *testing.T) {
	h := web.New(sandbox(newAPI(t)))

	rec := do(t, h, "GET", "/")
	if got := rec.Header().Get("Cache-Control"); got != "no-store" {
		t.Errorf("page Cache-Control %q", got)
	}
	if got := rec.Header().Get("X-Content-Type-Options"); got != "nosniff" {
		t.Errorf("page X-Content-Type-Options %q", got)
	}

	rec = do(t, h, "GET", "/ui/assets/style.css")
	etag := rec.Header().Get("ETag")
	if etag == "" || rec.Header().Get("Cache-Control") != "no-cache" {
		t.Fatalf("stylesheet ETag %q, Cache-Control %q", etag, rec.Header().Get("Cache-Control"))
	}
	if rec := do(t, h, "GET", "/ui/assets/style.css", "If-None-Match", etag); rec.Code != http.StatusNotModified {
		t.Errorf("revalidation: status %d, want 304", rec.Code)
	}
}

func TestExplorer_Layout(t *testing.T) {
	doc := page(t, web.New(sandbox(newAPI(t))), "/", 200)
	link := doc.One(t, "link", "rel", "stylesheet")
	if href, _ := link.Attr("href"); href != "/ui/assets/style.css" {
		t.Errorf("stylesheet href %q", href)
	}
	if got := doc.One(t, "title").Text(); got != "Explorer · kubeplay" {
		t.Errorf("title %q", got)
	}
	if doc.Has("", "role", "alert") {
		t.Errorf("unexpected alert: %v", htmltest.Texts(doc.All("", "role", "alert")))
	}
}

func TestExplorer_Catalog(t *testing.T) {
	doc := page(t, web.New(sandbox(newAPI(t))), "/", 200)

	t.Run("groups in server order, at preferred versions", func(t *testing.T) {
		var got []string
		for _, g := range doc.All("details", "class", "group") {
			name, _ := g.Attr("data-group")
			got = append(got, name+" "+g.One(t, "span", "class", "version").Text())
		}
		want := []string{"core v1", "apiregistration.k8s.io v1", "apps v1", "events.k8s.io v1"}
		if !slices.Equal(got[:4], want) {
			t.Errorf("first groups %q, want %q", got[:4], want)
		}
		for _, g := range []string{"autoscaling v2", "batch v1", "rbac.authorization.k8s.io v1", "flowcontrol.apiserver.k8s.io v1"} {
			if !slices.Contains(got, g) {
				t.Errorf("group %q missing from %q", g, got)
			}
		}
	})

	t.Run("types", func(t *testing.T) {
		tests := []struct {
			ref   string
			cells []string // kind, name, short names, scope
			href  string
		}{
			{"apps/v1/deployments", []string{"Deployment", "deployments", "deploy", "namespaced"}, "/?r=apps/v1/deployments"},
			{"v1/configmaps", []string{"ConfigMap", "configmaps", "cm", "namespaced"}, "/?r=v1/configmaps"},
			{"v1/namespaces", []string{"Namespace", "namespaces", "ns", "cluster"}, "/?r=v1/namespaces"},
			{"apps/v1/controllerrevisions", []string{"ControllerRevision", "controllerrevisions", "", "namespaced"}, "/?r=apps/v1/controllerrevisions"},
			{"v1/services", []string{"Service", "services", "svc", "namespaced"}, "/?r=v1/services"},
			{"apiextensions.k8s.io/v1/customresourcedefinitions", []string{"CustomResourceDefinition", "customresourcedefinitions", "crd, crds", "cluster"}, "/?r=apiextensions.k8s.io/v1/customresourcedefinitions"},
		}
		for _, tt := range tests {
			row := doc.One(t, "tr", "data-ref", tt.ref)
			if got := htmltest.Texts(row.All("td")); !slices.Equal(got, tt.cells) {
				t.Errorf("%s: cells %q, want %q", tt.ref, got, tt.cells)
			}
			if href, _ := row.One(t, "a").Attr("href"); href != tt.href {
				t.Errorf("%s: href %q, want %q", tt.ref, href, tt.href)
			}
		}
	})

	t.Run("no subresources or unlistable types", func(t *testing.T) {
		for _, row := range doc.All("tr", "data-ref", "*") {
			ref, _ := row.Attr("data-ref")
			if strings.Count(ref, "/") > 2 || strings.HasPrefix(ref, "v1/") && strings.Count(ref, "/") > 1 {
				t.Errorf("subresource listed: %s", ref)
			}
		}
		for _, ref := range []string{"v1/bindings", "authorization.k8s.io/v1/selfsubjectaccessreviews", "authentication.k8s.io/v1/tokenreviews", "autoscaling/v1/horizontalpodautoscalers"} {
			if doc.Has("tr", "data-ref", ref) {
				t.Errorf("%s listed", ref)
			}
		}
	})
}

func TestExplorer_Objects(t *testing.T) {
	t.Run("one namespace", func(t *testing.T) {
		api := newAPI(t)
		doc := page(t, web.New(sandbox(api)), "/?r=v1/configmaps&ns=default", 200)

		if got := doc.One(t, "h1").Text(); got != "ConfigMap v1" {
			t.Errorf("heading %q", got)
		}
		if got := doc.One(t, "title").Text(); got != "configmaps · kubeplay" {
			t.Errorf("title %q", got)
		}
		if !slices.Contains(api.Requests(), "GET /api/v1/namespaces/default/configmaps?limit=500") {
			t.Errorf("list request missing from %q", api.Requests())
		}
		if got := doc.One(t, "a", "class", "api-path").Text(); got != "GET /api/v1/namespaces/default/configmaps?limit=500" {
			t.Errorf("API path %q", got)
		}
		table := doc.One(t, "table", "class", "objects")
		if got := htmltest.Texts(table.All("th")); !slices.Equal(got, []string{"Name", "Age"}) {
			t.Errorf("columns %q", got)
		}
		var rows [][]string
		for _, tr := range table.One(t, "tbody").All("tr") {
			rows = append(rows, htmltest.Texts(tr.All("td")))
		}
		want := [][]string{{"app-config", "90m"}, {"kube-root-ca.crt", "90m"}}
		if !slices.EqualFunc(rows, want, slices.Equal) {
			t.Errorf("rows %q, want %q", rows, want)
		}
		if href, _ := table.All("a")[0].Attr("href"); href != "/ui/object?name=app-config&ns=default&r=v1%2Fconfigmaps" {
			t.Errorf("object link %q", href)
		}
		if got := doc.One(t, "p", "class", "meta").Text(); !strings.Contains(got, "42") {
			t.Errorf("resourceVersion not shown: %q", got)
		}

		// The selected type is marked, and links to other namespaced types keep the namespace.
		if cur, _ := doc.One(t, "tr", "aria-current", "page").Attr("data-ref"); cur != "v1/configmaps" {
			t.Errorf("current type %q", cur)
		}
		if href, _ := doc.One(t, "tr", "data-ref", "apps/v1/deployments").One(t, "a").Attr("href"); href != "/?r=apps/v1/deployments&ns=default" {
			t.Errorf("deployments href %q", href)
		}
		if href, _ := doc.One(t, "tr", "data-ref", "v1/nodes").One(t, "a").Attr("href"); href != "/?r=v1/nodes" {
			t.Errorf("nodes href %q", href)
		}
	})

	t.Run("namespace selector", func(t *testing.T) {
		doc := page(t, web.New(sandbox(newAPI(t))), "/?r=v1/configmaps&ns=default", 200)
		form := doc.One(t, "form", "class", "ns-form")
		if action, _ := form.Attr("action"); action != "/" {
			t.Errorf("form action %q", action)
		}
		if r, _ := form.One(t, "input", "name", "r").Attr("value"); r != "v1/configmaps" {
			t.Errorf("hidden r %q", r)
		}
		var values, selected []string
		for _, o := range form.One(t, "select", "name", "ns").All("option") {
			v, _ := o.Attr("value")
			values = append(values, v)
			if _, ok := o.Attr("selected"); ok {
				selected = append(selected, v)
			}
		}
		if want := []string{"", "default", "kube-public", "kube-system"}; !slices.Equal(values, want) {
			t.Errorf("options %q, want %q", values, want)
		}
		if !slices.Equal(selected, []string{"default"}) {
			t.Errorf("selected %q", selected)
		}
		if got := form.All("option")[0].Text(); got != "All namespaces" {
			t.Errorf("first option %q", got)
		}
	})

	t.Run("all namespaces", func(t *testing.T) {
		api := newAPI(t)
		doc := page(t, web.New(sandbox(api)), "/?r=v1/configmaps", 200)
		if !slices.Contains(api.Requests(), "GET /api/v1/configmaps?limit=500") {
			t.Errorf("list request missing from %q", api.Requests())
		}
		rows := doc.One(t, "table", "class", "objects").One(t, "tbody").All("tr")
		if len(rows) != 3 || rows[2].All("td")[0].Text() != "kube-system" {
			t.Errorf("rows %q", htmltest.Texts(rows))
		}
		opt := doc.One(t, "option", "selected", "*")
		if v, _ := opt.Attr("value"); v != "" {
			t.Errorf("selected option %q, want all namespaces", v)
		}
	})

	t.Run("cluster-scoped", func(t *testing.T) {
		doc := page(t, web.New(sandbox(newAPI(t))), "/?r=v1/namespaces&ns=default", 200)
		if doc.Has("select") {
			t.Error("namespace selector shown for a cluster-scoped type")
		}
		table := doc.One(t, "table", "class", "objects")
		if got := htmltest.Texts(table.All("th")); !slices.Equal(got, []string{"Name", "Age"}) {
			t.Errorf("columns %q", got)
		}
		if got := len(table.One(t, "tbody").All("tr")); got != 3 {
			t.Errorf("%d rows, want 3", got)
		}
	})

	t.Run("empty", func(t *testing.T) {
		doc := page(t, web.New(sandbox(newAPI(t))), "/?r=apps/v1/deployments&ns=default", 200)
		if got := doc.One(t, "p", "class", "empty").Text(); got != "No deployments found in namespace default." {
			t.Errorf("empty message %q", got)
		}
		if doc.Has("table", "class", "objects") {
			t.Error("objects table shown for an empty list")
		}
	})

	t.Run("non-preferred version", func(t *testing.T) {
		api := newAPI(t)
		api.Set("/apis/autoscaling/v1/horizontalpodautoscalers", 200, fakeapi.List("HorizontalPodAutoscalerList", "autoscaling/v1", "7"))
		doc := page(t, web.New(sandbox(api)), "/?r=autoscaling/v1/horizontalpodautoscalers", 200)
		if got := doc.One(t, "h1").Text(); got != "HorizontalPodAutoscaler autoscaling/v1" {
			t.Errorf("heading %q", got)
		}
		doc.One(t, "p", "class", "empty")
	})
}

func TestExplorer_Errors(t *testing.T) {
	forbidden := `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"configmaps is forbidden: User \"jane\" cannot list resource \"configmaps\" in API group \"\" in the namespace \"default\"","reason":"Forbidden","details":{"kind":"configmaps"},"code":403}`
	unavailable := `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the server is currently unable to handle the request","reason":"ServiceUnavailable","details":{},"code":503}`

	tests := []struct {
		name     string
		setup    func(*fakeapi.API)
		wrap     func(http.Handler) http.Handler
		target   string
		wantCode int
		alerts   []string // substrings, one per alert, in order
		check    func(*testing.T, htmltest.Node)
	}{
		{
			name:     "list forbidden",
			setup:    func(a *fakeapi.API) { a.Set("/api/v1/namespaces/default/configmaps", 403, forbidden) },
			target:   "/?r=v1/configmaps&ns=default",
			wantCode: 200,
			alerts:   []string{`Forbidden (403) configmaps is forbidden: User "jane" cannot list resource "configmaps"`},
			check: func(t *testing.T, doc htmltest.Node) {
				doc.One(t, "select", "name", "ns") // still there, to pick another namespace
			},
		},
		{
			name:     "unknown resource type",
			target:   "/?r=v1/widgets",
			wantCode: 404,
			alerts:   []string{`NotFound (404) the server doesn't have a resource type "widgets" in v1`},
		},
		{
			name:     "unknown group version",
			target:   "/?r=example.com/v1/widgets",
			wantCode: 404,
			alerts:   []string{`NotFound (404) the server doesn't have a resource type "widgets" in example.com/v1`},
		},
		{
			name:     "type without list",
			target:   "/?r=v1/bindings",
			wantCode: 404,
			alerts:   []string{`resource type "bindings" in v1 that can be listed`},
		},
		{
			name:     "malformed type",
			target:   "/?r=../../etc/passwd",
			wantCode: 400,
			alerts:   []string{`BadRequest (400) invalid resource type "../../etc/passwd"`},
		},
		{
			name:     "invalid namespace",
			target:   "/?r=v1/configmaps&ns=Not_A_Namespace",
			wantCode: 400,
			alerts:   []string{`BadRequest (400) invalid namespace "Not_A_Namespace"`},
			check: func(t *testing.T, doc htmltest.Node) {
				if href, _ := doc.One(t, "tr", "data-ref", "v1/secrets").One(t, "a").Attr("href"); href != "/?r=v1/secrets" {
					t.Errorf("invalid namespace carried into links: %q", href)
				}
			},
		},
		{
			name:     "namespaces unavailable",
			setup:    func(a *fakeapi.API) { a.Set("/api/v1/namespaces", 503, unavailable) },
			target:   "/?r=v1/configmaps&ns=default",
			wantCode: 200,
			alerts:   []string{"ServiceUnavailable (503) the server is currently unable to handle the request"},
			check: func(t *testing.T, doc htmltest.Node) {
				// The selected namespace stays selectable, and the objects are listed.
				if v, _ := doc.One(t, "option", "selected", "*").Attr("value"); v != "default" {
					t.Errorf("selected %q", v)
				}
				doc.One(t, "table", "class", "objects")
			},
		},
		{
			name:     "group discovery unavailable",
			setup:    func(a *fakeapi.API) { a.Set("/apis/batch/v1", 503, unavailable) },
			target:   "/",
			wantCode: 200,
			alerts:   []string{"ServiceUnavailable (503) the server is currently unable to handle the request"},
			check: func(t *testing.T, doc htmltest.Node) {
				doc.One(t, "details", "data-group", "batch").One(t, "", "role", "alert")
				doc.One(t, "tr", "data-ref", "apps/v1/deployments")
			},
		},
		{
			name:     "apis not a Status",
			setup:    func(a *fakeapi.API) { a.Set("/apis", 500, "boom") },
			target:   "/",
			wantCode: 200,
			alerts:   []string{"InternalError (500) an error on the server (\"boom\") has prevented the request from succeeding"},
			check: func(t *testing.T, doc htmltest.Node) {
				doc.One(t, "tr", "data-ref", "v1/configmaps") // the core group is still listed
			},
		},
		{
			name: "API handler panics",
			wrap: func(api http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.URL.Path == "/api/v1/configmaps" {
						panic("store on fire")
					}
					api.ServeHTTP(w, r)
				})
			},
			target:   "/?r=v1/configmaps",
			wantCode: 200,
			alerts:   []string{"InternalError (500) Internal error occurred: GET /api/v1/configmaps?limit=500: the API handler panicked: store on fire"},
		},
		{
			name:     "list body not JSON",
			setup:    func(a *fakeapi.API) { a.Set("/api/v1/configmaps", 200, "{not json") },
			target:   "/?r=v1/configmaps",
			wantCode: 200,
			alerts:   []string{"InternalError (500) Internal error occurred: GET /api/v1/configmaps?limit=500: decoding response"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := newAPI(t)
			if tt.setup != nil {
				tt.setup(api)
			}
			var h http.Handler = api
			if tt.wrap != nil {
				h = tt.wrap(api)
			}
			doc := page(t, web.New(sandbox(h)), tt.target, tt.wantCode)
			got := htmltest.Texts(doc.All("", "role", "alert"))
			if len(got) != len(tt.alerts) {
				t.Fatalf("alerts %q, want %d", got, len(tt.alerts))
			}
			for i, want := range tt.alerts {
				if !strings.Contains(got[i], want) {
					t.Errorf("alert %q does not contain %q", got[i], want)
				}
			}
			if tt.check != nil {
				tt.check(t, doc)
			}
		})
	}
}
