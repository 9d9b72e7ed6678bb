package e2e_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"kubeplay/e2e"
)

// crdExplains are the kubectl explain commands on a custom resource whose
// outputs are compared with kubectl's against kube-apiserver, by golden
// file name (testdata/oracle/kubectl; recorded with -oracle-kubeconfig as
// TestKubectl_Discovery's).
var crdExplains = map[string][]string{
	"crd-explain-recursive": {"explain", "widgets", "--recursive"},
	"crd-explain-spec":      {"explain", "widgets.spec"},
}

// ages matches the AGE column's values, which depend on when a test runs.
var ages = regexp.MustCompile(`\b[0-9]+s\b`)

// TestKubectl_CRD drives a CustomResourceDefinition through kubectl against
// the native server: apply, wait for Established, custom objects created,
// listed with their printer columns, by short name and in "all",
// explained, rejected when invalid (by the schema or by CEL rules),
// applied server-side, and gone with their CRD. The expected outputs are kubectl's against kube-apiserver
// v1.35.4.
func TestKubectl_CRD(t *testing.T) {
	// The root's testdata: package server's FuzzCustomResources reads the CRD too.
	crd, err := os.ReadFile(filepath.Join("..", "testdata", "crd", "widgets.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	objects, err := os.ReadFile(filepath.Join("..", "testdata", "crd", "objects.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	golden := func(name string) string { return filepath.Join("testdata", "oracle", "kubectl", name+".txt") }
	if *oracleKubeconfig != "" {
		oracle := kubectlFor(t, "")
		oracle.Stdin(string(crd)).Succeeds("apply", "-f", "-")
		oracle.Succeeds("wait", "--for", "condition=established", "crd/widgets.kubectl.example.com")
		for name, args := range crdExplains {
			if err := os.WriteFile(golden(name), []byte(kubectlFor(t, "").Succeeds(args...)), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		oracle.Succeeds("delete", "crd", "widgets.kubectl.example.com")
		return
	}

	url := e2e.Start(t, t.TempDir()).URL
	kubectl := e2e.Kubectl(t, url)
	k := kubectl.Succeeds
	expect := func(got, want string) {
		t.Helper()
		if got != want {
			t.Errorf("kubectl printed\n%s\nwant\n%s", got, want)
		}
	}

	expect(kubectl.Stdin(string(crd)).Succeeds("apply", "-f", "-"), "customresourcedefinition.apiextensions.k8s.io/widgets.kubectl.example.com created\n")
	expect(k("wait", "--for", "condition=established", "crd/widgets.kubectl.example.com"),
		"customresourcedefinition.apiextensions.k8s.io/widgets.kubectl.example.com condition met\n")
	expect(kubectl.Stdin(string(objects)).Succeeds("apply", "-f", "-"), "widget.kubectl.example.com/w1 created\nwidget.kubectl.example.com/w2 created\n")
	table := "NAME   SIZE   COLOR   AGE\nw1     3      red     0s\nw2     7      blue    0s\n"
	expect(ages.ReplaceAllString(k("get", "wdg"), "0s"), table)
	expect(ages.ReplaceAllString(k("get", "widgets.kubectl.example.com", "-o", "wide"), "0s"), table)
	// As on a real cluster, the kubernetes Service is in default from the start.
	expect(ages.ReplaceAllString(k("get", "all", "-n", "default"), "0s"),
		"NAME                 TYPE        CLUSTER-IP   EXTERNAL-IP   PORT(S)   AGE\nservice/kubernetes   ClusterIP   10.96.0.1    <none>        443/TCP   0s\n\n"+
			"NAME                            SIZE   COLOR   AGE\nwidget.kubectl.example.com/w1   3      red     0s\nwidget.kubectl.example.com/w2   7      blue    0s\n")
	expect(k("get", "widget", "w1", "-o", "jsonpath={.spec.size} {.spec.ports[0].name}"), "3 http")
	for name, args := range crdExplains {
		want, err := os.ReadFile(golden(name))
		if err != nil {
			t.Fatal(err)
		}
		// A cache of its own: kubectl revalidates the OpenAPI index by date,
		// which changed within the second the CRD was created.
		expect(kubectlFor(t, url).Succeeds(args...), string(want))
	}

	invalid := `apiVersion: kubectl.example.com/v1
kind: Widget
metadata: {name: bad, namespace: default}
spec: {size: 0, color: green}
`
	out := kubectl.Stdin(invalid).Fails("create", "-f", "-")
	for _, line := range []string{
		`The Widget "bad" is invalid: `,
		`* spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1`,
		`* spec.color: Unsupported value: "green": supported values: "red", "blue"`,
		`* <nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation`,
	} {
		if !strings.Contains(out, line) {
			t.Errorf("kubectl create of an invalid widget printed\n%s\nwithout %q", out, line)
		}
	}

	// x-kubernetes-validations: two rules of spec (one with a
	// messageExpression) and a transition rule on spec.color.
	big := `apiVersion: kubectl.example.com/v1
kind: Widget
metadata: {name: big, namespace: default}
spec: {size: 11, color: red, ports: [{name: a, port: 0}]}
`
	expect(kubectl.Stdin(big).Fails("create", "-f", "-"), `The Widget "big" is invalid: `+"\n"+
		"* spec: Invalid value: size must be at most 10\n"+
		"* spec: Invalid value: ports of a red widget must be positive\n")
	expect(kubectl.Fails("patch", "widget", "w1", "--type", "merge", "-p", `{"spec":{"color":"blue"}}`),
		`The Widget "w1" is invalid: spec.color: Invalid value: "blue": color is immutable`+"\n")

	expect(kubectl.Stdin(string(objects)).Succeeds("apply", "--server-side", "-f", "-"),
		"widget.kubectl.example.com/w1 serverside-applied\nwidget.kubectl.example.com/w2 serverside-applied\n")
	expect(k("get", "widget", "w1", "-o", "jsonpath={.metadata.managedFields[*].manager}"), "kubectl-last-applied kubectl")

	expect(k("delete", "crd", "widgets.kubectl.example.com"), `customresourcedefinition.apiextensions.k8s.io "widgets.kubectl.example.com" deleted`+"\n")
	out = kubectl.Fails("get", "--raw", "/apis/kubectl.example.com/v1/namespaces/default/widgets")
	if !strings.Contains(out, "NotFound") {
		t.Errorf("widgets still served after their CRD was deleted:\n%s", out)
	}
}
