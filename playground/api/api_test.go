package api_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"kubeplay/playground"
	"kubeplay/playground/api"
	"kubeplay/playground/journal"
	"kubeplay/playground/scenario"
)

func serve(t testing.TB, opts playground.ManagerOptions) string {
	t.Helper()
	m, err := playground.NewManager(opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api.New(m))
	t.Cleanup(func() {
		srv.Close()
		m.Close()
	})
	return srv.URL
}

// call sends a request and decodes a JSON answer into out (if not nil).
func call(t testing.TB, method, url, ctype string, body []byte, want int, out any) http.Header {
	t.Helper()
	return callAs(t, "", method, url, ctype, body, want, out)
}

// callAs is call with a bearer token (none if "").
func callAs(t testing.TB, token, method, url, ctype string, body []byte, want int, out any) http.Header {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("%s %s: %d %s, want %d", method, url, resp.StatusCode, b, want)
	}
	if out != nil {
		if p, ok := out.(*[]byte); ok {
			*p = b
		} else if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: %v in %s", method, url, err, b)
		}
	}
	return resp.Header
}

func createSandbox(t testing.TB, base string) api.Sandbox {
	t.Helper()
	var sb api.Sandbox
	h := call(t, "POST", base+"/playground/v1/sandboxes", "", nil, 201, &sb)
	if h.Get("Location") != "/playground/v1/sandboxes/"+sb.ID || sb.Server != "/sandboxes/"+sb.ID {
		t.Fatalf("created %+v, Location %q", sb, h.Get("Location"))
	}
	return sb
}

type apiError struct {
	Error struct {
		Code    int
		Message string
	}
}

func TestAPI_lifecycle(t *testing.T) {
	base := serve(t, playground.ManagerOptions{InMemory: true})
	a, b := createSandbox(t, base), createSandbox(t, base)
	if a.Usage.Objects == 0 || a.Usage.Revision == 0 || !a.Settings.Controllers["namespace"] || a.Limits.BodyBytes != 3<<20 {
		t.Errorf("a new sandbox: %+v", a)
	}
	var list struct{ Items []api.Sandbox }
	call(t, "GET", base+"/playground/v1/sandboxes", "", nil, 200, &list)
	if len(list.Items) != 2 || list.Items[0].ID != a.ID || list.Items[1].ID != b.ID {
		t.Errorf("list: %+v", list)
	}
	call(t, "POST", base+a.Server+"/api/v1/namespaces/default/configmaps", "application/json", []byte(`{"metadata":{"name":"x"}}`), 201, nil)
	call(t, "GET", base+b.Server+"/api/v1/namespaces/default/configmaps/x", "", nil, 404, nil)
	// The other paths of the API are under the prefix too.
	var body []byte
	call(t, "GET", base+a.Server+"/healthz", "", nil, 200, &body)
	if string(body) != "ok" {
		t.Errorf("/healthz: %q", body)
	}
	var version struct{ GitVersion string }
	call(t, "GET", base+a.Server+"/version", "", nil, 200, &version)
	call(t, "GET", base+a.Server+"/openapi/v3/api/v1", "", nil, 200, nil)
	if !strings.HasPrefix(version.GitVersion, "v1.35") {
		t.Errorf("/version: %+v", version)
	}

	var got api.Sandbox
	call(t, "POST", base+"/playground/v1/sandboxes/"+a.ID+"/reset", "", nil, 200, &got)
	call(t, "GET", base+a.Server+"/api/v1/namespaces/default/configmaps/x", "", nil, 404, nil)

	call(t, "DELETE", base+"/playground/v1/sandboxes/"+a.ID, "", nil, 204, nil)
	var e apiError
	call(t, "GET", base+"/playground/v1/sandboxes/"+a.ID, "", nil, 404, &e)
	if e.Error.Code != 404 || !strings.Contains(e.Error.Message, a.ID) {
		t.Errorf("404: %+v", e)
	}
	call(t, "DELETE", base+"/playground/v1/sandboxes/"+a.ID, "", nil, 404, nil)
	// A deleted (or unknown) sandbox's API is not there.
	call(t, "GET", base+a.Server+"/api/v1/namespaces", "", nil, 404, nil)
	call(t, "GET", base+"/playground/v1/nothing", "", nil, 404, &e)
	if !strings.Contains(e.Error.Message, "openapi.json") {
		t.Errorf("unknown endpoint: %+v", e)
	}
}

func TestAPI_limitOfSandboxes(t *testing.T) {
	base := serve(t, playground.ManagerOptions{InMemory: true, MaxSandboxes: 1})
	createSandbox(t, base)
	var e apiError
	h := call(t, "POST", base+"/playground/v1/sandboxes", "", nil, 429, &e)
	if h.Get("Retry-After") == "" || !strings.Contains(e.Error.Message, "at most 1") {
		t.Errorf("429: %+v %v", e, h)
	}
}

func TestAPI_kubeconfig(t *testing.T) {
	base := serve(t, playground.ManagerOptions{InMemory: true})
	sb := createSandbox(t, base)
	var kc []byte
	h := call(t, "GET", base+"/playground/v1/sandboxes/"+sb.ID+"/kubeconfig", "", nil, 200, &kc)
	if h.Get("Content-Type") != "application/yaml" || !strings.Contains(string(kc), `server: "`+base+`/sandboxes/`+sb.ID+`"`) {
		t.Errorf("kubeconfig (%s):\n%s", h.Get("Content-Type"), kc)
	}
}

func TestAPI_settings(t *testing.T) {
	base := serve(t, playground.ManagerOptions{InMemory: true})
	var sb api.Sandbox
	call(t, "POST", base+"/playground/v1/sandboxes", "application/json", []byte(`{"controllers":{"namespace":false}}`), 201, &sb)
	if sb.Settings.Controllers["namespace"] || !sb.Settings.Controllers["garbageCollector"] {
		t.Errorf("created with %+v", sb.Settings.Controllers)
	}
	settings := base + "/playground/v1/sandboxes/" + sb.ID + "/settings"
	var s api.Settings
	call(t, "PATCH", settings, "application/json", []byte(`{"controllers":{"namespace":true,"kubelet":false}}`), 200, &s)
	if !s.Controllers["namespace"] || s.Controllers["kubelet"] || !s.Controllers["garbageCollector"] {
		t.Errorf("patched: %+v", s.Controllers)
	}
	var e apiError
	call(t, "PATCH", settings, "application/json", []byte(`{"controllers":{"cloudController":true}}`), 400, &e)
	if !strings.Contains(e.Error.Message, `controllers: unknown cloudController (known: `) {
		t.Errorf("unknown controller: %+v", e)
	}
}

func TestAPI_compact(t *testing.T) {
	base := serve(t, playground.ManagerOptions{InMemory: true})
	sb := createSandbox(t, base)
	var cm struct {
		Metadata struct{ ResourceVersion string }
	}
	call(t, "POST", base+sb.Server+"/api/v1/namespaces/default/configmaps", "application/json", []byte(`{"metadata":{"name":"x"}}`), 201, &cm)
	call(t, "PUT", base+sb.Server+"/api/v1/namespaces/default/configmaps/x", "application/json", []byte(`{"metadata":{"name":"x"},"data":{"a":"b"}}`), 200, nil)
	var c struct{ CompactedRevision int64 }
	call(t, "POST", base+"/playground/v1/sandboxes/"+sb.ID+"/compact", "", nil, 200, &c)
	if c.CompactedRevision == 0 {
		t.Errorf("compact: %+v", c)
	}
	call(t, "GET", base+sb.Server+"/api/v1/namespaces/default/configmaps?resourceVersion="+cm.Metadata.ResourceVersion+"&resourceVersionMatch=Exact", "", nil, 410, nil)
}

// notRootCA selects every ConfigMap but the kube-root-ca.crt that the
// root-ca-cert-publisher puts in every namespace.
const notRootCA = "fieldSelector=metadata.name%21%3Dkube-root-ca.crt"

func TestAPI_journal(t *testing.T) {
	base := serve(t, playground.ManagerOptions{InMemory: true})
	sb := createSandbox(t, base)
	jurl := base + "/playground/v1/sandboxes/" + sb.ID + "/journal"
	ws, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(jurl, "http")+"/live", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	call(t, "POST", base+sb.Server+"/api/v1/namespaces/default/configmaps", "application/json", []byte(`{"metadata":{"name":"journaled"}}`), 201, nil)

	var page struct {
		Items  []journal.Entry
		Oldest int64
	}
	call(t, "GET", jurl+"?limit=1000", "", nil, 200, &page)
	i := slices.IndexFunc(page.Items, func(e journal.Entry) bool {
		return e.Method == "POST" && e.Status == 201 && strings.Contains(string(e.Request.Body), "journaled")
	})
	if i < 0 || page.Items[i].Path != "/api/v1/namespaces/default/configmaps" {
		t.Fatalf("journal: no POST of the configmap in %d entries", len(page.Items))
	}
	var next struct{ Items []journal.Entry }
	call(t, "GET", fmt.Sprintf("%s?after=%d&limit=1", jurl, page.Items[i].Seq-1), "", nil, 200, &next)
	if len(next.Items) != 1 || next.Items[0].Seq != page.Items[i].Seq {
		t.Errorf("page after %d: %+v", page.Items[i].Seq-1, next.Items)
	}
	call(t, "GET", jurl+"?limit=0", "", nil, 400, nil)

	ws.SetReadDeadline(time.Now().Add(time.Minute)) // only bounds a broken run
	for {
		var u journal.Update
		if err := ws.ReadJSON(&u); err != nil {
			t.Fatalf("live journal: %v", err)
		}
		if u.Entry != nil && u.Entry.Method == "POST" && strings.Contains(string(u.Entry.Request.Body), "journaled") {
			break
		}
	}
	call(t, "GET", jurl+"/live", "", nil, 400, nil)
}

func TestAPI_deletions(t *testing.T) {
	base := serve(t, playground.ManagerOptions{InMemory: true})
	sb := createSandbox(t, base)
	call(t, "POST", base+sb.Server+"/api/v1/namespaces/default/configmaps", "application/json", []byte(`{"metadata":{"name":"x","finalizers":["example.com/hold"]}}`), 201, nil)
	call(t, "DELETE", base+sb.Server+"/api/v1/namespaces/default/configmaps/x", "", nil, 200, nil)
	var tl struct{ Events []map[string]any }
	call(t, "GET", base+"/playground/v1/sandboxes/"+sb.ID+"/deletions?resource=configmaps&namespace=default&name=x", "", nil, 200, &tl)
	if len(tl.Events) < 2 {
		t.Errorf("timeline: %v", tl.Events)
	}
	var recent struct {
		Objects []struct{ Name, Namespace, UID string }
	}
	call(t, "GET", base+"/playground/v1/sandboxes/"+sb.ID+"/deletions", "", nil, 200, &recent)
	if len(recent.Objects) == 0 || recent.Objects[0].Name != "x" || recent.Objects[0].UID == "" {
		t.Errorf("recent timelines: %+v", recent.Objects)
	}
	call(t, "GET", base+"/playground/v1/sandboxes/"+sb.ID+"/deletions?name=x", "", nil, 400, nil)
}

// TestAPI_openapi: the document served is the one in the repository, and it
// describes every endpoint the handler serves.
func TestAPI_openapi(t *testing.T) {
	base := serve(t, playground.ManagerOptions{InMemory: true})
	var served []byte
	call(t, "GET", base+"/playground/v1/openapi.json", "", nil, 200, &served)
	file, err := os.ReadFile(filepath.Join(".", "openapi.json"))
	if err != nil || !bytes.Equal(served, file) {
		t.Fatalf("served document differs from openapi.json (%v)", err)
	}
	var doc struct {
		Paths map[string]map[string]any
	}
	if err := json.Unmarshal(served, &doc); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("api.go")
	if err != nil {
		t.Fatal(err)
	}
	// Every route registered in api.go: `"METHOD "+Prefix+"/path"`.
	n := 0
	for _, line := range strings.Split(string(src), "\n") {
		_, rest, ok := strings.Cut(line, `mux.HandleFunc("`)
		if !ok || !strings.Contains(rest, `"+Prefix+"`) {
			continue
		}
		method, path, _ := strings.Cut(rest, ` "+Prefix+"`)
		path, _, _ = strings.Cut(path, `"`)
		ops := doc.Paths["/playground/v1"+path]
		if ops[strings.ToLower(method)] == nil {
			t.Errorf("%s /playground/v1%s is not in openapi.json", method, path)
		}
		n++
	}
	if n < 14 {
		t.Errorf("found %d routes in api.go", n)
	}
}

// TestIsolation hammers many sandboxes at once, each by its own clients
// (writers and a watcher), and then accounts for every object: each
// sandbox holds exactly what its clients wrote, its watch saw exactly
// that, and its journal mentions no other sandbox's objects.
func TestIsolation(t *testing.T) {
	const sandboxes, writers, perWriter = 6, 3, 15
	base := serve(t, playground.ManagerOptions{InMemory: true, Limits: playground.Limits{RequestsPerSecond: -1}})
	type run struct {
		sb      api.Sandbox
		watched chan []string
	}
	runs := make([]run, sandboxes)
	for i := range runs {
		runs[i] = run{sb: createSandbox(t, base), watched: make(chan []string, 1)}
	}
	name := func(s, w, k int) string { return fmt.Sprintf("s%d-w%d-%d", s, w, k) }
	var wg sync.WaitGroup
	ready := sync.WaitGroup{}
	for s, r := range runs {
		ready.Add(1)
		wg.Go(func() { // the watcher: every configmap event until it has seen them all
			resp, err := http.Get(base + r.sb.Server + "/api/v1/namespaces/default/configmaps?watch=true&" + notRootCA)
			ready.Done()
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			dec := json.NewDecoder(resp.Body)
			var seen []string
			for len(seen) < writers*perWriter {
				var ev struct {
					Type   string
					Object struct{ Metadata struct{ Name string } }
				}
				if err := dec.Decode(&ev); err != nil {
					t.Errorf("sandbox %d watch: %v", s, err)
					break
				}
				seen = append(seen, ev.Type+" "+ev.Object.Metadata.Name)
			}
			r.watched <- seen
		})
	}
	ready.Wait()
	for s, r := range runs {
		for w := range writers {
			wg.Go(func() {
				for k := range perWriter {
					body := fmt.Sprintf(`{"metadata":{"name":%q},"data":{"sandbox":%q}}`, name(s, w, k), r.sb.ID)
					call(t, "POST", base+r.sb.Server+"/api/v1/namespaces/default/configmaps", "application/json", []byte(body), 201, nil)
					// Another sandbox's object is never there.
					other := runs[(s+1)%sandboxes].sb.Server
					call(t, "GET", base+other+"/api/v1/namespaces/default/configmaps/"+name(s, w, k), "", nil, 404, nil)
				}
			})
		}
	}
	wg.Wait()
	for s, r := range runs {
		var want []string
		for w := range writers {
			for k := range perWriter {
				want = append(want, name(s, w, k))
			}
		}
		slices.Sort(want)
		var list struct {
			Items []struct {
				Metadata struct{ Name string }
				Data     map[string]string
			}
		}
		call(t, "GET", base+r.sb.Server+"/api/v1/namespaces/default/configmaps?"+notRootCA, "", nil, 200, &list)
		var got []string
		for _, it := range list.Items {
			got = append(got, it.Metadata.Name)
			if it.Data["sandbox"] != r.sb.ID {
				t.Errorf("sandbox %d holds %s written to %s", s, it.Metadata.Name, it.Data["sandbox"])
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("sandbox %d holds %v\nwant %v", s, got, want)
		}
		seen := <-r.watched
		slices.Sort(seen)
		wantSeen := make([]string, len(want))
		for i, n := range want {
			wantSeen[i] = "ADDED " + n
		}
		if !slices.Equal(seen, wantSeen) {
			t.Errorf("sandbox %d watch saw %v\nwant %v", s, seen, wantSeen)
		}
		var page struct{ Items []journal.Entry }
		call(t, "GET", base+"/playground/v1/sandboxes/"+r.sb.ID+"/journal?limit=1000", "", nil, 200, &page)
		for _, e := range page.Items {
			if e.Status == 404 {
				continue // the probes of other sandboxes' names
			}
			for o := range sandboxes {
				if o != s && (strings.Contains(string(e.Request.Body), fmt.Sprintf(`"s%d-`, o)) || strings.Contains(string(e.Response.Body), fmt.Sprintf(`"s%d-`, o))) {
					t.Errorf("sandbox %d's journal has sandbox %d's object: %s %s", s, o, e.Method, e.Path)
				}
			}
		}
	}
}

func TestAPI_finalizerBotAndClock(t *testing.T) {
	base := serve(t, playground.ManagerOptions{InMemory: true})
	var sb api.Sandbox
	call(t, "POST", base+"/playground/v1/sandboxes", "application/json", []byte(`{"finalizerBots":[{"finalizer":"example.com/x","delay":"10m"}]}`), 201, &sb)
	if bots := *sb.Settings.FinalizerBots; len(bots) != 1 || bots[0].Delay != "10m0s" || sb.Settings.Clock.Offset != "0s" {
		t.Errorf("settings: %+v", sb.Settings)
	}
	cm := base + sb.Server + "/api/v1/namespaces/default/configmaps"
	call(t, "POST", cm, "application/json", []byte(`{"metadata":{"name":"held","finalizers":["example.com/x"]}}`), 201, nil)
	call(t, "DELETE", cm+"/held", "", nil, 200, nil)
	var clock api.Clock
	call(t, "POST", base+"/playground/v1/sandboxes/"+sb.ID+"/clock", "application/json", []byte(`{"advance":"10m"}`), 200, &clock)
	if clock.Offset != "10m0s" || time.Until(clock.Now) < 9*time.Minute {
		t.Errorf("clock: %+v", clock)
	}
	// Bounded only by the test binary's deadline: a loaded machine is slow,
	// not wrong.
	deadline, ok := t.Deadline()
	if !ok {
		deadline = time.Now().Add(2 * time.Minute)
	}
	for {
		resp, err := http.Get(cm + "/held")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == 404 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the finalizer bot did not remove its finalizer")
		}
		time.Sleep(20 * time.Millisecond)
	}
	call(t, "POST", base+"/playground/v1/sandboxes/"+sb.ID+"/clock", "application/json", []byte(`{"advance":"-1s"}`), 400, nil)
	call(t, "PATCH", base+"/playground/v1/sandboxes/"+sb.ID+"/settings", "application/json", []byte(`{"finalizerBots":[{"finalizer":"x","delay":"soon"}]}`), 400, nil)
}

func TestAPI_run(t *testing.T) {
	base := serve(t, playground.ManagerOptions{InMemory: true})
	sb := createSandbox(t, base)
	runURL := base + "/playground/v1/sandboxes/" + sb.ID + "/run"
	var out []byte
	h := call(t, "POST", runURL+"?builtin=graceful-pod-deletion", "", nil, 200, &out)
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if h.Get("Content-Type") != "application/x-ndjson" || len(lines) != 8 || lines[7] != `{"passed":true}` ||
		!strings.HasPrefix(lines[1], `{"step":2,"name":"create a pod bound to a node","status":201,`) {
		t.Errorf("run:\n%s", out)
	}
	scenario := `apiVersion: kubeplay.dev/v1
kind: Scenario
name: mine
steps:
- name: missing
  request: {method: GET, path: /api/v1/namespaces/nowhere}
  expect: {status: 200}
`
	call(t, "POST", runURL, "application/yaml", []byte(scenario), 200, &out)
	if !strings.Contains(string(out), `"failures":["status 404, want 200:`) || !strings.HasSuffix(string(out), "{\"passed\":false}\n") {
		t.Errorf("a failing run:\n%s", out)
	}
	call(t, "POST", runURL, "application/yaml", []byte("kind: Nope"), 400, nil)
	call(t, "POST", runURL+"?builtin=nope", "", nil, 404, nil)
}

func TestAPI_createFromScenario(t *testing.T) {
	base := serve(t, playground.ManagerOptions{InMemory: true})
	var sb api.Sandbox
	call(t, "POST", base+"/playground/v1/sandboxes?scenario=deployment-rollout", "", nil, 201, &sb)
	if sb.Scenario == nil || !sb.Scenario.Passed || len(sb.Scenario.Steps) != 4 {
		t.Fatalf("created with %+v", sb.Scenario)
	}
	var pods struct{ Items []any }
	call(t, "GET", base+sb.Server+"/api/v1/namespaces/default/pods", "", nil, 200, &pods)
	if len(pods.Items) != 3 {
		t.Errorf("%d pods in the sandbox the scenario set up", len(pods.Items))
	}
	setup := "apiVersion: kubeplay.dev/v1\nkind: Scenario\nname: setup\nsteps:\n- name: a namespace\n  request: {method: POST, path: /api/v1/namespaces, body: {metadata: {name: team-a}}}\n  expect: {status: 201}\n"
	call(t, "POST", base+"/playground/v1/sandboxes", "application/yaml", []byte(setup), 201, &sb)
	if !sb.Scenario.Passed {
		t.Errorf("setup: %+v", sb.Scenario)
	}
	call(t, "GET", base+sb.Server+"/api/v1/namespaces/team-a", "", nil, 200, nil)
	call(t, "POST", base+"/playground/v1/sandboxes?scenario=nope", "", nil, 404, nil)

	// The built-ins to choose from, whole.
	var list struct{ Items []scenario.Scenario }
	call(t, "GET", base+"/playground/v1/scenarios", "", nil, 200, &list)
	i := slices.IndexFunc(list.Items, func(s scenario.Scenario) bool { return s.Name == "deployment-rollout" })
	if len(list.Items) < 20 || i < 0 || !list.Items[i].Sandbox || len(list.Items[i].Steps) != 4 || list.Items[i].Description == "" {
		t.Errorf("%d built-in scenarios: %+v", len(list.Items), list.Items)
	}
}

func TestAPI_retention(t *testing.T) {
	base := serve(t, playground.ManagerOptions{InMemory: true})
	var sb api.Sandbox
	call(t, "POST", base+"/playground/v1/sandboxes", "application/json", []byte(`{"retention":"2h"}`), 201, &sb)
	if sb.Settings.Retention != "2h0m0s" {
		t.Errorf("retention %q", sb.Settings.Retention)
	}
	call(t, "POST", base+"/playground/v1/sandboxes", "", nil, 201, &sb)
	if sb.Settings.Retention != "1h0m0s" {
		t.Errorf("default retention %q", sb.Settings.Retention)
	}
	call(t, "POST", base+"/playground/v1/sandboxes", "application/json", []byte(`{"retention":"forever"}`), 400, nil)
	call(t, "PATCH", base+"/playground/v1/sandboxes/"+sb.ID+"/settings", "application/json", []byte(`{"retention":"soon"}`), 400, nil)

	// Changed later, and measured on the sandbox's clock: advancing it
	// past the retention compacts the history at once.
	settings := base + "/playground/v1/sandboxes/" + sb.ID + "/settings"
	var s api.Settings
	call(t, "PATCH", settings, "application/json", []byte(`{"retention":"10m"}`), 200, &s)
	if s.Retention != "10m0s" {
		t.Errorf("retention after PATCH %q", s.Retention)
	}
	cms := base + sb.Server + "/api/v1/namespaces/default/configmaps"
	var cm struct {
		Metadata struct{ ResourceVersion string }
	}
	call(t, "POST", cms, "application/json", []byte(`{"metadata":{"name":"a"}}`), 201, &cm)
	call(t, "PUT", cms+"/a", "application/json", []byte(`{"metadata":{"name":"a"},"data":{"k":"v"}}`), 200, nil)
	old := cms + "?resourceVersionMatch=Exact&resourceVersion=" + cm.Metadata.ResourceVersion
	call(t, "GET", old, "", nil, 200, nil)
	call(t, "POST", base+"/playground/v1/sandboxes/"+sb.ID+"/clock", "application/json", []byte(`{"advance":"9m"}`), 200, nil)
	call(t, "GET", old, "", nil, 200, nil)
	call(t, "POST", base+"/playground/v1/sandboxes/"+sb.ID+"/clock", "application/json", []byte(`{"advance":"2m"}`), 200, nil)
	call(t, "GET", old, "", nil, 410, nil)
	// A reset keeps it.
	call(t, "POST", base+"/playground/v1/sandboxes/"+sb.ID+"/reset", "", nil, 200, nil)
	call(t, "GET", settings, "", nil, 200, &s)
	if s.Retention != "10m0s" {
		t.Errorf("retention after a reset %q", s.Retention)
	}
}

// TestAPI_hosted: with an admin token, the playground API serves only its
// holder, and each sandbox's API only its own token's and the admin's.
func TestAPI_hosted(t *testing.T) {
	const admin = "admin-secret"
	base := serve(t, playground.ManagerOptions{InMemory: true, AdminToken: admin})
	var e apiError
	h := call(t, "POST", base+"/playground/v1/sandboxes", "", nil, 401, &e)
	if h.Get("WWW-Authenticate") == "" || !strings.Contains(e.Error.Message, "needs the admin token") {
		t.Errorf("401: %v %+v", h, e)
	}
	callAs(t, "wrong", "GET", base+"/playground/v1/sandboxes", "", nil, 401, nil)
	call(t, "GET", base+"/playground/v1/openapi.json", "", nil, 200, nil)

	var a, b api.Sandbox
	callAs(t, admin, "POST", base+"/playground/v1/sandboxes", "", nil, 201, &a)
	callAs(t, admin, "POST", base+"/playground/v1/sandboxes", "", nil, 201, &b)
	if a.Token == "" || b.Token == "" || a.Token == b.Token || a.Token == admin {
		t.Fatalf("tokens %q and %q", a.Token, b.Token)
	}
	ns := base + a.Server + "/api/v1/namespaces"
	callAs(t, a.Token, "GET", ns, "", nil, 200, nil)
	callAs(t, admin, "GET", ns, "", nil, 200, nil)
	var st struct{ Reason string }
	call(t, "GET", ns, "", nil, 401, &st)
	callAs(t, b.Token, "GET", ns, "", nil, 401, &st)
	callAs(t, b.Token, "GET", ns+"?watch=1", "", nil, 401, nil)
	if st.Reason != "Unauthorized" {
		t.Errorf("a foreign token: %+v", st)
	}
	// A sandbox's token is no key to the playground API, its own
	// sandbox's endpoints included.
	for _, path := range []string{"", "/kubeconfig", "/journal", "/settings", "/snapshot"} {
		callAs(t, a.Token, "GET", base+"/playground/v1/sandboxes/"+a.ID+path, "", nil, 401, nil)
	}
	callAs(t, a.Token, "DELETE", base+"/playground/v1/sandboxes/"+b.ID, "", nil, 401, nil)
	var kc []byte
	callAs(t, admin, "GET", base+"/playground/v1/sandboxes/"+a.ID+"/kubeconfig", "", nil, 200, &kc)
	if !strings.Contains(string(kc), `token: "`+a.Token+`"`) || strings.Contains(string(kc), admin) {
		t.Errorf("kubeconfig:\n%s", kc)
	}
	// Scenarios run with the sandbox's token.
	var out []byte
	callAs(t, admin, "POST", base+"/playground/v1/sandboxes/"+a.ID+"/run?builtin=dry-run", "", nil, 200, &out)
	if !strings.HasSuffix(string(out), "{\"passed\":true}\n") {
		t.Errorf("run:\n%s", out)
	}
}
