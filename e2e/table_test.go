package e2e_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"kubeplay/e2e"
)

// The expected outputs in testdata/kubectl-get/ are kubectl's against a real
// kube-apiserver for the objects in testdata/kubectl-get.yaml. To re-record
// against a freshly started oracle:
//
//	go test ./e2e -run TestKubectlGet -oracle-kubeconfig /tmp/oracle/kubeconfig

// kubectlGets are the commands compared: each type's default and wide
// columns, which kubectl reads from the server's Table.
var kubectlGets = func() [][]string {
	var gets [][]string
	for _, t := range []string{
		"deployments", "replicasets", "statefulsets", "daemonsets", "cronjobs", "services",
		"configmaps", "secrets", "serviceaccounts", "endpointslices", "events", "leases",
		"roles", "rolebindings", "ingresses", "networkpolicies", "poddisruptionbudgets",
		"horizontalpodautoscalers",
	} {
		gets = append(gets, []string{"get", t, "-n", "tblk"}, []string{"get", t, "-n", "tblk", "-o", "wide"})
	}
	for _, t := range []string{
		"namespaces tblk default", "nodes tblk-node", "storageclasses tblk-fast", "priorityclasses tblk-high",
		"clusterroles tblk-viewer", "clusterrolebindings tblk-viewers",
	} {
		gets = append(gets, append([]string{"get"}, strings.Fields(t)...), append(append([]string{"get"}, strings.Fields(t)...), "-o", "wide"))
	}
	return gets
}()

func TestKubectlGet(t *testing.T) {
	manifest, err := os.ReadFile("testdata/kubectl-get.yaml")
	if err != nil {
		t.Fatal(err)
	}
	url := ""
	if *oracleKubeconfig == "" {
		url = e2e.Start(t, t.TempDir()).URL
	}
	run := func(t *testing.T, args ...string) string {
		t.Helper()
		return kubectlFor(t, url).Stdin(string(manifest)).Succeeds(args...)
	}
	run(t, "create", "-f", "-")
	for _, args := range kubectlGets {
		name := strings.Join(args[1:], "_")
		t.Run(name, func(t *testing.T) {
			got := run(t, args...)
			golden := filepath.Join("testdata", "kubectl-get", strings.ReplaceAll(name, " ", "_")+".txt")
			if *oracleKubeconfig != "" {
				os.MkdirAll(filepath.Dir(golden), 0o755)
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if normalizeGet(got) != normalizeGet(string(want)) {
				t.Errorf("kubectl %s:\n%s\noracle:\n%s", strings.Join(args, " "), got, want)
			}
		})
	}
}

var (
	ageWord   = regexp.MustCompile(`^([0-9]+[smhdy])+$`)
	timestamp = regexp.MustCompile(`[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z`)
	spaces    = regexp.MustCompile(` {2,}`)
)

// normalizeGet replaces what differs between two runs (ages, timestamps) and
// the column padding that depends on their width.
func normalizeGet(s string) string {
	s = timestamp.ReplaceAllString(s, "TIME")
	s = spaces.ReplaceAllString(s, "  ")
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		cols := strings.Split(l, "  ")
		for i, c := range cols {
			if ageWord.MatchString(strings.TrimSpace(c)) {
				cols[i] = "AGE"
			}
		}
		lines = append(lines, strings.Join(cols, "  "))
	}
	return strings.Join(lines, "\n")
}

// kubectl get -w prints the Tables of a watch. The expected lines are
// kubectl's against the oracle for the same steps (ages normalized).
func TestKubectlGetWatch(t *testing.T) {
	k := e2e.Kubectl(t, e2e.Start(t, t.TempDir()).URL)
	k.Succeeds("create", "namespace", "kw")
	k.Succeeds("-n", "kw", "create", "configmap", "a")

	watch := k.Start("-n", "kw", "get", "configmaps", "-w", "--output-watch-events")
	watch.Lines(2) // the header and the existing object: the watch is running
	k.Succeeds("-n", "kw", "create", "configmap", "b", "--from-literal=x=1")
	k.Stdin("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b, namespace: kw}\ndata: {x: '1', y: '2'}\n").Succeeds("replace", "-f", "-")
	k.Succeeds("-n", "kw", "delete", "configmap", "a")
	var got []string
	for _, l := range watch.Lines(5) {
		got = append(got, normalizeGet(l))
	}
	want := []string{
		"EVENT  NAME  DATA  AGE",
		"ADDED  a  0  AGE",
		"ADDED  b  1  AGE",
		"MODIFIED  b  2  AGE",
		"DELETED  a  0  AGE",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("kubectl get -w:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
