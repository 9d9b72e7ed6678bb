package playground_test

import (
	"slices"
	"strings"
	"testing"

	"kubeplay/playground/journal"
)

func TestSandbox_Journal(t *testing.T) {
	sb := openSandbox(t)
	h := sb.Handler()
	do(t, h, "POST", "/api/v1/namespaces", `{"metadata":{"name":"doomed"}}`)
	do(t, h, "DELETE", "/api/v1/namespaces/doomed", "")
	waitFor(t, "the namespace to be removed", func() bool {
		code, _ := do(t, h, "GET", "/api/v1/namespaces/doomed", "")
		return code == 404
	})

	entries, _ := sb.Journal().Page(0, 0)
	create := slices.IndexFunc(entries, func(e journal.Entry) bool {
		return e.Method == "POST" && e.Path == "/api/v1/namespaces"
	})
	if create < 0 {
		t.Fatalf("no POST of the namespace among %d entries", len(entries))
	}
	if e := entries[create]; e.Status != 201 || !strings.Contains(string(e.Request.Body), `"doomed"`) || !strings.Contains(string(e.Response.Body), `"uid"`) {
		t.Errorf("the create: %s %s %d %s -> %s", e.Method, e.Path, e.Status, e.Request.Body, e.Response.Body)
	}
	// The namespace controller's own requests are there too, the /finalize
	// that let the namespace go among them.
	finalize := slices.IndexFunc(entries, func(e journal.Entry) bool {
		return e.Method == "PUT" && e.Path == "/api/v1/namespaces/doomed/finalize"
	})
	if finalize < 0 {
		t.Fatalf("no /finalize request in the journal")
	}
	if ua := entries[finalize].UserAgent; !strings.HasPrefix(ua, "kube-controller-manager/") {
		t.Errorf("/finalize sent by %q", ua)
	}
}
