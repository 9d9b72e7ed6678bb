package playground_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"kubeplay/playground"
	"kubeplay/server"
	"kubeplay/store"
)

// openSandboxWith opens a sandbox with opts, over a new in-memory store
// unless opts has one, once the serviceaccount controller (if it runs) has
// made the default namespace's ServiceAccount. kubeadm's add-ons are off
// (see openCluster) unless opts.Controllers names them.
func openSandboxWith(t testing.TB, opts playground.Options) *playground.Sandbox {
	t.Helper()
	if _, named := opts.Controllers.Off["kubeadm"]; !named {
		opts.Controllers = opts.Controllers.Without("kubeadm")
	}
	if opts.Store == nil {
		st, err := store.Open(t.Context(), ":memory:", store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		opts.Store = st
	}
	sb, err := playground.Open(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	if opts.Controllers.Running("serviceAccount") {
		// Pods need it, as on a cluster once its namespace exists.
		waitForDefaultServiceAccount(t, sb.Handler(), "default")
	}
	return sb
}

// mustDo sends a request and fails the test unless it answers want.
func mustDo(t testing.TB, h http.Handler, want int, method, path, body string) map[string]any {
	t.Helper()
	code, out := do(t, h, method, path, body)
	if code != want {
		t.Fatalf("%s %s: %d, want %d: %v", method, path, code, want, out)
	}
	return out
}

func uidOf(obj map[string]any) string { return obj["metadata"].(map[string]any)["uid"].(string) }

// ownerRef is an ownerReferences entry to a ConfigMap.
func ownerRef(name, uid string, block bool) string {
	return fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","name":%q,"uid":%q,"controller":true,"blockOwnerDeletion":%t}`, name, uid, block)
}

func createCM(t testing.TB, h http.Handler, ns, name string, extraMeta string) map[string]any {
	t.Helper()
	if extraMeta != "" {
		extraMeta = "," + extraMeta
	}
	return mustDo(t, h, 201, "POST", "/api/v1/namespaces/"+ns+"/configmaps", fmt.Sprintf(`{"metadata":{"name":%q%s}}`, name, extraMeta))
}

func gone(t testing.TB, h http.Handler, path string) func() bool {
	return func() bool {
		code, _ := do(t, h, "GET", path, "")
		return code == 404
	}
}

func cmPath(ns, name string) string { return "/api/v1/namespaces/" + ns + "/configmaps/" + name }

func phases(events []server.DeletionEvent) []server.DeletionPhase {
	var out []server.DeletionPhase
	for _, e := range events {
		out = append(out, e.Phase)
	}
	return out
}

func TestGarbageCollector_Background(t *testing.T) {
	sb := openSandboxWith(t, playground.Options{})
	h := sb.Handler()
	owner := createCM(t, h, "default", "owner", "")
	for i := range 3 {
		createCM(t, h, "default", fmt.Sprint("dep", i), `"ownerReferences":[`+ownerRef("owner", uidOf(owner), false)+`]`)
	}
	mustDo(t, h, 200, "DELETE", cmPath("default", "owner"), `{"propagationPolicy":"Background"}`)
	for i := range 3 {
		waitFor(t, "dependent to be collected", gone(t, h, cmPath("default", fmt.Sprint("dep", i))))
	}
	waitIdle(t, sb) // a controller records what its request did once the request is done
	tl := sb.DeletionJournal().Timeline(uidOf(owner))
	got := phases(tl)
	if got[0] != server.PhaseDeleteRequested || got[1] != server.PhaseRemoved || len(got) != 5 {
		t.Fatalf("owner timeline %v", got)
	}
	for _, e := range tl[2:] {
		// Each carries the revision of its removal, after the owner's, so
		// that the timeline's order does not depend on which request
		// returned first.
		if e.Phase != server.PhaseDependentDeleted || !strings.Contains(e.Actor, "generic-garbage-collector") || e.Revision <= tl[1].Revision {
			t.Errorf("owner timeline entry %+v (the owner removed at %d)", e, tl[1].Revision)
		}
	}
	if tl[0].Actor != "Go-http-client/1.1" && tl[0].Actor != "" {
		// httptest requests carry no User-Agent unless set.
		t.Errorf("requester %q", tl[0].Actor)
	}
}

func TestGarbageCollector_Foreground(t *testing.T) {
	sb := openSandboxWith(t, playground.Options{})
	h := sb.Handler()
	owner := createCM(t, h, "default", "owner", "")
	ref := ownerRef("owner", uidOf(owner), true)
	createCM(t, h, "default", "blocking", `"ownerReferences":[`+ref+`],"finalizers":["example.com/hold"]`)
	createCM(t, h, "default", "free", `"ownerReferences":[`+ownerRef("owner", uidOf(owner), false)+`]`)

	out := mustDo(t, h, 200, "DELETE", cmPath("default", "owner"), `{"propagationPolicy":"Foreground"}`)
	if fs := out["metadata"].(map[string]any)["finalizers"]; fmt.Sprint(fs) != "[foregroundDeletion]" {
		t.Fatalf("owner finalizers %v", fs)
	}
	waitFor(t, "non-blocking dependent to go", gone(t, h, cmPath("default", "free")))
	waitFor(t, "blocking dependent to be marked", func() bool {
		_, o := do(t, h, "GET", cmPath("default", "blocking"), "")
		return o["metadata"].(map[string]any)["deletionTimestamp"] != nil
	})
	// The blocking dependent's finalizer holds the owner.
	if code, _ := do(t, h, "GET", cmPath("default", "owner"), ""); code != 200 {
		t.Fatalf("owner gone while a blocking dependent remains: %d", code)
	}
	// The collector may still be writing the dependent: release its hold
	// once nothing is left to happen, or the PUT's resourceVersion is stale.
	waitIdle(t, sb)
	_, dep := do(t, h, "GET", cmPath("default", "blocking"), "")
	dep["metadata"].(map[string]any)["finalizers"] = []any{}
	b, _ := json.Marshal(dep)
	mustDo(t, h, 200, "PUT", cmPath("default", "blocking"), string(b))
	waitFor(t, "owner to go", gone(t, h, cmPath("default", "owner")))

	waitIdle(t, sb) // a controller records what its request did once the request is done
	got := phases(sb.DeletionJournal().Timeline(uidOf(owner)))
	for _, want := range []server.DeletionPhase{server.PhaseDeleteRequested, server.PhaseMarked, server.PhaseDependentDeleted, server.PhaseFinalizerRemoved, server.PhaseRemoved} {
		if !slices.Contains(got, want) {
			t.Errorf("owner timeline %v lacks %s", got, want)
		}
	}
}

func TestGarbageCollector_Orphan(t *testing.T) {
	sb := openSandboxWith(t, playground.Options{})
	h := sb.Handler()
	owner := createCM(t, h, "default", "owner", "")
	createCM(t, h, "default", "dep", `"ownerReferences":[`+ownerRef("owner", uidOf(owner), true)+`]`)
	mustDo(t, h, 200, "DELETE", cmPath("default", "owner"), `{"propagationPolicy":"Orphan"}`)
	waitFor(t, "owner to go", gone(t, h, cmPath("default", "owner")))
	_, dep := do(t, h, "GET", cmPath("default", "dep"), "")
	if refs := dep["metadata"].(map[string]any)["ownerReferences"]; refs != nil {
		t.Errorf("orphaned dependent still has owner references %v", refs)
	}
	waitIdle(t, sb) // a controller records what its request did once the request is done
	got := phases(sb.DeletionJournal().Timeline(uidOf(owner)))
	want := []server.DeletionPhase{server.PhaseDeleteRequested, server.PhaseMarked, server.PhaseDependentOrphaned, server.PhaseFinalizerRemoved, server.PhaseRemoved}
	if !slices.Equal(got, want) {
		t.Errorf("owner timeline %v, want %v", got, want)
	}
}

func TestGarbageCollector_DanglingOwner(t *testing.T) {
	h := openSandboxWith(t, playground.Options{}).Handler()
	createCM(t, h, "default", "dep", `"ownerReferences":[`+ownerRef("never-existed", "5d2a6a5c-0000-4000-8000-000000000000", false)+`]`)
	waitFor(t, "a dependent whose owner does not exist to be collected", gone(t, h, cmPath("default", "dep")))
}

func TestGarbageCollector_OrphanKeepsDependent(t *testing.T) {
	h := openSandboxWith(t, playground.Options{}).Handler()
	owner := createCM(t, h, "default", "owner", "")
	createCM(t, h, "default", "dep", `"ownerReferences":[`+ownerRef("owner", uidOf(owner), true)+`]`)
	// Jobs and ReplicationControllers orphan by default; a ConfigMap when asked.
	mustDo(t, h, 200, "DELETE", cmPath("default", "owner")+"?orphanDependents=true", "")
	waitFor(t, "owner to go", gone(t, h, cmPath("default", "owner")))
	waitFor(t, "dependent to lose its owner reference", func() bool {
		_, dep := do(t, h, "GET", cmPath("default", "dep"), "")
		md, _ := dep["metadata"].(map[string]any)
		return md != nil && md["ownerReferences"] == nil
	})
}

func TestGarbageCollector_Scopes(t *testing.T) {
	h := openSandboxWith(t, playground.Options{}).Handler()
	mustDo(t, h, 201, "POST", "/api/v1/namespaces", `{"metadata":{"name":"other"}}`)
	// A cluster-scoped owner of a namespaced dependent.
	cr := mustDo(t, h, 201, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", `{"metadata":{"name":"owner-role"}}`)
	createCM(t, h, "default", "of-role", fmt.Sprintf(`"ownerReferences":[{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","name":"owner-role","uid":%q}]`, uidOf(cr)))
	// A namespaced owner in another namespace: treated as absent.
	otherOwner := createCM(t, h, "other", "owner", "")
	createCM(t, h, "default", "cross-ns", `"ownerReferences":[`+ownerRef("owner", uidOf(otherOwner), false)+`]`)
	// A cluster-scoped dependent of a namespaced kind: unresolvable, kept.
	mustDo(t, h, 201, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles",
		`{"metadata":{"name":"bad-dep","ownerReferences":[`+ownerRef("owner", uidOf(otherOwner), false)+`]}}`)

	waitFor(t, "the cross-namespace dependent to be collected", gone(t, h, cmPath("default", "cross-ns")))
	waitFor(t, "warning events", func() bool {
		_, evs := do(t, h, "GET", "/api/v1/namespaces/default/events", "")
		items, _ := evs["items"].([]any)
		var msgs []string
		for _, it := range items {
			if ev := it.(map[string]any); ev["reason"] == "OwnerRefInvalidNamespace" && ev["type"] == "Warning" {
				msgs = append(msgs, ev["message"].(string))
			}
		}
		slices.Sort(msgs)
		// The messages kube-controller-manager's garbage collector writes.
		return slices.Equal(msgs, []string{
			fmt.Sprintf(`ownerRef [v1/ConfigMap, namespace: , name: owner, uid: %s] does not exist in namespace ""`, uidOf(otherOwner)),
			fmt.Sprintf(`ownerRef [v1/ConfigMap, namespace: default, name: owner, uid: %s] does not exist in namespace "default"`, uidOf(otherOwner)),
		})
	})
	if code, _ := do(t, h, "GET", "/apis/rbac.authorization.k8s.io/v1/clusterroles/bad-dep", ""); code != 200 {
		t.Errorf("cluster-scoped dependent of a namespaced owner: %d, want it kept", code)
	}
	if code, _ := do(t, h, "GET", cmPath("default", "of-role"), ""); code != 200 {
		t.Fatalf("dependent of a live cluster-scoped owner: %d", code)
	}
	mustDo(t, h, 200, "DELETE", "/apis/rbac.authorization.k8s.io/v1/clusterroles/owner-role", "")
	waitFor(t, "the dependent of the cluster-scoped owner to go", gone(t, h, cmPath("default", "of-role")))
}

func TestGarbageCollector_Cycle(t *testing.T) {
	h := openSandboxWith(t, playground.Options{}).Handler()
	a := createCM(t, h, "default", "a", "")
	b := createCM(t, h, "default", "b", `"ownerReferences":[`+ownerRef("a", uidOf(a), true)+`]`)
	a["metadata"].(map[string]any)["ownerReferences"] = []any{map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": "b", "uid": uidOf(b), "blockOwnerDeletion": true}}
	body, _ := json.Marshal(a)
	mustDo(t, h, 200, "PUT", cmPath("default", "a"), string(body))
	mustDo(t, h, 200, "DELETE", cmPath("default", "a"), `{"propagationPolicy":"Foreground"}`)
	waitFor(t, "both objects of the cycle to go", func() bool {
		return gone(t, h, cmPath("default", "a"))() && gone(t, h, cmPath("default", "b"))()
	})
}

func TestGarbageCollector_Disabled(t *testing.T) {
	h := openSandboxWith(t, playground.Options{Controllers: playground.Controllers{}.Without("garbageCollector")}).Handler()
	owner := createCM(t, h, "default", "owner", "")
	createCM(t, h, "default", "dep", `"ownerReferences":[`+ownerRef("owner", uidOf(owner), true)+`]`)
	out := mustDo(t, h, 200, "DELETE", cmPath("default", "owner"), `{"propagationPolicy":"Foreground"}`)
	// Without the garbage collector the owner stays, as on a cluster whose
	// kube-controller-manager is down, and so does its dependent.
	if out["metadata"].(map[string]any)["deletionTimestamp"] == nil {
		t.Fatalf("owner not marked: %v", out)
	}
	createCM(t, h, "default", "probe", "") // a later write, after which a running collector would have acted
	for _, name := range []string{"owner", "dep"} {
		if code, _ := do(t, h, "GET", cmPath("default", name), ""); code != 200 {
			t.Errorf("%s: %d with the garbage collector off", name, code)
		}
	}
}

func TestKubelet_RemovesGracefullyDeletedPods(t *testing.T) {
	// The pod's node does not exist: the pod garbage collector would look
	// at it again after its quarantine, keeping the sandbox busy.
	sb := openSandboxWith(t, playground.Options{Controllers: playground.Controllers{}.Without("podGC")})
	h := sb.Handler()
	waitForDefaultServiceAccount(t, h, "default")
	pod := mustDo(t, h, 201, "POST", "/api/v1/namespaces/default/pods", `{"metadata":{"name":"p"},"spec":{"nodeName":"node-1","terminationGracePeriodSeconds":1,"containers":[{"name":"c","image":"nginx"}]}}`)
	out := mustDo(t, h, 200, "DELETE", "/api/v1/namespaces/default/pods/p", "")
	if g := out["metadata"].(map[string]any)["deletionGracePeriodSeconds"]; g != float64(1) {
		t.Fatalf("grace period %v", g)
	}
	if code, _ := do(t, h, "GET", "/api/v1/namespaces/default/pods/p", ""); code != 200 {
		t.Fatalf("pod gone before its grace period: %d", code)
	}
	waitFor(t, "the kubelet to delete the pod", gone(t, h, "/api/v1/namespaces/default/pods/p"))
	waitIdle(t, sb) // a controller records what its request did once the request is done
	tl := sb.DeletionJournal().Timeline(uidOf(pod))
	last := tl[len(tl)-1]
	if last.Phase != server.PhaseRemoved || !strings.HasPrefix(last.Actor, "kubelet/") {
		t.Errorf("last phase %+v", last)
	}
	if tl[len(tl)-2].Options == nil || *tl[len(tl)-2].Options.GracePeriodSeconds != 0 {
		t.Errorf("the kubelet's request %+v", tl[len(tl)-2])
	}
}

func TestSandbox_UnsafeDeletionOfCorruptObject(t *testing.T) {
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	t.Run("feature gate off", func(t *testing.T) {
		sb := openSandboxWith(t, playground.Options{})
		h := sb.Handler()
		if err := sb.PlantUndecodable(t.Context(), gvr, "default", "bad", []byte(`{"kind":"ConfigMap"`)); err != nil {
			t.Fatal(err)
		}
		// kube-apiserver v1.35 with the gate off (recorded from the oracle).
		out := mustDo(t, h, 500, "GET", cmPath("default", "bad"), "")
		if out["message"] != "couldn't get version/kind; json parse error: unexpected end of JSON input" || out["reason"] != nil {
			t.Errorf("GET: %v", out)
		}
		mustDo(t, h, 500, "DELETE", cmPath("default", "bad")+"?ignoreStoreReadErrorWithClusterBreakingPotential=true", "")
	})
	t.Run("feature gate on", func(t *testing.T) {
		sb := openSandboxWith(t, playground.Options{FeatureGates: server.FeatureGates{server.AllowUnsafeMalformedObjectDeletion: true}})
		h := sb.Handler()
		if err := sb.PlantUndecodable(t.Context(), gvr, "default", "bad", []byte(`{"kind":"ConfigMap"`)); err != nil {
			t.Fatal(err)
		}
		out := mustDo(t, h, 500, "GET", cmPath("default", "bad"), "")
		msg, _ := out["message"].(string)
		if out["reason"] != "InternalError" || !strings.HasPrefix(msg, "Internal error occurred: StorageError: corrupt object, Code: 7, Key: /configmaps/default/bad, ResourceVersion: 0, AdditionalErrorMsg: object not decodable revision=") ||
			!strings.HasSuffix(msg, ": couldn't get version/kind; json parse error: unexpected end of JSON input") {
			t.Errorf("GET: %v", out)
		}
		out = mustDo(t, h, 422, "DELETE", cmPath("default", "bad"), `{"ignoreStoreReadErrorWithClusterBreakingPotential":true,"propagationPolicy":"Orphan","gracePeriodSeconds":3,"dryRun":["All"],"preconditions":{"uid":"x"}}`)
		if out["message"] != `DeleteOptions.meta.k8s.io "" is invalid: [ignoreStoreReadErrorWithClusterBreakingPotential: Invalid value: true: cannot be set together with .dryRun, ignoreStoreReadErrorWithClusterBreakingPotential: Invalid value: true: cannot be set together with .propagationPolicy, ignoreStoreReadErrorWithClusterBreakingPotential: Invalid value: true: cannot be set together with .gracePeriodSeconds, ignoreStoreReadErrorWithClusterBreakingPotential: Invalid value: true: cannot be set together with .preconditions]` {
			t.Errorf("combined options: %v", out["message"])
		}
		out = mustDo(t, h, 422, "DELETE", "/api/v1/namespaces/default/configmaps?ignoreStoreReadErrorWithClusterBreakingPotential=true", "")
		if out["message"] != `DeleteOptions.meta.k8s.io "" is invalid: ignoreStoreReadErrorWithClusterBreakingPotential: Invalid value: true: is not allowed with DELETECOLLECTION, try again after removing the option` {
			t.Errorf("deletecollection: %v", out["message"])
		}
		createCM(t, h, "default", "good", "")
		out = mustDo(t, h, 422, "DELETE", cmPath("default", "good")+"?ignoreStoreReadErrorWithClusterBreakingPotential=true", "")
		if out["message"] != `configmaps "good" is invalid: ignoreStoreReadErrorWithClusterBreakingPotential: Invalid value: true: is exclusively used to delete corrupt object(s), try again by removing this option` {
			t.Errorf("healthy object: %v", out["message"])
		}
		out = mustDo(t, h, 200, "DELETE", cmPath("default", "bad")+"?ignoreStoreReadErrorWithClusterBreakingPotential=true", "")
		want := `map[apiVersion:v1 code:200 details:map[kind:ConfigMap name:bad] kind:Status metadata:map[] status:Success]`
		if fmt.Sprint(out) != want {
			t.Errorf("unsafe delete: %v\nwant %s", out, want)
		}
		mustDo(t, h, 404, "GET", cmPath("default", "bad"), "")
		tl := sb.DeletionJournal().TimelineOf(schema.GroupResource{Resource: "configmaps"}, "default", "bad")
		if len(tl) != 1 || tl[0].Phase != server.PhaseRemoved {
			t.Errorf("journal %+v", tl)
		}
	})
}
