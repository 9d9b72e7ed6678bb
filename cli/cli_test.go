package cli_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"kubeplay/cli"
	"kubeplay/playground"
	"kubeplay/store"
)

func newConsole(t *testing.T) *cli.Console {
	t.Helper()
	st, err := store.Open(t.Context(), ":memory:", store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Without kube-system's add-ons, most of a sandbox's start: the
	// console's commands are what is tested here.
	sb, err := playground.Open(t.Context(), playground.Options{Store: st, Controllers: playground.Controllers{}.Without("kubeadm")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	return cli.New(sb.Handler())
}

const deployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: nginx}]
`

// TestConsole_Run runs a learner's session; each step's expected output is
// what kubectl prints for it (ages, uids and versions left out).
func TestConsole_Run(t *testing.T) {
	c := newConsole(t)
	steps := []struct {
		line, file string
		want       []string // lines or fragments the output must contain
		wantErr    bool
	}{
		{line: "kubectl create -f -", file: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: demo\ndata:\n  k: v\n", want: []string{"configmap/demo created"}},
		{line: "get configmaps", want: []string{"NAME", "DATA", "AGE", "demo", "1 "}},
		{line: "get cm demo -o yaml", want: []string{"apiVersion: v1", "kind: ConfigMap", "  k: v", "  name: demo"}},
		{line: "get cm -o json", want: []string{`"kind": "List"`, `"kind": "ConfigMap"`}},
		{line: "get cm -o name", want: []string{"configmap/demo"}},
		{line: "get cm missing", want: []string{`Error from server (NotFound): configmaps "missing" not found`}, wantErr: true},
		{line: "get jobs -n kube-system", want: []string{"No resources found in kube-system namespace."}},
		{line: "label cm demo tier=web", want: []string{"configmap/demo labeled"}},
		{line: "label cm demo tier=db", want: []string{"error: 'tier' already has a value (web), and --overwrite is false"}, wantErr: true},
		{line: "label cm demo tier=db --overwrite", want: []string{"configmap/demo labeled"}},
		{line: "get cm -l tier=db -o name", want: []string{"configmap/demo"}},
		{line: "annotate cm/demo note='hello world'", want: []string{"configmap/demo annotated"}},
		{line: "describe cm demo", want: []string{"Name:         demo\nNamespace:    default\nLabels:       tier=db\nAnnotations:  note: hello world\n\nData\n====\nk:\n----\nv\n", "Events:  <none>"}},
		{line: `patch cm demo --type merge -p '{"data":{"k":"w"}}'`, want: []string{"configmap/demo patched"}},
		{line: `patch cm demo --type json -p '[{"op":"add","path":"/data/j","value":"x"}]'`, want: []string{"configmap/demo patched"}},
		{line: `patch cm demo -p '{"data":{"s":"y"}}'`, want: []string{"configmap/demo patched"}},
		{line: "apply -f x.yaml", file: deployment, want: []string{"deployment.apps/web created"}},
		{line: "apply -f x.yaml", file: deployment, want: []string{"deployment.apps/web unchanged"}},
		{line: "apply -f x.yaml", file: strings.Replace(deployment, "replicas: 1", "replicas: 2", 1), want: []string{"deployment.apps/web configured"}},
		{line: "get deploy web -o jsonpath", want: []string{"unable to match a printer"}, wantErr: true},
		{line: "get deploy -o wide", want: []string{"NAME", "READY", "CONTAINERS", "IMAGES", "SELECTOR", "web", "nginx", "app=web"}},
		{line: "scale deployment web --replicas=3", want: []string{"deployment.apps/web scaled"}},
		{line: "get deploy web -o yaml", want: []string{"replicas: 3"}},
		{line: "describe deploy web", want: []string{"Name:         web\n", "Labels:       app=web\n", "spec:\n", "  replicas: 3\n"}},
		{line: "apply --server-side --field-manager alice -f m.yaml", file: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa\ndata:\n  a: '1'\n", want: []string{"configmap/ssa serverside-applied"}},
		{line: "apply --server-side --field-manager bob -f m.yaml", file: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa\ndata:\n  a: '2'\n", want: []string{`error: Apply failed with 1 conflict: conflict with "alice": .data.a`, "--force-conflicts"}, wantErr: true},
		{line: "apply --server-side --field-manager bob --force-conflicts -f m.yaml", file: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa\ndata:\n  a: '2'\n", want: []string{"configmap/ssa serverside-applied"}},
		{line: "get cm ssa -o yaml --show-managed-fields", want: []string{"manager: bob", "a: \"2\""}},
		{line: "delete deployment web --cascade=foreground", want: []string{`deployment.apps "web" deleted`}},
		{line: "delete cm demo ssa", want: []string{`configmap "demo" deleted`, `configmap "ssa" deleted`}},
		{line: "api-resources", want: []string{"NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND", "configmaps", "cm", "deployments", "deploy", "apps/v1"}},
		{line: "explain configmaps", want: []string{"KIND:       ConfigMap", "VERSION:    v1", "DESCRIPTION:", "FIELDS:", "  data\t<map[string]string>"}},
		{line: "explain deployments.spec.replicas", want: []string{"GROUP:      apps", "FIELD: replicas <integer>"}},
		{line: "GET /api/v1/namespaces/default", want: []string{"HTTP 200 OK", `"kind": "Namespace"`}},
		// An outdated hash redirects to the current one, which kubectl follows.
		{line: "GET /openapi/v3/version?hash=0", want: []string{"HTTP 200 OK", `"openapi": "3.0.0"`}},
		{line: "POST /api/v1/namespaces/default/configmaps", file: `{"metadata":{"name":"raw"}}`, want: []string{"HTTP 201 Created", `"name": "raw"`}},
		{line: "frobnicate", want: []string{`error: unknown command "frobnicate"`}, wantErr: true},
		{line: "get nosuchthings", want: []string{`error: the server doesn't have a resource type "nosuchthings"`}, wantErr: true},
	}
	for _, s := range steps {
		var out strings.Builder
		err := c.Run(t.Context(), s.line, s.file, &out)
		if (err != nil) != s.wantErr {
			t.Errorf("%s: error %v, want error %v\n%s", s.line, err, s.wantErr, out.String())
		}
		for _, w := range s.want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("%s: output lacks %q:\n%s", s.line, w, out.String())
			}
		}
	}
}

func TestConsole_RunWatch(t *testing.T) {
	c := newConsole(t)
	ctx, cancel := context.WithCancel(t.Context())
	pr, pw := newPipe()
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx, "get cm -w", "", pw) }()
	waitFor(t, pr, "kube-root-ca.crt", "NAME") // the list first (or its header)
	var out strings.Builder
	if err := c.Run(t.Context(), "create -f -", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: watched}\n", &out); err != nil {
		t.Fatal(err, out.String())
	}
	waitFor(t, pr, "watched")
	cancel()
	if err := <-done; err != nil {
		t.Errorf("a watch stopped by its context: %v", err)
	}
}

// pipe collects a watch's output for waitFor.
type pipe struct{ lines chan string }

func newPipe() (*pipe, *pipe) { p := &pipe{lines: make(chan string, 100)}; return p, p }

func (p *pipe) Write(b []byte) (int, error) { p.lines <- string(b); return len(b), nil }

// waitLimit bounds a wait for something that must happen. It only ends a
// broken run, so it is generous: a loaded machine (CI) can be many times
// slower than an idle one. It leaves a margin before the test binary's
// -timeout for the test to fail with its own message.
func waitLimit(t *testing.T) time.Duration {
	if d, ok := t.Deadline(); ok {
		return max(time.Until(d)-30*time.Second, time.Until(d)/2)
	}
	return 2 * time.Minute
}

// waitFor waits until some output contains one of the strings.
func waitFor(t *testing.T, p *pipe, any ...string) {
	t.Helper()
	deadline := time.After(waitLimit(t))
	for {
		select {
		case l := <-p.lines:
			for _, s := range any {
				if strings.Contains(l, s) {
					return
				}
			}
		case <-deadline:
			t.Fatalf("no output with %q", any)
		}
	}
}

func TestConsole_RunRawWarnings(t *testing.T) {
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Add("Warning", `299 - "unknown field \"colour\""`)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		w.Write([]byte(`{"kind":"ConfigMap"}`))
	})
	var out strings.Builder
	if err := cli.New(api).Run(t.Context(), "POST /api/v1/namespaces/default/configmaps", "{}", &out); err != nil {
		t.Fatal(err)
	}
	want := "HTTP 201 Created\nWarning: unknown field \"colour\"\n{\n  \"kind\": \"ConfigMap\"\n}\n"
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
}

// The in-process console follows redirects as an http.Client does: the
// same requests reach the API (methods, bodies, headers, Referer) and the
// command prints the last answer.
func TestConsole_RunRawRedirects(t *testing.T) {
	for _, code := range []int{301, 302, 303, 307, 308} {
		for _, method := range []string{"GET", "HEAD", "POST", "PUT"} {
			t.Run(fmt.Sprintf("%d %s", code, method), func(t *testing.T) {
				var direct, client []string
				var out [2]strings.Builder
				for i, console := range []*cli.Console{
					cli.New(redirecting(code, &direct)),
					cli.NewClient("http://kubeplay", (&http.Client{Transport: recorderTransport{redirecting(code, &client)}}).Do, ""),
				} {
					if err := console.Run(t.Context(), method+" /a", `{"data":{}}`, &out[i]); err != nil {
						t.Fatal(err)
					}
				}
				if !slices.Equal(direct, client) || out[0].String() != out[1].String() {
					t.Errorf("in process: %q, printed\n%s\nhttp.Client: %q, printed\n%s", direct, out[0].String(), client, out[1].String())
				}
				if len(direct) != 3 {
					t.Errorf("%d requests, want 3 (two redirects)", len(direct))
				}
			})
		}
	}
	t.Run("too many", func(t *testing.T) {
		api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/a", http.StatusFound)
		})
		var out strings.Builder
		if err := cli.New(api).Run(t.Context(), "GET /a", "", &out); err == nil || !strings.Contains(err.Error(), "stopped after 10 redirects") {
			t.Errorf("err = %v, want stopped after 10 redirects", err)
		}
	})
}

// redirecting answers /a and /b with a redirect (code) to the next, and /c,
// noting each request in seen.
func redirecting(code int, seen *[]string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		h := r.Header.Clone()
		h.Del("Content-Length") // the client's transport would add it
		*seen = append(*seen, fmt.Sprintf("%s %s %v %s", r.Method, r.URL.RequestURI(), h, body))
		switch r.URL.Path {
		case "/a":
			w.Header().Set("Location", "/b?x=1")
		case "/b":
			w.Header().Set("Location", "http://kubeplay/c")
		default:
			w.Write([]byte(`{"kind":"Status"}`))
			return
		}
		w.WriteHeader(code)
	})
}

// recorderTransport serves each request with a handler, as a network
// server would get it.
type recorderTransport struct{ h http.Handler }

func (t recorderTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	r := req.Clone(req.Context())
	if r.Body == nil {
		r.Body = http.NoBody
	}
	t.h.ServeHTTP(rec, r)
	res := rec.Result()
	res.Request = req
	return res, nil
}

// The generators make what kubectl's make: a Deployment labelled app=NAME
// whose container is named after its image, a ConfigMap from literals, a
// pod labelled run=NAME, each with kubectl's field manager.
func TestConsole_Generators(t *testing.T) {
	c := newConsole(t)
	run := func(line string) string {
		t.Helper()
		var out strings.Builder
		if err := c.Run(t.Context(), line, "", &out); err != nil {
			t.Fatalf("%s: %v\n%s", line, err, out.String())
		}
		return out.String()
	}
	// In order: the pod goes into the namespace made before it, once the
	// namespace has the default ServiceAccount a pod needs (as a learner
	// may have to wait for it on a cluster).
	for _, tt := range []struct{ line, want string }{
		{"create deployment web --image=registry.k8s.io/nginx:1.27 --replicas=2 --port=80", "deployment.apps/web created\n"},
		{"create configmap settings --from-literal=color=blue --from-literal=size=m", "configmap/settings created\n"},
		{"create secret generic token --from-literal=t=s3cret", "secret/token created\n"},
		{"create namespace team-a", "namespace/team-a created\n"},
		{"run probe --image=busybox -n team-a", "pod/probe created\n"},
	} {
		if strings.HasPrefix(tt.line, "run ") {
			for c.Run(t.Context(), "get serviceaccount default -n team-a", "", io.Discard) != nil {
				if t.Context().Err() != nil {
					t.Fatal("no default ServiceAccount in team-a")
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
		if got := run(tt.line); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.line, got, tt.want)
		}
	}
	for line, want := range map[string][]string{
		"get deployment web -o yaml":                            {"app: web", "replicas: 2", "- containerPort: 80", "image: registry.k8s.io/nginx:1.27", "name: nginx", "matchLabels:"},
		"get cm settings -o yaml":                               {"color: blue", "size: m"},
		"get pod probe -n team-a -o yaml --show-managed-fields": {"run: probe", "name: probe", "image: busybox", "manager: kubectl-run"},
		"get deployment web -o yaml --show-managed-fields":      {"manager: kubectl-create"},
	} {
		got := run(line)
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: no %q in\n%s", line, w, got)
			}
		}
	}
	var out strings.Builder
	if err := c.Run(t.Context(), "create deployment web2", "", &out); err == nil || !strings.Contains(out.String(), `required flag(s) "image" not set`) {
		t.Errorf("create deployment without --image: %v %q", err, out.String())
	}
}
