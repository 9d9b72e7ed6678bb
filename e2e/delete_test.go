package e2e_test

import (
	"fmt"
	"strings"
	"testing"

	"kubeplay/e2e"
)

// TestKubectl_DeleteCascade runs kubectl delete --cascade against the
// native server: the garbage collector gives the outcome a real cluster
// gives for each policy.
func TestKubectl_DeleteCascade(t *testing.T) {
	kubectl := e2e.Kubectl(t, e2e.Start(t, t.TempDir()).URL)
	k := kubectl.Succeeds
	// owned creates an owner ConfigMap and two dependents, one of which
	// blocks the owner's foreground deletion.
	owned := func(prefix string) {
		t.Helper()
		k("create", "configmap", prefix+"-owner")
		uid := k("get", "configmap", prefix+"-owner", "-o", "jsonpath={.metadata.uid}")
		for i, block := range []bool{true, false} {
			manifest := fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata:
  name: %s-dep%d
  ownerReferences: [{apiVersion: v1, kind: ConfigMap, name: %s-owner, uid: %s, blockOwnerDeletion: %t}]
`, prefix, i, prefix, uid, block)
			kubectl.Stdin(manifest).Succeeds("create", "-f", "-")
		}
	}
	missing := func(name string) bool {
		t.Helper()
		out, err := kubectl.Run("get", "configmap", name)
		return err != nil && strings.Contains(out, "NotFound")
	}

	t.Run("foreground", func(t *testing.T) {
		owned("fg")
		// kubectl waits for the owner, which goes only after its blocking dependent.
		if out := k("delete", "configmap", "fg-owner", "--cascade=foreground"); !strings.Contains(out, `configmap "fg-owner" deleted`) {
			t.Fatalf("output %q", out)
		}
		if !missing("fg-dep0") {
			t.Errorf("the blocking dependent outlived its owner")
		}
		k("wait", "--for=delete", "configmap/fg-dep1", e2e.TimeoutFlag(t))
	})
	t.Run("background", func(t *testing.T) {
		owned("bg")
		k("delete", "configmap", "bg-owner", "--cascade=background")
		k("wait", "--for=delete", "configmap/bg-dep0", "configmap/bg-dep1", e2e.TimeoutFlag(t))
	})
	t.Run("orphan", func(t *testing.T) {
		owned("or")
		k("delete", "configmap", "or-owner", "--cascade=orphan")
		if !missing("or-owner") {
			t.Fatal("owner still there after kubectl delete (which waits)")
		}
		for _, dep := range []string{"or-dep0", "or-dep1"} {
			if refs := k("get", "configmap", dep, "-o", "jsonpath={.metadata.ownerReferences}"); refs != "" {
				t.Errorf("%s kept its owner reference: %s", dep, refs)
			}
		}
	})
}
