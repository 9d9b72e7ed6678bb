package e2e_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"kubeplay/e2e"
)

// TestKubectl_Writes runs kubectl's write commands against kubeplay: apply
// (client-side, server-side with a conflict and --force-conflicts, and the
// migrations between them), patch of each type, label, annotate, set image,
// scale, replace and edit. The managedFields expected after each step are
// what a real kube-apiserver v1.35 recorded for the same commands.
func TestKubectl_Writes(t *testing.T) {
	kubectl := e2e.Kubectl(t, e2e.Start(t, t.TempDir()).URL)
	k := func(stdin string, args ...string) string { t.Helper(); return kubectl.Stdin(stdin).Succeeds(args...) }
	expect := func(out, want string) {
		t.Helper()
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// managers lists the managedFields of configmap app as "manager operation
	// fieldsV1" lines, sorted: entries written within the same second are
	// ordered by time, which differs from run to run.
	managers := func(want ...string) {
		t.Helper()
		var obj struct {
			Metadata struct {
				ManagedFields []struct {
					Manager   string          `json:"manager"`
					Operation string          `json:"operation"`
					FieldsV1  json.RawMessage `json:"fieldsV1"`
				} `json:"managedFields"`
			} `json:"metadata"`
		}
		out := k("", "-n", "flows", "get", "configmap", "app", "-o", "json", "--show-managed-fields")
		if err := json.Unmarshal([]byte(out), &obj); err != nil {
			t.Fatalf("%v:\n%s", err, out)
		}
		var got []string
		for _, e := range obj.Metadata.ManagedFields {
			var fields bytes.Buffer
			if err := json.Compact(&fields, e.FieldsV1); err != nil {
				t.Fatal(err)
			}
			got = append(got, e.Manager+" "+e.Operation+" "+fields.String())
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("managedFields:\n got: %q\nwant: %q", got, want)
		}
	}
	manifest := func(value string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app, namespace: flows}\ndata: {a: \"" + value + "\"}\n"
	}
	const lastApplied = `"f:kubectl.kubernetes.io/last-applied-configuration":{}`

	expect(k("", "create", "namespace", "flows"), "namespace/flows created")
	expect(k(manifest("1"), "apply", "-f", "-"), "configmap/app created")
	expect(k(manifest("2"), "apply", "-f", "-"), "configmap/app configured")
	managers(`kubectl-client-side-apply Update {"f:data":{".":{},"f:a":{}},"f:metadata":{"f:annotations":{".":{},` + lastApplied + `}}}`)

	expect(k(manifest("2"), "apply", "--server-side", "-f", "-"), "configmap/app serverside-applied")
	managers(`kubectl Apply {"f:data":{"f:a":{}}}`,
		`kubectl-last-applied Apply {"f:metadata":{"f:annotations":{`+lastApplied+`}}}`)

	out, err := kubectl.Stdin(manifest("3")).Run("apply", "--server-side", "--field-manager", "other", "-f", "-")
	if err == nil {
		t.Errorf("a conflicting server-side apply succeeded:\n%s", out)
	}
	expect(out, `Apply failed with 1 conflict: conflict with "kubectl": .data.a`)
	expect(k(manifest("3"), "apply", "--server-side", "--field-manager", "other", "--force-conflicts", "-f", "-"), "configmap/app serverside-applied")
	managers(`kubectl-last-applied Apply {"f:metadata":{"f:annotations":{`+lastApplied+`}}}`,
		`other Apply {"f:data":{"f:a":{}}}`)

	expect(k(manifest("4"), "apply", "-f", "-"), "configmap/app configured")
	managers(`kubectl-client-side-apply Update {"f:data":{"f:a":{}},"f:metadata":{"f:annotations":{` + lastApplied + `}}}`)

	expect(k("", "-n", "flows", "patch", "configmap", "app", "--type=json", "-p", `[{"op":"add","path":"/data/j","value":"1"}]`), "configmap/app patched")
	expect(k("", "-n", "flows", "patch", "configmap", "app", "--type=merge", "-p", `{"data":{"m":"1"}}`), "configmap/app patched")
	expect(k("", "-n", "flows", "patch", "configmap", "app", "--type=strategic", "-p", `{"data":{"s":"1"}}`), "configmap/app patched")
	expect(k("", "-n", "flows", "label", "configmap", "app", "tier=web"), "configmap/app labeled")
	expect(k("", "-n", "flows", "annotate", "configmap", "app", "note=hi"), "configmap/app annotated")
	managers(`kubectl-client-side-apply Update {"f:data":{"f:a":{}},"f:metadata":{"f:annotations":{`+lastApplied+`}}}`,
		`kubectl-annotate Update {"f:metadata":{"f:annotations":{"f:note":{}}}}`,
		`kubectl-label Update {"f:metadata":{"f:labels":{".":{},"f:tier":{}}}}`,
		`kubectl-patch Update {"f:data":{"f:j":{},"f:m":{},"f:s":{}}}`)

	expect(k("", "-n", "flows", "create", "deployment", "web", "--image=nginx:1"), "deployment.apps/web created")
	expect(k("", "-n", "flows", "set", "image", "deployment/web", "nginx=nginx:2"), "deployment.apps/web image updated")
	expect(k("", "-n", "flows", "scale", "deployment", "web", "--replicas=3"), "deployment.apps/web scaled")
	expect(k("", "-n", "flows", "get", "deployment", "web", "-o", "jsonpath={.spec.replicas} {.spec.template.spec.containers[0].image} {.metadata.generation}"), "3 nginx:2 3")

	current := k("", "-n", "flows", "get", "configmap", "app", "-o", "yaml")
	expect(k(strings.Replace(current, "note: hi", "note: replaced", 1), "replace", "-f", "-"), "configmap/app replaced")
	out, err = kubectl.Env("EDITOR=sed -i s/tier:\\ web/tier:\\ edited/").Run("-n", "flows", "edit", "configmap", "app")
	if err != nil {
		t.Fatalf("kubectl edit: %v\n%s", err, out)
	}
	expect(out, "configmap/app edited")
	expect(k("", "-n", "flows", "get", "configmap", "app", "-o", "jsonpath={.metadata.labels.tier} {.metadata.annotations.note}"), "edited replaced")
	managers(`kubectl-client-side-apply Update {"f:data":{"f:a":{}}}`,
		`kubectl-edit Update {"f:metadata":{"f:labels":{"f:tier":{}}}}`,
		`kubectl-replace Update {"f:metadata":{"f:annotations":{`+lastApplied+`,"f:note":{}}}}`,
		`kubectl-label Update {"f:metadata":{"f:labels":{}}}`,
		`kubectl-patch Update {"f:data":{"f:j":{},"f:m":{},"f:s":{}}}`)
}
