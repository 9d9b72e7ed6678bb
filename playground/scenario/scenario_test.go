package scenario_test

import (
	"crypto/tls"
	"flag"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"kubeplay/playground"
	"kubeplay/playground/api"
	"kubeplay/playground/scenario"
)

var (
	oracle      = flag.String("oracle", "", "also run the built-in scenarios against this kube-apiserver URL")
	oracleToken = flag.String("oracle-token", "", "bearer token for -oracle")
)

// sandboxTarget serves a fresh sandbox over HTTP, as the playground does.
func sandboxTarget(t *testing.T) scenario.Target {
	t.Helper()
	m, err := playground.NewManager(playground.ManagerOptions{InMemory: true, Limits: playground.Limits{RequestsPerSecond: -1}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api.New(m))
	t.Cleanup(func() {
		srv.Close()
		m.Close()
	})
	// Without kube-system's add-ons, most of a sandbox's start: kubeplay
	// run (package app's TestRun) runs every built-in scenario in a sandbox
	// as users get it.
	ms, err := m.Create(t.Context(), playground.CreateOptions{Controllers: playground.Controllers{}.Without("kubeadm")})
	if err != nil {
		t.Fatal(err)
	}
	// Over the network rather than in process, as a client of the
	// playground would run it.
	target := scenario.SandboxTarget(ms)
	target.Server, target.Client = srv.URL+"/sandboxes/"+ms.ID(), srv.Client()
	return target
}

func run(t *testing.T, sc *scenario.Scenario, target scenario.Target) (bool, []scenario.StepResult) {
	t.Helper()
	var results []scenario.StepResult
	ok, err := scenario.Run(t.Context(), sc, target, func(r scenario.StepResult) { results = append(results, r) })
	if err != nil {
		t.Fatal(err)
	}
	return ok, results
}

// TestBuiltin runs every built-in scenario in a sandbox and, with -oracle,
// against kube-apiserver, which keeps their expectations honest.
func TestBuiltin(t *testing.T) {
	all, err := scenario.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	if len(all) < 25 {
		t.Fatalf("%d built-in scenarios", len(all))
	}
	for _, sc := range all {
		t.Run(sc.Name, func(t *testing.T) {
			t.Parallel()
			targets := map[string]scenario.Target{"kubeplay": sandboxTarget(t)}
			if *oracle != "" && !sc.Sandbox {
				targets["oracle"] = scenario.Target{Server: *oracle, Token: *oracleToken,
					Client: &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}}
			}
			for name, target := range targets {
				ok, results := run(t, sc, target)
				if !ok {
					last := results[len(results)-1]
					t.Errorf("%s: step %d (%s) failed:\n  %s", name, last.Step, last.Name, strings.Join(last.Failures, "\n  "))
				}
			}
		})
	}
}

func TestRun_failure(t *testing.T) {
	sc, err := scenario.Parse([]byte(`
apiVersion: kubeplay.dev/v1
kind: Scenario
name: failing
steps:
- name: read
  request: {method: GET, path: /api/v1/namespaces/default}
  expect:
    status: 200
    headers: {Content-Type: application/yaml}
    jsonpath: {"{.metadata.name}": other, "{.status.phase}": Active}
  capture: {uid: "{.metadata.uid}"}
- name: never run
  request: {method: GET, path: "/api/v1/namespaces/${uid}"}
`))
	if err != nil {
		t.Fatal(err)
	}
	ok, results := run(t, sc, sandboxTarget(t))
	if ok || len(results) != 1 {
		t.Fatalf("ok=%v after %d steps", ok, len(results))
	}
	want := []string{`header Content-Type: "application/json", want it to contain "application/yaml"`, `{.metadata.name} = default, want other`}
	if got := results[0].Failures; strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("failures:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestRun_kubectl(t *testing.T) {
	sc, err := scenario.Parse([]byte(`
apiVersion: kubeplay.dev/v1
kind: Scenario
name: kubectl
steps:
- name: create
  kubectl: create -f -
  file: '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "k-${RUN}", "namespace": "default"}, "data": {"a": "b"}}'
  expect: {bodyContains: "configmap/k-${RUN} created"}
- name: read
  kubectl: kubectl get configmap k-${RUN} -o json
  expect: {jsonpath: {"{.data.a}": b}}
  capture: {uid: "{.metadata.uid}"}
- name: an expected error
  kubectl: get configmap none-${uid}
  expect: {error: "NotFound"}
- name: an unexpected error
  kubectl: get configmap none
`))
	if err != nil {
		t.Fatal(err)
	}
	ok, results := run(t, sc, sandboxTarget(t))
	if ok || len(results) != 4 {
		t.Fatalf("ok=%v after %d steps: %+v", ok, len(results), results)
	}
	for _, r := range results[:3] {
		if !r.OK() {
			t.Errorf("step %d: %v", r.Step, r.Failures)
		}
	}
	if !strings.HasPrefix(results[2].Output, `Error from server (NotFound): configmaps "none-`) {
		t.Errorf("output of step 3: %q", results[2].Output)
	}
	want := `the command failed: Error from server (NotFound): configmaps "none" not found`
	if got := strings.Join(results[3].Failures, "\n"); got != want {
		t.Errorf("failures of step 4: %s\nwant %s", got, want)
	}
}

func TestRun_watchThen(t *testing.T) {
	sc, err := scenario.Parse([]byte(`
apiVersion: kubeplay.dev/v1
kind: Scenario
name: then
steps:
- name: watch while writing
  watch:
    path: /api/v1/namespaces/default/configmaps?watch=1&fieldSelector=metadata.name%3Dthen-${RUN}
    events: 1
    then:
    - {method: POST, path: /api/v1/namespaces/default/configmaps, body: {metadata: {name: "then-${RUN}"}}}
    - {method: POST, path: /api/v1/namespaces/nowhere/configmaps, body: {metadata: {name: x}}}
  expect:
    events: [{type: ADDED, jsonpath: {"{.object.metadata.name}": "then-${RUN}"}}]
`))
	if err != nil {
		t.Fatal(err)
	}
	ok, results := run(t, sc, sandboxTarget(t))
	want := `then POST /api/v1/namespaces/nowhere/configmaps: status 404: {"kind":"Status"`
	if ok || len(results[0].Failures) != 1 || !strings.HasPrefix(results[0].Failures[0], want) {
		t.Errorf("failures %q, want one starting %q", results[0].Failures, want)
	}
}

func TestPrinter(t *testing.T) {
	var b strings.Builder
	p := scenario.Printer(&b)
	p(scenario.StepResult{Step: 1, Name: "get", Output: strings.Repeat("line\n", 12)})
	p(scenario.StepResult{Step: 2, Name: "read", Status: 404, Failures: []string{"status 404, want 200"}})
	want := "  ✓ 1. get (0s)\n" + strings.Repeat("      │ line\n", 10) + "      │ … (2 more lines)\n" +
		"  ✗ 2. read 404 (0s)\n      status 404, want 200\n"
	if b.String() != want {
		t.Errorf("printed:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestParse_errors(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{"apiVersion: v1\nkind: Scenario\nname: x\nsteps: [{name: a, advanceClock: 1s}]", "want apiVersion kubeplay.dev/v1"},
		{"apiVersion: kubeplay.dev/v1\nkind: Scenario\nname: x\nsteps: [{name: a}]", "want exactly one of"},
		{"apiVersion: kubeplay.dev/v1\nkind: Scenario\nname: x\nsteps: [{name: a, advanceClock: soon}]", "advanceClock"},
		{"apiVersion: kubeplay.dev/v1\nkind: Scenario\nname: x\nstep: []", `unknown field "step"`},
		{"apiVersion: kubeplay.dev/v1\nkind: Scenario\nname: x\nsteps: [{name: a, request: {method: GET, path: /}, file: x}]", "file goes with a kubectl command"},
		{"apiVersion: kubeplay.dev/v1\nkind: Scenario\nname: x\nsteps: [{name: a, controllers: {workloads: false}}]", "controllers need a sandbox"},
		{"apiVersion: kubeplay.dev/v1\nkind: Scenario\nname: x\nsandbox: true\nsteps: [{name: a, controllers: {finalizerBots: [{finalizer: f, delay: soon}]}}]", "finalizerBots: want a finalizer and a delay"},
		{"apiVersion: kubeplay.dev/v1\nkind: Scenario\nname: x\nsteps: [{name: a, kubectl: get pods, request: {method: GET, path: /}}]", "want exactly one of"},
	} {
		if _, err := scenario.Parse([]byte(tc.doc)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) = %v, want %q", tc.doc, err, tc.want)
		}
	}
}

func TestRun_needsSandbox(t *testing.T) {
	sc := &scenario.Scenario{Sandbox: true}
	if _, err := scenario.Run(t.Context(), sc, scenario.Target{}, nil); err != scenario.ErrNeedsSandbox {
		t.Errorf("Run = %v", err)
	}
}
