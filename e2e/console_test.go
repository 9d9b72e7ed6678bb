package e2e_test

import (
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"kubeplay/e2e"
)

// console runs a command line through the native server's console.
func console(t *testing.T, server, line, file string) string {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"command": line, "file": file})
	res, err := http.Post(server+"/kubeplay/console", "application/json", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// TestConsole_MatchesKubectl runs the same commands through the console and
// through kubectl against one server: the outputs must be the same (the
// commands are chosen to print nothing that changes between two runs, such
// as ages).
func TestConsole_MatchesKubectl(t *testing.T) {
	url := e2e.Start(t, t.TempDir()).URL
	kubectl := e2e.Kubectl(t, url)
	manifest := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: same\n  labels: {app: demo}\ndata:\n  greeting: hello\n"
	kubectl.Stdin(manifest).Succeeds("create", "-f", "-")
	kubectl.Stdin("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: described\n  labels: {a: b, c: d}\n  annotations: {x: z, w: v}\n"+
		// One data key: kubectl describe prints several in map order, which varies.
		"data:\n  multi: |\n    line1\n    line2\nbinaryData:\n  b: aGVsbG8=\n").Succeeds("create", "-f", "-")
	for _, args := range [][]string{
		{"get", "configmap", "same", "-o", "yaml"},
		{"get", "configmap", "same", "-o", "json"},
		{"get", "configmaps", "-l", "app=demo", "-o", "yaml"},
		{"get", "configmaps", "-o", "name"},
		{"get", "namespaces", "-o", "name"},
		{"api-resources"},
		{"get", "configmaps"},
		{"get", "configmaps", "-A"},
		{"get", "namespaces", "-o", "wide"},
		{"get", "configmap", "same"},
		{"get", "configmaps", "-l", "app=other"},
		{"get", "configmaps", "-n", "kube-system"},
		{"describe", "configmap", "described"},
		{"describe", "namespace", "default"},
		{"get", "nosuchthings"},
		{"get", "configmap", "missing"},
		{"explain", "configmaps"},
		{"explain", "configmaps.data"},
		{"explain", "deployments.spec"},
		{"explain", "pods.spec.containers"},
		{"explain", "pods.spec.containers.resources"},
		{"explain", "pods.metadata.creationTimestamp"},
		{"explain", "pods.spec.containers.ports.containerPort"},
		{"explain", "pods.spec.containers.imagePullPolicy"},
		{"explain", "services.spec"},
		{"explain", "deployments.spec.strategy.rollingUpdate"},
	} {
		out, _ := kubectl.Run(args...)
		want := ageless(out)
		got := ageless(console(t, url, strings.Join(args, " "), ""))
		if got != want {
			t.Errorf("%s:\n--- console\n%s\n--- kubectl\n%s", strings.Join(args, " "), got, want)
		}
	}
}

// TestConsole_MatchesKubectlWrites runs the same writes through kubectl and
// the console, each on its own objects (k-... and c-...): their messages,
// failures included, must be the same but for the names.
func TestConsole_MatchesKubectlWrites(t *testing.T) {
	url := e2e.Start(t, t.TempDir()).URL
	kubectl := e2e.Kubectl(t, url)
	cm := func(name, data string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\ndata:\n  k: " + data + "\n"
	}
	steps := []struct {
		args string // NAME stands for the object's name
		file func(name string) string
	}{
		{args: "create -f -", file: func(n string) string { return cm(n, "a") }},
		{args: "create -f -", file: func(n string) string { return cm(n, "a") }}, // AlreadyExists
		{args: "label configmap NAME tier=web"},
		{args: "label configmap NAME tier=db"}, // no --overwrite
		{args: "label configmap NAME tier=db --overwrite"},
		{args: "label configmap NAME tier-"},
		{args: "annotate configmap NAME note=hi"},
		{args: "annotate configmap NAME note-"},
		{args: `patch configmap NAME --type merge -p '{"data":{"k":"b"}}'`},
		{args: `patch configmap NAME --type json -p '[{"op":"replace","path":"/data/k","value":"c"}]'`},
		{args: `patch configmap NAME -p '{"data":{"j":"d"}}'`},
		{args: `patch configmap NAME -p '{"data":{"j":"d"}}'`},
		{args: "apply -f -", file: func(n string) string { return cm(n+"-applied", "a") }},
		{args: "apply -f -", file: func(n string) string { return cm(n+"-applied", "a") }},
		{args: "apply -f -", file: func(n string) string { return cm(n+"-applied", "b") }},
		{args: "apply --server-side --field-manager alice -f -", file: func(n string) string { return cm(n+"-ssa", "a") }},
		{args: "apply --server-side --field-manager bob -f -", file: func(n string) string { return cm(n+"-ssa", "b") }},
		{args: "apply --server-side --field-manager bob --force-conflicts -f -", file: func(n string) string { return cm(n+"-ssa", "b") }},
		{args: "get configmap NAME -o name"},
		{args: "delete configmap NAME NAME-applied --cascade=foreground"},
		{args: "get configmap NAME"},
		{args: "delete configmap NAME"},
	}
	for _, s := range steps {
		var kFile, cFile string
		if s.file != nil {
			kFile, cFile = s.file("k-demo"), s.file("c-demo")
		}
		// The arguments hold no spaces: the shell's quotes just go.
		kArgs := strings.Fields(strings.ReplaceAll(strings.ReplaceAll(s.args, "NAME", "k-demo"), "'", ""))
		want, _ := kubectl.Stdin(kFile).Run(kArgs...)
		got := console(t, url, strings.ReplaceAll(s.args, "NAME", "c-demo"), cFile)
		got = strings.ReplaceAll(got, "c-demo", "k-demo")
		if got != want {
			t.Errorf("%s:\n--- console\n%s--- kubectl\n%s", s.args, got, want)
		}
	}
}

// ageless replaces ages (12s, 3m) by "<age>" and runs of spaces by one
// space: ages may tick between the two commands, moving the columns.
func ageless(s string) string {
	s = regexp.MustCompile(`\b\d+[smhd]\b`).ReplaceAllString(s, "<age>")
	return regexp.MustCompile(` +`).ReplaceAllString(s, " ")
}
