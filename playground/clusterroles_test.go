package playground_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
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

const clusterRolesPath = "/apis/rbac.authorization.k8s.io/v1/clusterroles"

// aggregated reports whether every ClusterRole with an aggregationRule has
// the rules of the roles its selectors match (other than itself), in name
// order, without duplicates: a state in which the controller has nothing
// left to write. Only matchLabels selectors are understood.
func aggregated(t *testing.T, h http.Handler) bool {
	t.Helper()
	roles := items(t, h, clusterRolesPath) // in name order
	labelsOf := func(role map[string]any) map[string]any {
		l, _ := role["metadata"].(map[string]any)["labels"].(map[string]any)
		return l
	}
	matches := func(selector, labels map[string]any) bool {
		if _, ok := selector["matchExpressions"]; ok {
			t.Fatalf("selector %s: matchExpressions are not understood here", jsonOf(selector))
		}
		want, _ := selector["matchLabels"].(map[string]any)
		for k, v := range want {
			if labels[k] != v {
				return false
			}
		}
		return true
	}
	for _, role := range roles {
		rule, ok := role["aggregationRule"].(map[string]any)
		if !ok {
			continue
		}
		selectors, _ := rule["clusterRoleSelectors"].([]any)
		var want, have []string
		for _, other := range roles {
			if other["metadata"].(map[string]any)["name"] == role["metadata"].(map[string]any)["name"] {
				continue
			}
			if !slices.ContainsFunc(selectors, func(s any) bool { return matches(s.(map[string]any), labelsOf(other)) }) {
				continue
			}
			rules, _ := other["rules"].([]any)
			for _, r := range rules {
				if j := jsonOf(r); !slices.Contains(want, j) {
					want = append(want, j)
				}
			}
		}
		rules, _ := role["rules"].([]any)
		for _, r := range rules {
			have = append(have, jsonOf(r))
		}
		if !slices.Equal(want, have) {
			return false
		}
	}
	return true
}

// Once the aggregated rules are in place, the controller writes nothing
// more and falls quiet. Every change to a ClusterRole, its own writes
// included, has each aggregating role looked at once more (a list; twice if
// a change names the role again while it is being looked at), and when
// those looks end depends on the machine: so they may come after the rules
// are in place, but must write nothing, and must end.
func TestClusterRoleAggregation_Quiet(t *testing.T) {
	sb := openSandbox(t)
	h := sb.Handler()
	waitFor(t, "the default roles to aggregate", func() bool { return aggregated(t, h) })
	mustDo(t, h, 201, "POST", clusterRolesPath,
		`{"metadata":{"name":"widgets-view","labels":{"rbac.authorization.k8s.io/aggregate-to-view":"true"}},"rules":[{"apiGroups":["example.com"],"resources":["widgets"],"verbs":["get"]}]}`)
	waitFor(t, "admin to take in widgets", func() bool {
		return strings.Contains(rulesOf(t, sb, "admin"), `"widgets"`) && aggregated(t, h)
	})

	seq := lastSeq(t, sb)
	waitFor(t, "the controller to fall quiet", func() bool {
		last := lastSeq(t, sb)
		time.Sleep(500 * time.Millisecond)
		for _, e := range requestsOf(t, sb, aggregationSA, seq) {
			if e.Method != "GET" || e.Path != clusterRolesPath {
				t.Fatalf("%s %s after the rules were in place", e.Method, e.Path)
			}
		}
		return len(requestsOf(t, sb, aggregationSA, last)) == 0
	})
}
