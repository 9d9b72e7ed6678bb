package playground_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"kubeplay/playground"
	"kubeplay/server"
)

// condition returns the namespace condition of type t ("" fields if none).
func condition(ns map[string]any, t string) map[string]any {
	st, _ := ns["status"].(map[string]any)
	list, _ := st["conditions"].([]any)
	for _, c := range list {
		if m := c.(map[string]any); m["type"] == t {
			return m
		}
	}
	return map[string]any{}
}

// A namespace with 1,000 objects, some held by finalizers that the test
// removes later, terminates completely, and the journal has every phase of
// every object.
func TestNamespaceTermination_ThousandObjects(t *testing.T) {
	sb := openSandboxWith(t, playground.Options{})
	h := sb.Handler()
	mustDo(t, h, 201, "POST", "/api/v1/namespaces", `{"metadata":{"name":"big"}}`)
	const total, held = 1000, 40
	uids := map[string]string{} // path -> uid
	var owner map[string]any
	for i := range total {
		var obj map[string]any
		switch {
		case i < held:
			obj = createCM(t, h, "big", fmt.Sprint("held-", i), `"finalizers":["example.com/hold"]`)
		case i == held:
			owner = createCM(t, h, "big", "owner", "")
			obj = owner
		case i < 600:
			obj = createCM(t, h, "big", fmt.Sprint("cm-", i), `"ownerReferences":[`+ownerRef("owner", uidOf(owner), i%2 == 0)+`]`)
		default:
			obj = mustDo(t, h, 201, "POST", "/api/v1/namespaces/big/secrets", fmt.Sprintf(`{"metadata":{"name":"s-%d"},"stringData":{"k":"v"}}`, i))
		}
		md := obj["metadata"].(map[string]any)
		uids[fmt.Sprintf("%s/%s", obj["kind"], md["name"])] = md["uid"].(string)
	}
	nsObj := mustDo(t, h, 200, "GET", "/api/v1/namespaces/big", "")
	mustDo(t, h, 200, "DELETE", "/api/v1/namespaces/big", "")

	waitFor(t, "the content without finalizers to go and the conditions to say so", func() bool {
		_, ns := do(t, h, "GET", "/api/v1/namespaces/big", "")
		return condition(ns, "NamespaceContentRemaining")["message"] == fmt.Sprintf("Some resources are remaining: configmaps. has %d resource instances", held)
	})
	_, ns := do(t, h, "GET", "/api/v1/namespaces/big", "")
	for typ, want := range map[string]string{
		"NamespaceDeletionDiscoveryFailure": "False ResourcesDiscovered All resources successfully discovered",
		"NamespaceDeletionContentFailure":   "False ContentDeleted All content successfully deleted, may be waiting on finalization",
		"NamespaceContentRemaining":         fmt.Sprintf("True SomeResourcesRemain Some resources are remaining: configmaps. has %d resource instances", held),
		"NamespaceFinalizersRemaining":      fmt.Sprintf("True SomeFinalizersRemain Some content in the namespace has finalizers remaining: example.com/hold in %d resource instances", held),
	} {
		c := condition(ns, typ)
		if got := fmt.Sprint(c["status"], " ", c["reason"], " ", c["message"]); got != want {
			t.Errorf("%s: %q, want %q", typ, got, want)
		}
	}

	for i := range held {
		path := cmPath("big", fmt.Sprint("held-", i))
		_, obj := do(t, h, "GET", path, "")
		obj["metadata"].(map[string]any)["finalizers"] = nil
		b, _ := json.Marshal(obj)
		mustDo(t, h, 200, "PUT", path, string(b))
	}
	waitFor(t, "the namespace to go", gone(t, h, "/api/v1/namespaces/big"))

	waitIdle(t, sb) // a controller records what its request did once the request is done
	j := sb.DeletionJournal()
	for key, uid := range uids {
		tl := j.Timeline(uid)
		got := phases(tl)
		if len(tl) == 0 || got[len(got)-1] != server.PhaseRemoved {
			t.Fatalf("%s: timeline %v does not end with its removal", key, got)
		}
		if !slices.Contains(got, server.PhaseDeleteRequested) {
			t.Errorf("%s: timeline %v has no delete request", key, got)
		}
		if strings.HasPrefix(key, "ConfigMap/held-") {
			// The namespace controller asks again on every pass while the
			// finalizer holds the object: each request is in the journal.
			want := []server.DeletionPhase{server.PhaseDeleteRequested, server.PhaseMarked, server.PhaseFinalizerRemoved, server.PhaseRemoved}
			if c := slices.Compact(slices.DeleteFunc(slices.Clone(got[2:]), func(p server.DeletionPhase) bool { return p == server.PhaseDeleteRequested })); !slices.Equal(append(got[:2:2], c...), want) {
				t.Errorf("%s: timeline %v, want %v (with repeated requests)", key, got, want)
			}
			if f := tl[len(tl)-2]; f.Phase != server.PhaseFinalizerRemoved || f.Finalizer != "example.com/hold" || f.Actor != "" {
				t.Errorf("%s: finalizer removal %+v", key, f)
			}
		}
	}
	nsTL := j.TimelineOf(schema.GroupResource{Resource: "namespaces"}, "", "big")
	if got, want := phases(nsTL), []server.DeletionPhase{server.PhaseDeleteRequested, server.PhaseMarked, server.PhaseFinalizerRemoved, server.PhaseRemoved}; !slices.Equal(got, want) || nsTL[0].Object.UID != uidOf(nsObj) {
		t.Fatalf("namespace timeline %v, want %v", got, want)
	}
	if f := nsTL[2]; f.Finalizer != "kubernetes" || !strings.Contains(f.Actor, "namespace-controller") {
		t.Errorf("namespace finalizer removal %+v", f)
	}
}

// BenchmarkCascadeDelete measures the deletion of an owner with 1,000
// dependents until the garbage collector has deleted them all: in the
// foreground (the owner goes last) and in the background (the owner goes
// first).
func BenchmarkCascadeDelete(b *testing.B) {
	for _, policy := range []string{"Foreground", "Background"} {
		b.Run(policy, func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				sb := openSandboxWith(b, playground.Options{})
				h := sb.Handler()
				owner := createCM(b, h, "default", "owner", "")
				for i := range 1000 {
					createCM(b, h, "default", fmt.Sprint("dep-", i), `"ownerReferences":[`+ownerRef("owner", uidOf(owner), true)+`]`)
				}
				b.StartTimer()
				mustDo(b, h, 200, "DELETE", cmPath("default", "owner"), `{"propagationPolicy":"`+policy+`"}`)
				waitFor(b, "the cascade", func() bool {
					_, list := do(b, h, "GET", "/api/v1/namespaces/default/configmaps?limit=1", "")
					items, _ := list["items"].([]any)
					return len(items) == 0
				})
				b.StopTimer()
				sb.Close()
				b.StartTimer()
			}
		})
	}
}

// A namespace deleted in the foreground gets the foregroundDeletion
// finalizer too; the garbage collector removes it (a namespace has no
// dependents) and the namespace controller finishes the job.
func TestNamespaceTermination_Foreground(t *testing.T) {
	sb := openSandboxWith(t, playground.Options{})
	h := sb.Handler()
	mustDo(t, h, 201, "POST", "/api/v1/namespaces", `{"metadata":{"name":"fg"}}`)
	createCM(t, h, "fg", "a", "")
	out := mustDo(t, h, 200, "DELETE", "/api/v1/namespaces/fg", `{"propagationPolicy":"Foreground"}`)
	if fs := out["metadata"].(map[string]any)["finalizers"]; fmt.Sprint(fs) != "[foregroundDeletion]" {
		t.Fatalf("namespace finalizers %v", fs)
	}
	waitFor(t, "the namespace to go", gone(t, h, "/api/v1/namespaces/fg"))
	// The journal hears of the removal from the request that made it, just
	// after the store did: a reader may see the 404 first.
	timeline := func() []server.DeletionPhase {
		return phases(sb.DeletionJournal().TimelineOf(schema.GroupResource{Resource: "namespaces"}, "", "fg"))
	}
	waitFor(t, "the journal to record the removal", func() bool { return slices.Contains(timeline(), server.PhaseRemoved) })
	got := timeline()
	removed := 0
	for _, p := range got {
		if p == server.PhaseFinalizerRemoved {
			removed++
		}
	}
	if removed != 2 || got[len(got)-1] != server.PhaseRemoved {
		t.Errorf("namespace timeline %v: want both finalizers removed, then the namespace", got)
	}
}
