package playground_test

import (
	"testing"
	"time"

	"kubeplay/playground"
)

// lastSeq is the sequence number of the newest request in the sandbox's
// request journal.
func lastSeq(t testing.TB, sb *playground.Sandbox) int64 {
	t.Helper()
	entries, _ := sb.Journal().Page(0, 1<<30)
	if len(entries) == 0 {
		return 0
	}
	return entries[len(entries)-1].Seq
}

// waitIdle waits until every controller of sb has caught up with the store
// and has nothing queued, running or scheduled.
func waitIdle(t testing.TB, sb *playground.Sandbox) {
	t.Helper()
	waitFor(t, "the controllers to settle", func() bool {
		idle, err := sb.Idle(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		return idle
	})
}

// assertStaysIdle checks that a settled sandbox makes no request while time
// passes. Idle already means nothing is scheduled, so this only confirms it
// on the request journal; a slow machine can only make it pass more easily.
func assertStaysIdle(t testing.TB, sb *playground.Sandbox) {
	t.Helper()
	before := lastSeq(t, sb)
	time.Sleep(time.Second)
	if after := lastSeq(t, sb); after != before {
		entries, _ := sb.Journal().Page(before, 20)
		for _, e := range entries {
			t.Logf("%s %s %d %s", e.Method, e.Path, e.Status, e.UserAgent)
		}
		t.Fatalf("%d requests while idle", after-before)
	}
	if idle, _ := sb.Idle(t.Context()); !idle {
		t.Fatal("the sandbox has work scheduled after settling")
	}
}

// A namespace held in Terminating by one object's finalizer costs nothing:
// once the namespace controller has reported what remains, nothing runs
// until the object changes, however long it is held (kube-controller-manager
// would look again every few seconds; the change that releases the object
// is what matters, and it wakes the controller here).
func TestNamespaceTermination_StuckNamespaceIsIdle(t *testing.T) {
	sb := openCluster(t)
	h := sb.Handler()
	mustDo(t, h, 201, "POST", "/api/v1/namespaces", `{"metadata":{"name":"stuck"}}`)
	createCM(t, h, "stuck", "held", `"finalizers":["example.com/hold"]`)
	for i := range 20 {
		createCM(t, h, "stuck", "cm-"+string(rune('a'+i)), "")
	}
	waitIdle(t, sb)
	start := lastSeq(t, sb)
	mustDo(t, h, 200, "DELETE", "/api/v1/namespaces/stuck", "")
	waitFor(t, "the conditions to report the held object", func() bool {
		_, ns := do(t, h, "GET", "/api/v1/namespaces/stuck", "")
		return condition(ns, "NamespaceFinalizersRemaining")["reason"] == "SomeFinalizersRemain"
	})
	waitIdle(t, sb)
	// One pass of the namespace controller deletes and lists every
	// namespaced type (about 90 requests); the deletions it causes are
	// worth another pass or two, never more. (The test's own polling is
	// not counted: a loaded machine polls more.)
	n := len(requestsOf(t, sb, "namespace-controller", start))
	if n > 400 {
		t.Errorf("%d requests from the namespace controller to reach the stuck state", n)
	}
	t.Logf("%d requests from the namespace controller to reach the stuck state", n)
	assertStaysIdle(t, sb)

	_, held := do(t, h, "GET", cmPath("stuck", "held"), "")
	held["metadata"].(map[string]any)["finalizers"] = nil
	mustDo(t, h, 200, "PUT", cmPath("stuck", "held"), jsonOf(held))
	waitFor(t, "the namespace to go", gone(t, h, "/api/v1/namespaces/stuck"))
	waitIdle(t, sb)
}

// A foreground deletion blocked by a dependent that a finalizer holds, and
// an orphan finalizer nobody can act on, leave the garbage collector idle.
func TestGarbageCollector_BlockedDeletionIsIdle(t *testing.T) {
	sb := openSandbox(t)
	h := sb.Handler()
	owner := createCM(t, h, "default", "owner", "")
	createCM(t, h, "default", "dep", `"finalizers":["example.com/hold"],"ownerReferences":[`+ownerRef("owner", uidOf(owner), true)+`]`)
	mustDo(t, h, 200, "DELETE", cmPath("default", "owner"), `{"propagationPolicy":"Foreground"}`)
	waitFor(t, "the dependent to be deleted", func() bool {
		_, dep := do(t, h, "GET", cmPath("default", "dep"), "")
		return dep["metadata"].(map[string]any)["deletionTimestamp"] != nil
	})
	waitIdle(t, sb)
	assertStaysIdle(t, sb)
	mustDo(t, h, 200, "GET", cmPath("default", "owner"), "") // still waiting for dep

	_, dep := do(t, h, "GET", cmPath("default", "dep"), "")
	dep["metadata"].(map[string]any)["finalizers"] = nil
	mustDo(t, h, 200, "PUT", cmPath("default", "dep"), jsonOf(dep))
	waitFor(t, "the owner to go", gone(t, h, cmPath("default", "owner")))
	waitIdle(t, sb)
}

// A taint that evicts nothing, whatever time passes, and a toleration
// whose time has not come cost nothing: the controller asks nothing of the
// API until the eviction falls due.
func TestTaintEviction_TolerationIsIdle(t *testing.T) {
	// Without kubeadm's add-ons: the taint rightly evicts CoreDNS's pods,
	// which do not tolerate it.
	c := playground.Controllers{Nodes: 1}.Without("kubeadm")
	sb := openSandboxWith(t, playground.Options{Controllers: c})
	h := sb.Handler()
	waitNodes(t, sb, "kubeplay-worker")
	waitForDefaultServiceAccount(t, h, "default")
	anHour := 3600
	createPod(t, h, "forever", tolerating(nil))
	createPod(t, h, "patient", tolerating(&anHour))
	for _, name := range []string{"forever", "patient"} {
		waitFor(t, name+" to run", func() bool { return phaseOf(t, h, name) == "Running" })
	}
	waitIdle(t, sb)
	tainted := lastSeq(t, sb)
	mergePatch(t, h, "/api/v1/nodes/kubeplay-worker", noExecuteTaint(sb.Clock().Now()))
	waitFor(t, "the controller to look at both pods", func() bool {
		looked := map[string]bool{}
		for _, e := range requestsOf(t, sb, nodeControllerSA, tainted) {
			looked[e.Method+" "+e.Path] = true
		}
		// The node lifecycle controller, as the same service account,
		// looks at the tainted node once too.
		return looked["GET "+podPath("default", "forever")] && looked["GET "+podPath("default", "patient")] && looked["GET /api/v1/nodes/kubeplay-worker"]
	})
	// The wait is scheduled, so the sandbox is not idle, but it asks nothing.
	before := lastSeq(t, sb)
	time.Sleep(time.Second)
	if got := requestsOf(t, sb, nodeControllerSA, before); len(got) != 0 {
		t.Fatalf("requests while waiting: %s", describe(got))
	}
	sb.AdvanceClock(time.Hour)
	waitFor(t, "patient to go", gone(t, h, podPath("default", "patient")))
	waitIdle(t, sb)
	assertStaysIdle(t, sb)
	if phase := phaseOf(t, h, "forever"); phase != "Running" {
		t.Errorf("forever: %s", phase)
	}
}
