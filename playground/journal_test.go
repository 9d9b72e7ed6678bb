package playground_test

import (
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"kubeplay/playground"
	"kubeplay/server"
)

func TestDeletionJournal_RequestsAndActors(t *testing.T) {
	// Without the garbage collector, which would remove foregroundDeletion.
	sb := openSandboxWith(t, playground.Options{Controllers: playground.Controllers{}.Without("garbageCollector")})
	h := sb.Handler()
	cm := createCM(t, h, "default", "j", `"finalizers":["example.com/a","example.com/b"]`)

	// A dry run is not a deletion: nothing is recorded.
	mustDo(t, h, 200, "DELETE", cmPath("default", "j")+"?dryRun=All", "")
	if tl := sb.DeletionJournal().Timeline(uidOf(cm)); len(tl) != 0 {
		t.Fatalf("dry run recorded: %+v", tl)
	}
	req := httptest.NewRequest("DELETE", cmPath("default", "j"), strings.NewReader(`{"propagationPolicy":"Foreground","gracePeriodSeconds":5}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "kubectl/v1.35.0 (linux/amd64) kubernetes/abc")
	h.ServeHTTP(httptest.NewRecorder(), req)

	req = httptest.NewRequest("PUT", cmPath("default", "j"), strings.NewReader(`{"metadata":{"name":"j","finalizers":["example.com/b","foregroundDeletion"]}}`))
	req.Header.Set("User-Agent", "my-operator")
	h.ServeHTTP(httptest.NewRecorder(), req)

	tl := sb.DeletionJournal().TimelineOf(schema.GroupResource{Resource: "configmaps"}, "default", "j")
	if got, want := phases(tl), []server.DeletionPhase{server.PhaseDeleteRequested, server.PhaseMarked, server.PhaseFinalizerRemoved}; !slices.Equal(got, want) {
		t.Fatalf("timeline %v, want %v", got, want)
	}
	req0 := tl[0]
	if req0.Actor != "kubectl/v1.35.0 (linux/amd64) kubernetes/abc" || string(*req0.Options.PropagationPolicy) != "Foreground" || *req0.Options.GracePeriodSeconds != 5 {
		t.Errorf("request %+v", req0)
	}
	if m := tl[1]; m.DeletionTimestamp == "" || *m.GracePeriod != 0 || !slices.Equal(m.Finalizers, []string{"example.com/a", "example.com/b", "foregroundDeletion"}) {
		t.Errorf("marked %+v", m)
	}
	if f := tl[2]; f.Finalizer != "example.com/a" || f.Actor != "my-operator" {
		t.Errorf("finalizer removal %+v", f)
	}
}

func TestDeletionJournal_Deleting(t *testing.T) {
	sb := openSandbox(t)
	h := sb.Handler()
	createCM(t, h, "default", "held", `"finalizers":["example.com/hold"]`)
	createCM(t, h, "default", "gone", "")
	mustDo(t, h, 200, "DELETE", cmPath("default", "held"), "")
	mustDo(t, h, 200, "DELETE", cmPath("default", "gone"), "")

	got := sb.DeletionJournal().Deleting(5)
	if len(got) != 1 || got[0].Object.Name != "held" || !slices.Equal(got[0].Finalizers, []string{"example.com/hold"}) {
		t.Fatalf("deleting %+v, want held waiting for example.com/hold", got)
	}
	mustDo(t, h, 200, "PUT", cmPath("default", "held"), `{"metadata":{"name":"held","finalizers":null}}`)
	if got := sb.DeletionJournal().Deleting(5); len(got) != 0 {
		t.Errorf("after its finalizer went: %+v", got)
	}
}
