package requests

import (
	"net/http"
	"net/url"
	"slices"
	"testing"
	"time"

	"kubeplay/playground/journal"
	"kubeplay/server/audit"
	"kubeplay/server/encoding"
)

// A watch's view asks as the watch did: from its resourceVersion (where a
// 410 Gone shows again), with its selectors and options.
func TestViewOf_watch(t *testing.T) {
	label, href, ok := ViewOf("GET", "/api/v1/namespaces/default/configmaps", "watch=1&resourceVersion=12&labelSelector=app%3Dweb&allowWatchBookmarks=true")
	if !ok || label != "the watch of configmaps" || href != "/ui/watch?bookmarks=1&labelSelector=app%3Dweb&ns=default&r=v1%2Fconfigmaps&resourceVersion=12" {
		t.Errorf("ViewOf = %q %q %v", label, href, ok)
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		method, path, query string
		want                attributes
	}{
		{"GET", "/api/v1/namespaces/default/configmaps/x", "", attributes{version: "v1", namespace: "default", resource: "configmaps", name: "x", verb: "get"}},
		{"GET", "/api/v1/configmaps", "", attributes{version: "v1", resource: "configmaps", verb: "list"}},
		{"GET", "/api/v1/namespaces/default/pods", "watch=1", attributes{version: "v1", namespace: "default", resource: "pods", verb: "watch"}},
		{"GET", "/api/v1/watch/namespaces/default/pods", "", attributes{version: "v1", namespace: "default", resource: "pods", verb: "watch"}},
		// As kube-apiserver reads a boolean: the Python client's watch=True.
		{"GET", "/api/v1/pods", "watch=True", attributes{version: "v1", resource: "pods", verb: "watch"}},
		{"GET", "/api/v1/pods", "watch=FALSE", attributes{version: "v1", resource: "pods", verb: "list"}},
		{"GET", "/api/v1/pods", "watch=0", attributes{version: "v1", resource: "pods", verb: "list"}},
		{"GET", "/api/v1/namespaces/default", "", attributes{version: "v1", resource: "namespaces", name: "default", verb: "get"}},
		{"PUT", "/api/v1/namespaces/gone/finalize", "", attributes{version: "v1", resource: "namespaces", name: "gone", subresource: "finalize", verb: "update"}},
		{"PATCH", "/apis/apps/v1/namespaces/d/deployments/web/scale", "", attributes{group: "apps", version: "v1", namespace: "d", resource: "deployments", name: "web", subresource: "scale", verb: "patch"}},
		{"DELETE", "/apis/apps/v1/namespaces/d/deployments", "", attributes{group: "apps", version: "v1", namespace: "d", resource: "deployments", verb: "deletecollection"}},
		{"POST", "/api/v1/namespaces", "", attributes{version: "v1", resource: "namespaces", verb: "create"}},
		{"GET", "/apis/apps", "", attributes{discovery: true, verb: "get"}},
		{"GET", "/api", "", attributes{discovery: true, verb: "get"}},
		{"GET", "/version", "", attributes{nonResource: true, verb: "get"}},
		{"GET", "/openapi/v3/apis/apps/v1", "", attributes{nonResource: true, verb: "get"}},
	}
	for _, tt := range tests {
		if got := parse(tt.method, tt.path, tt.query); got != tt.want {
			t.Errorf("parse(%s %s?%s) = %+v, want %+v", tt.method, tt.path, tt.query, got, tt.want)
		}
	}
}

func TestKubectl(t *testing.T) {
	entry := func(method, path, query, contentType, body string) journal.Entry {
		h := http.Header{}
		if contentType != "" {
			h.Set("Content-Type", contentType)
		}
		return journal.Entry{Method: method, Path: path, Query: query, Request: journal.Message{Header: h, Body: []byte(body)}}
	}
	tests := []struct {
		e    journal.Entry
		want string
	}{
		{entry("GET", "/api/v1/namespaces/default/configmaps/x", "", "", ""), "kubectl get configmaps x -o yaml -n default"},
		{entry("GET", "/apis/apps/v1/deployments", "labelSelector=app%3Dweb", "", ""), "kubectl get deployments.apps -l 'app=web' -A"},
		{entry("GET", "/api/v1/namespaces/default/pods", "watch=1&fieldSelector=metadata.name%3Dp", "", ""), "kubectl get pods --field-selector 'metadata.name=p' --watch -n default"},
		{entry("GET", "/api/v1/nodes", "", "", ""), "kubectl get nodes -A"},
		{entry("POST", "/api/v1/namespaces/default/configmaps", "dryRun=All", "application/json", `{"a":"it's"}`), `echo '{"a":"it'\''s"}' | kubectl create -f - --dry-run=server -n default`},
		{entry("PATCH", "/api/v1/namespaces/default/configmaps/x", "fieldManager=me&force=true", "application/apply-patch+yaml", "data: {}"), "echo 'data: {}' | kubectl apply --server-side -f - --field-manager='me' --force-conflicts -n default"},
		{entry("PATCH", "/api/v1/namespaces/default/configmaps/x", "", "application/merge-patch+json", `{}`), "echo '{}' | kubectl patch configmaps x --type=merge --patch-file=/dev/stdin -n default"},
		{entry("PUT", "/apis/apps/v1/namespaces/d/deployments/web/status", "", "application/json", `{}`), "echo '{}' | kubectl replace -f - --subresource=status -n d"},
		{entry("DELETE", "/apis/apps/v1/namespaces/d/deployments/web", "propagationPolicy=Foreground", "", ""), "kubectl delete deployments.apps web --cascade=foreground -n d"},
		{entry("DELETE", "/api/v1/namespaces/d/configmaps", "", "", ""), "kubectl delete configmaps --all -n d"},
		{entry("GET", "/version", "", "", ""), "kubectl version"},
		{entry("GET", "/apis/apps/v1", "", "", ""), "kubectl get --raw '/apis/apps/v1'"},
		{entry("PUT", "/api/v1/namespaces/gone/finalize", "", "application/json", "{}"), ""},
	}
	for _, tt := range tests {
		a := parse(tt.e.Method, tt.e.Path, tt.e.Query)
		if got := kubectl(a, tt.e); got != tt.want {
			t.Errorf("%s %s?%s:\n got %s\nwant %s", tt.e.Method, tt.e.Path, tt.e.Query, got, tt.want)
		}
	}
}

func TestEntryProps(t *testing.T) {
	e := journal.Entry{
		Seq: 7, Time: time.Date(2026, 11, 21, 3, 4, 5, 6e6, time.UTC), Method: "POST",
		Path: "/api/v1/namespaces/default/configmaps", UserAgent: "kubectl/v1.35.0 (linux/amd64) kubernetes/abc",
		Request: journal.Message{
			Header: http.Header{"Content-Type": {"application/json"}, "Authorization": {"Bearer s3cret"}},
			Body:   []byte(`{"kind":"ConfigMap"}`),
		},
		Status: 201, Latency: 1500 * time.Microsecond, Done: true,
		Response: journal.Message{Body: []byte(`{"kind":"ConfigMap","metadata":{"name":"x"}}`)},
		Audit:    audit.Record{Annotations: map[string]string{"policy/b": "2", "policy/a": "1"}},
	}
	p := entryProps(e, "127.0.0.1:8080")
	if want := []HeaderProps{{"policy/a", "1"}, {"policy/b", "2"}}; !slices.Equal(p.AuditAnnotations, want) {
		t.Errorf("audit annotations %v, want %v", p.AuditAnnotations, want)
	}
	if p.Client != "kubectl" || p.Verb != "create" || p.Resource != "configmaps" || p.StatusClass() != "2xx" ||
		p.Time != "03:04:05.006" || p.Latency != "1.5ms" {
		t.Errorf("props %+v", p)
	}
	if p.Request.Body != "{\n  \"kind\": \"ConfigMap\"\n}" {
		t.Errorf("request body %q, want it pretty-printed", p.Request.Body)
	}
	for _, h := range p.Request.Headers {
		if h.Name == "Authorization" && h.Value != "Bearer <redacted>" {
			t.Errorf("Authorization shown as %q", h.Value)
		}
	}
	want := `curl -X POST 'http://127.0.0.1:8080/api/v1/namespaces/default/configmaps' -H 'Content-Type: application/json' --data-binary '{"kind":"ConfigMap"}'`
	if p.Curl != want {
		t.Errorf("curl:\n got %s\nwant %s", p.Curl, want)
	}
}

func TestEventProps(t *testing.T) {
	tests := []struct{ data, typ, summary string }{
		{`{"type":"ADDED","object":{"kind":"Pod","metadata":{"name":"p","namespace":"ns","resourceVersion":"12"}}}`, "ADDED", "Pod ns/p rv 12"},
		{`{"type":"BOOKMARK","object":{"kind":"Pod","metadata":{"resourceVersion":"15"}}}`, "BOOKMARK", "rv 15"},
		{`{"type":"ERROR","object":{"kind":"Status","message":"too old resource version: 1 (5)"}}`, "ERROR", "too old resource version: 1 (5)"},
	}
	for _, tt := range tests {
		p := eventProps(journal.Event{Data: []byte(tt.data)})
		if p.Type != tt.typ || p.Summary != tt.summary {
			t.Errorf("%s: type %q summary %q", tt.data, p.Type, p.Summary)
		}
	}
}

// CBOR bodies are shown, and put in curl commands, as the JSON they stand
// for, an apply configuration with the apply patch type that reads JSON.
func TestEntryProps_CBOR(t *testing.T) {
	body, err := encoding.JSONToCBOR([]byte(`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"x"}}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ contentType, curlType string }{
		{"application/cbor", "application/json"},
		{"application/apply-patch+cbor", "application/apply-patch+yaml"},
	} {
		e := journal.Entry{
			Method: "PATCH", Path: "/api/v1/namespaces/default/configmaps/x",
			Request:  journal.Message{Header: http.Header{"Content-Type": {tt.contentType}}, Body: body},
			Response: journal.Message{Header: http.Header{"Content-Type": {"application/cbor"}}, Body: body},
			Status:   200, Done: true,
		}
		p := entryProps(e, "127.0.0.1:8080")
		const text = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"}}`
		if want := pretty([]byte(text)); p.Request.Body != want || p.Response.Body != want {
			t.Errorf("%s: request body %q, response body %q, want %q", tt.contentType, p.Request.Body, p.Response.Body, want)
		}
		want := `curl -X PATCH 'http://127.0.0.1:8080/api/v1/namespaces/default/configmaps/x' -H 'Content-Type: ` + tt.curlType + `' --data-binary '` + text + `'`
		if p.Curl != want {
			t.Errorf("curl:\n got %s\nwant %s", p.Curl, want)
		}
	}
}

// Requests are told apart by who sent them: the cluster's controllers, by
// their User-Agent or the user they authenticated as, and everyone else.
func TestController(t *testing.T) {
	const kcm = "kube-controller-manager/v1.35.4 (linux/amd64) kubernetes/7b8c6cf"
	user := func(name string) *audit.User { return &audit.User{Name: name} }
	tests := []struct {
		name      string
		userAgent string
		user, by  *audit.User // by impersonated user
		want      string
		simulated bool
	}{
		{"namespace controller", kcm + "/system:serviceaccount:kube-system:namespace-controller", user("system:serviceaccount:kube-system:namespace-controller"), nil, "namespace-controller", false},
		{"garbage collector", kcm + "/system:serviceaccount:kube-system:generic-garbage-collector", user("system:serviceaccount:kube-system:generic-garbage-collector"), nil, "generic-garbage-collector", false},
		{"the agent names the controller before authentication", kcm + "/system:serviceaccount:kube-system:job-controller", nil, nil, "job-controller", false},
		{"kube-controller-manager with its own credentials", kcm, user("system:kube-controller-manager"), nil, "kube-controller-manager", false},
		{"scheduler", "kube-scheduler/v1.35.4 (linux/amd64) kubernetes/7b8c6cf/scheduler", user("system:kube-scheduler"), nil, "kube-scheduler", false},
		{"simulated kubelet", "kubelet/v1.35.4 (linux/amd64) kubernetes/7b8c6cf", user("system:kubeplay-simulator"), nil, "kubelet", true},
		{"a kubelet's agent alone", "kubelet/v1.35.4 (linux/amd64) kubernetes/7b8c6cf", nil, nil, "kubelet", true},
		{"finalizer bot", "kubeplay-finalizer-bot/v1.35.4 (simulated)", user("system:kubeplay-simulator"), nil, "finalizer-bot", true},
		{"simulated workload controller", kcm + "/system:serviceaccount:kube-system:deployment-controller", user("system:kubeplay-simulator"), nil, "deployment-controller", true},
		{"the simulator with another agent", "Go-http-client/1.1", user("system:kubeplay-simulator"), nil, "kubeplay-simulator", true},
		{"a controller account with another agent", "Go-http-client/1.1", user("system:serviceaccount:kube-system:replicaset-controller"), nil, "replicaset-controller", false},
		{"kubectl", "kubectl/v1.35.0 (linux/amd64) kubernetes/abc", user("alice"), nil, "", false},
		{"kubectl as a service account of another namespace", "kubectl/v1.35.0 (linux/amd64) kubernetes/abc", user("system:serviceaccount:default:builder"), nil, "", false},
		{"kubectl impersonating a controller", "kubectl/v1.35.0 (linux/amd64) kubernetes/abc", user("system:serviceaccount:kube-system:namespace-controller"), user("admin"), "", false},
		{"a controller agent needs its slash", "kubelet-watcher/1.0", user("alice"), nil, "", false},
		{"the UI", "Mozilla/5.0 (X11; Linux x86_64)", nil, nil, "", false},
		{"no agent", "", nil, nil, "", false},
		{"an empty account name", "curl/8.5.0", user("system:serviceaccount:kube-system:"), nil, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := audit.Record{User: tt.user}
			if tt.by != nil {
				a.ImpersonatedBy = tt.by
			}
			name, simulated := controller(tt.userAgent, a)
			if name != tt.want || simulated != tt.simulated {
				t.Errorf("controller(%q, %v) = %q, %v; want %q, %v", tt.userAgent, tt.user, name, simulated, tt.want, tt.simulated)
			}
			p := entryProps(journal.Entry{UserAgent: tt.userAgent, Audit: a}, "127.0.0.1:8080")
			if p.Controller != tt.want || p.Simulated != tt.simulated {
				t.Errorf("entry props: controller %q simulated %v", p.Controller, p.Simulated)
			}
		})
	}
}

func TestFilterURL(t *testing.T) {
	tests := []struct {
		f    Filter
		want string
	}{
		{Filter{}, "/ui/requests"},
		{Filter{ShowControllers: true}, "/ui/requests?controllers=show"},
		{Filter{Verb: "watch", User: "a&b", Session: "s1", ShowControllers: true, ShowUI: true}, "/ui/requests?controllers=show&session=s1&ui=show&user=a%26b&verb=watch"},
	}
	for _, tt := range tests {
		if got := tt.f.URL(); got != tt.want {
			t.Errorf("%+v: %s, want %s", tt.f, got, tt.want)
		}
		if got := filterFrom(mustQuery(t, tt.want)); got != tt.f {
			t.Errorf("%s reads as %+v, want %+v", tt.want, got, tt.f)
		}
	}
	for _, v := range []string{"", "hide", "yes"} {
		if f := filterFrom(url.Values{"controllers": {v}, "ui": {v}}); f.ShowControllers || f.ShowUI {
			t.Errorf("controllers=%s&ui=%[1]s shows the requests of controllers or the UI; only show does", v)
		}
	}
}

func mustQuery(t *testing.T, target string) url.Values {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	return u.Query()
}
