package playground_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// rulesOf returns a ClusterRole's rules as JSON ("null" when it has none).
func rulesOf(t *testing.T, sb interface{ Handler() http.Handler }, name string) string {
	t.Helper()
	_, obj := do(t, sb.Handler(), "GET", "/apis/rbac.authorization.k8s.io/v1/clusterroles/"+name, "")
	b, _ := json.Marshal(obj["rules"])
	return string(b)
}

func TestClusterRoleAggregation(t *testing.T) {
	sb := openSandbox(t)
	h := sb.Handler()
	// The default aggregated roles get the rules of the roles labelled for
	// them: view those of system:aggregate-to-view, edit view's too, admin
	// edit's too.
	waitFor(t, "view to aggregate", func() bool { return strings.Contains(rulesOf(t, sb, "view"), `"configmaps"`) })
	waitFor(t, "admin to aggregate", func() bool { return strings.Contains(rulesOf(t, sb, "admin"), `"rolebindings"`) })

	// A role created later with a matching label joins; relabelled, it leaves.
	if code, _ := do(t, h, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles",
		`{"metadata":{"name":"widgets-view","labels":{"rbac.authorization.k8s.io/aggregate-to-view":"true"}},"rules":[{"apiGroups":["example.com"],"resources":["widgets"],"verbs":["get"]}]}`); code != 201 {
		t.Fatalf("create widgets-view: %d", code)
	}
	waitFor(t, "view to include widgets", func() bool { return strings.Contains(rulesOf(t, sb, "view"), `"widgets"`) })
	waitFor(t, "admin to include widgets", func() bool { return strings.Contains(rulesOf(t, sb, "admin"), `"widgets"`) })
	if code, _ := do(t, h, "DELETE", "/apis/rbac.authorization.k8s.io/v1/clusterroles/widgets-view", ""); code != 200 {
		t.Fatalf("delete widgets-view: %d", code)
	}
	waitFor(t, "view to drop widgets", func() bool { return !strings.Contains(rulesOf(t, sb, "view"), `"widgets"`) })
}
