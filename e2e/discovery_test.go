package e2e_test

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"

	"kubeplay/e2e"
)

// The kubectl outputs in testdata/oracle/kubectl were recorded from
// kube-apiserver v1.35.4 with the kubectl on PATH (v1.32.4); re-record them
// against a freshly started oracle with
//
//	go test ./e2e -run TestKubectl_Discovery -oracle-kubeconfig <dir>/kubeconfig
//
// The flag serves every kubectl golden test of this package.
var oracleKubeconfig = flag.String("oracle-kubeconfig", "", "record kubectl's outputs against the kube-apiserver of this kubeconfig")

// jsonGolden is the recorded answer of objects, what a test reads through
// kubectl from the server at a URL: with -oracle-kubeconfig it is first
// recorded from the oracle (objects("")) into the JSON file golden.
func jsonGolden(t *testing.T, golden string, objects func(url string) map[string]any) map[string]any {
	t.Helper()
	if *oracleKubeconfig != "" {
		b, err := json.MarshalIndent(objects(""), "", " ")
		if err == nil {
			err = os.WriteFile(golden, append(b, '\n'), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	raw, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]any
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	return want
}

// discoveryCommands are the kubectl commands compared, by golden file name.
var discoveryCommands = map[string][]string{
	"api-resources":            {"api-resources"},
	"api-resources-wide":       {"api-resources", "-o", "wide"},
	"api-resources-namespaced": {"api-resources", "--namespaced=true"},
	"api-resources-cluster":    {"api-resources", "--namespaced=false"},
	"api-resources-apps":       {"api-resources", "--api-group=apps"},
	"api-resources-core":       {"api-resources", "--api-group="},
	"api-versions":             {"api-versions"},
	"explain-containers":       {"explain", "pods.spec.containers"},
	"explain-deployment":       {"explain", "deployment", "--recursive"},
	"explain-cm-data":          {"explain", "configmaps.data", "--output=plaintext-openapiv2"},
	"raw-api-v1":               {"get", "--raw", "/api/v1"},
	"raw-openapi-v3":           {"get", "--raw", "/openapi/v3"},
	"raw-root":                 {"get", "--raw", "/"},
}

// kubectlFor is a new kubectl runner, so with a discovery cache of its own,
// against the server at url or (url empty) the oracle's kubeconfig.
func kubectlFor(t *testing.T, url string) *e2e.KubectlRunner {
	if url == "" {
		return e2e.KubectlConfig(t, *oracleKubeconfig)
	}
	return e2e.Kubectl(t, url)
}

// TestKubectl_Discovery runs kubectl's discovery and OpenAPI commands
// against kubeplay and compares their outputs with kubectl's against the
// oracle. explain reads the same OpenAPI documents, so its output must be
// equal; for the lists, kubeplay serves fewer resources (see
// server.served), so its rows must be the oracle's rows of what it serves.
func TestKubectl_Discovery(t *testing.T) {
	golden := func(name string) string { return filepath.Join("testdata", "oracle", "kubectl", name+".txt") }
	if *oracleKubeconfig != "" {
		if err := os.MkdirAll(filepath.Dir(golden("x")), 0o755); err != nil {
			t.Fatal(err)
		}
		for name, args := range discoveryCommands {
			if err := os.WriteFile(golden(name), []byte(kubectlFor(t, "").Succeeds(args...)), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	url := e2e.Start(t, t.TempDir()).URL
	for name, args := range discoveryCommands {
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(golden(name))
			if err != nil {
				t.Fatal(err)
			}
			got, want := kubectlFor(t, url).Succeeds(args...), string(raw)
			switch {
			case strings.HasPrefix(name, "api-resources"):
				compareRows(t, got, want)
			case name == "api-versions":
				compareRows(t, got, want)
				if !strings.Contains(got, "apps/v1\n") {
					t.Errorf("api-versions lacks apps/v1:\n%s", got)
				}
			case name == "raw-api-v1":
				compareResourceList(t, got, want)
			case name == "raw-openapi-v3":
				compareIndex(t, got, want)
			case name == "raw-root":
				compareRootPaths(t, got, want)
			default:
				if got != want {
					t.Errorf("kubectl %s:\n%s\noracle:\n%s", strings.Join(args, " "), got, want)
				}
			}
		})
	}
}

// compareRows checks that the rows of a kubectl table (its columns split on
// blanks: widths depend on the rows) are the oracle's rows that kubeplay
// lists, in the same order, under the same header.
func compareRows(t *testing.T, got, want string) {
	t.Helper()
	rows := func(s string) []string {
		var out []string
		for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
			out = append(out, strings.Join(strings.Fields(line), " "))
		}
		return out
	}
	g, w := rows(got), rows(want)
	var expected []string
	for _, row := range w {
		if slices.Contains(g, row) {
			expected = append(expected, row)
		}
	}
	if !slices.Equal(g, expected) {
		t.Errorf("rows that are not the oracle's, or not in its order:\n%s\noracle:\n%s", got, want)
	}
	if len(g) < 2 || len(w) > 1 && g[0] != w[0] {
		t.Errorf("no rows, or a header other than the oracle's:\n%s", got)
	}
}

func compareResourceList(t *testing.T, got, want string) {
	t.Helper()
	var g, w struct {
		Kind         string           `json:"kind"`
		GroupVersion string           `json:"groupVersion"`
		Resources    []map[string]any `json:"resources"`
	}
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("%v\n%s", err, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	if g.Kind != w.Kind || g.GroupVersion != w.GroupVersion || len(g.Resources) == 0 {
		t.Errorf("got %s %s with %d resources, oracle %s %s", g.Kind, g.GroupVersion, len(g.Resources), w.Kind, w.GroupVersion)
	}
	for _, r := range g.Resources {
		i := slices.IndexFunc(w.Resources, func(o map[string]any) bool { return o["name"] == r["name"] })
		if i < 0 || !reflect.DeepEqual(r, w.Resources[i]) {
			t.Errorf("resource %v is not the oracle's", r)
		}
	}
}

func compareIndex(t *testing.T, got, want string) {
	t.Helper()
	var g, w struct {
		Paths map[string]map[string]string `json:"paths"`
	}
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("%v\n%s", err, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	if g.Paths["apis/apps/v1"] == nil {
		t.Errorf("the index lacks apis/apps/v1")
	}
	for path, entry := range g.Paths {
		if !reflect.DeepEqual(entry, w.Paths[path]) {
			t.Errorf("%s: %v, oracle %v", path, entry, w.Paths[path])
		}
	}
}

// compareRootPaths checks that kubectl reaches the API's root paths list (not
// the web UI) and that it lists only paths the oracle lists.
func compareRootPaths(t *testing.T, got, want string) {
	t.Helper()
	var g, w struct {
		Paths []string `json:"paths"`
	}
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("%v\n%.300s", err, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	for _, p := range g.Paths {
		if !slices.Contains(w.Paths, p) {
			t.Errorf("lists %s, which the oracle does not", p)
		}
	}
	if !slices.Contains(g.Paths, "/apis/apps/v1") || !slices.Contains(g.Paths, "/readyz") {
		t.Errorf("paths lack /apis/apps/v1 or /readyz: %v", g.Paths)
	}
}

// TestClientGo_Discovery reads kubeplay's discovery and OpenAPI documents
// with client-go, as controllers and tools do: aggregated discovery, the
// OpenAPI v3 index and a document, and the v2 document in protobuf.
func TestClientGo_Discovery(t *testing.T) {
	url := e2e.Start(t, t.TempDir()).URL
	dc, err := discovery.NewDiscoveryClientForConfig(&rest.Config{Host: url})
	if err != nil {
		t.Fatal(err)
	}
	groups, resources, err := dc.ServerGroupsAndResources()
	if err != nil {
		t.Fatal(err)
	}
	if len(groups) < 15 {
		t.Errorf("%d groups", len(groups))
	}
	found := false
	for _, list := range resources {
		for _, r := range list.APIResources {
			if list.GroupVersion == "apps/v1" && r.Name == "deployments" && r.Namespaced && slices.Equal(r.ShortNames, []string{"deploy"}) {
				found = true
			}
		}
	}
	if !found {
		t.Errorf("apps/v1 deployments not discovered as the oracle lists them")
	}

	paths, err := dc.OpenAPIV3().Paths()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := paths["apis/apps/v1"].Schema("application/json")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), `"io.k8s.api.apps.v1.Deployment"`) {
		t.Errorf("apis/apps/v1 document lacks the Deployment schema")
	}

	v2, err := dc.OpenAPISchema()
	if err != nil {
		t.Fatal(err)
	}
	if v2.GetInfo().GetTitle() != "Kubernetes" || len(v2.GetDefinitions().GetAdditionalProperties()) < 500 {
		t.Errorf("v2 document: %q with %d definitions", v2.GetInfo().GetTitle(), len(v2.GetDefinitions().GetAdditionalProperties()))
	}
}
