package playground_test

import (
	"strings"
	"testing"

	"kubeplay/playground"
	"kubeplay/playground/journal"
)

// The ServiceAccounts the kube-controller-manager controllers act as; their
// requests carry the name in their user agent.
const (
	policyStatusSA = "validatingadmissionpolicy-status-controller"
	aggregationSA  = "clusterrole-aggregation-controller"
)

// requestsOf returns the journal's entries after seq sent by the
// controller acting as the ServiceAccount sa.
func requestsOf(t *testing.T, sb *playground.Sandbox, sa string, after int64) []journal.Entry {
	t.Helper()
	entries, oldest := sb.Journal().Page(after, 0)
	if oldest > after+1 {
		t.Fatalf("the journal dropped entries %d to %d", after+1, oldest-1)
	}
	var out []journal.Entry
	for _, e := range entries {
		if strings.HasSuffix(e.UserAgent, "/system:serviceaccount:kube-system:"+sa) {
			out = append(out, e)
		}
	}
	return out
}

// describe lists entries for a failure message.
func describe(entries []journal.Entry) string {
	var out []string
	for _, e := range entries {
		out = append(out, e.Method+" "+e.Path)
	}
	return strings.Join(out, ", ")
}
