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
	if len(entries) < 4 {
		t.Fatalf("journal has %d entries", len(entries))
	}
	first := entries[0]
	if first.Method != "POST" || first.Path != "/api/v1/namespaces" || first.Status != 201 ||
		!strings.Contains(string(first.Request.Body), `"doomed"`) || !strings.Contains(string(first.Response.Body), `"uid"`) {
		t.Errorf("first entry: %s %s %d %s -> %s", first.Method, first.Path, first.Status, first.Request.Body, first.Response.Body)
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
