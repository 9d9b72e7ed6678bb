package e2e_test

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"kubeplay/e2e"
)

// defaultsSetup are the kubectl commands whose objects TestKubectl_Defaults
// compares: the generators learners use first, which send minimal objects
// that the server completes with its defaults.
var defaultsSetup = [][]string{
	{"create", "namespace", "kdefaults"},
	// The oracle runs no controller that would create it.
	{"-n", "kdefaults", "create", "serviceaccount", "default"},
	{"-n", "kdefaults", "create", "deployment", "web", "--image=nginx"},
	{"-n", "kdefaults", "expose", "deployment", "web", "--port=80", "--target-port=8080"},
	{"-n", "kdefaults", "create", "service", "nodeport", "np", "--tcp=80:8080"},
	{"-n", "kdefaults", "run", "pod1", "--image=nginx:1.27", "--port=80", "--labels=app=pod1"},
	{"-n", "kdefaults", "create", "job", "j", "--image=busybox"},
	{"-n", "kdefaults", "create", "cronjob", "cj", "--image=busybox", "--schedule=*/1 * * * *"},
	{"-n", "kdefaults", "create", "ingress", "ing", "--rule=example.com/*=web:80"},
	{"-n", "kdefaults", "create", "pdb", "pdb", "--selector=app=web", "--min-available=1"},
	{"-n", "kdefaults", "create", "quota", "q", "--hard=pods=10"},
	{"-n", "kdefaults", "create", "service", "externalname", "ext", "--external-name=example.com"},
	{"-n", "kdefaults", "create", "rolebinding", "rb", "--clusterrole=view", "--user=alice", "--group=devs", "--serviceaccount=kdefaults:default"},
}

var defaultsObjects = []string{
	"deployment/web", "service/web", "service/np", "pod/pod1", "job/j", "cronjob/cj",
	"ingress/ing", "pdb/pdb", "quota/q", "service/ext", "rolebinding/rb",
}

// TestKubectl_Defaults creates objects with kubectl's generators and checks
// that `kubectl get -o json --show-managed-fields` shows what the oracle
// showed for them (testdata/oracle/kubectl/defaults.json, recorded with
// -oracle-kubeconfig): the same defaults and the same managedFields.
func TestKubectl_Defaults(t *testing.T) {
	golden := filepath.Join("testdata", "oracle", "kubectl", "defaults.json")
	objects := func(url string) map[string]any {
		for _, args := range defaultsSetup {
			kubectlFor(t, url).Succeeds(args...)
		}
		out := map[string]any{}
		for _, o := range defaultsObjects {
			var obj map[string]any
			if err := json.Unmarshal([]byte(kubectlFor(t, url).Succeeds("-n", "kdefaults", "get", o, "-o", "json", "--show-managed-fields")), &obj); err != nil {
				t.Fatal(err)
			}
			out[o] = normalizeGenerated(obj, "")
		}
		return out
	}
	want := jsonGolden(t, golden, objects)
	got := objects(e2e.Start(t, t.TempDir()).URL)
	for _, o := range defaultsObjects {
		if !reflect.DeepEqual(got[o], want[o]) {
			g, _ := json.Marshal(got[o])
			w, _ := json.Marshal(want[o])
			t.Errorf("%s:\n got: %s\nwant: %s", o, g, w)
		}
	}
}

var (
	uidValue    = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	tokenVolume = regexp.MustCompile(`^kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}$`)
)

// normalizeGenerated replaces, in place, what each server generates
// differently: uids, times, resource versions, allocated addresses, the
// name of a pod's token volume.
func normalizeGenerated(v any, key string) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = normalizeGenerated(e, k)
		}
	case []any:
		for i, e := range x {
			x[i] = normalizeGenerated(e, key)
		}
	case string:
		switch {
		case uidValue.MatchString(x):
			return "UID"
		case tokenVolume.MatchString(x):
			return "kube-api-access-XXXXX"
		case key == "creationTimestamp" || key == "time" || key == "resourceVersion":
			return strings.ToUpper(key)
		case key == "clusterIP" || key == "clusterIPs":
			return "CLUSTER-IP"
		}
	case float64:
		if key == "nodePort" {
			return "NODE-PORT"
		}
	}
	return v
}
