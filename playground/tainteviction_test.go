package playground_test

import (
	"slices"
	"testing"
	"time"

	"kubeplay/playground"
)

const nodeControllerSA = "node-controller"

// noExecuteTaint is the JSON of the test's NoExecute taint, added at t.
func noExecuteTaint(at time.Time) string {
	return `{"spec":{"taints":[{"key":"example.com/evict","value":"yes","effect":"NoExecute","timeAdded":"` + at.UTC().Format(time.RFC3339) + `"}]}}`
}

// tolerating is a pod spec tolerating the test's taint for seconds (nil:
// for ever).
func tolerating(seconds *int) string {
	toleration := `{"key":"example.com/evict","operator":"Exists","effect":"NoExecute"`
	if seconds != nil {
		toleration += `,"tolerationSeconds":` + jsonOf(*seconds)
	}
	return `{"containers":[{"name":"c","image":"nginx"}],"tolerations":[` + toleration + `}]}`
}

// A NoExecute taint deletes at once the pods that do not tolerate it, with
// the DisruptionTarget condition first; those tolerating it for a while go
// once that has passed on the sandbox clock, unless the taint goes first;
// those tolerating it for ever stay. Each eviction and cancellation is an
// Event of the taint-eviction controller.
func TestTaintEviction(t *testing.T) {
	// Without kubeadm's add-ons, whose CoreDNS pods the taint would evict
	// too, again and again as their ReplicaSet replaces them.
	c := playground.Controllers{Nodes: 1}.Without("kubeadm")
	sb := openSandboxWith(t, playground.Options{Controllers: c})
	h := sb.Handler()
	waitNodes(t, sb, "kubeplay-worker")
	waitForDefaultServiceAccount(t, h, "default")
	fiveMinutes := 300
	mustDo(t, h, 201, "POST", "/api/v1/namespaces/default/pods",
		`{"metadata":{"name":"intolerant","finalizers":["example.com/hold"]},"spec":{"containers":[{"name":"c","image":"nginx"}]}}`)
	createPod(t, h, "forever", tolerating(nil))
	createPod(t, h, "patient", tolerating(&fiveMinutes))
	for _, name := range []string{"intolerant", "forever", "patient"} {
		waitFor(t, name+" to run", func() bool { return phaseOf(t, h, name) == "Running" })
	}
	waitIdle(t, sb)
	start := lastSeq(t, sb)

	mergePatch(t, h, "/api/v1/nodes/kubeplay-worker", noExecuteTaint(sb.Clock().Now()))
	waitFor(t, "intolerant to be deleted", func() bool { return lookup(pod(t, h, "intolerant"), "metadata.deletionTimestamp") != nil })
	cond := condition(pod(t, h, "intolerant"), "DisruptionTarget")
	if cond["status"] != "True" || cond["reason"] != "DeletionByTaintManager" || cond["message"] != "Taint manager: deleting due to NoExecute taint" {
		t.Errorf("DisruptionTarget condition: %v", cond)
	}
	if got := eventMessages(t, h, "default", "Pod", "intolerant", "TaintManagerEviction"); !slices.Equal(got, []string{"Marking for deletion Pod default/intolerant"}) {
		t.Errorf("events of intolerant: %q", got)
	}
	mergePatch(t, h, podPath("default", "intolerant"), `{"metadata":{"finalizers":null}}`)
	waitFor(t, "intolerant to go", gone(t, h, podPath("default", "intolerant")))

	// patient's eviction waits for its time.
	if phase := phaseOf(t, h, "patient"); phase != "Running" {
		t.Errorf("patient: %s", phase)
	}
	sb.AdvanceClock(time.Duration(fiveMinutes+1) * time.Second)
	waitFor(t, "patient to go", gone(t, h, podPath("default", "patient")))
	if got := eventMessages(t, h, "default", "Pod", "patient", "TaintManagerEviction"); !slices.Equal(got, []string{"Marking for deletion Pod default/patient"}) {
		t.Errorf("events of patient: %q", got)
	}

	// Removing the taint cancels a pending eviction.
	createPod(t, h, "spared", tolerating(&fiveMinutes))
	waitFor(t, "spared to run", func() bool { return phaseOf(t, h, "spared") == "Running" })
	mergePatch(t, h, "/api/v1/nodes/kubeplay-worker", `{"spec":{"taints":null}}`)
	waitFor(t, "the cancellation", func() bool {
		return slices.Equal(eventMessages(t, h, "default", "Pod", "spared", "TaintManagerEviction"), []string{"Cancelling deletion of Pod default/spared"})
	})
	sb.AdvanceClock(time.Duration(fiveMinutes+1) * time.Second)
	waitIdle(t, sb)
	for _, name := range []string{"forever", "spared"} {
		if phase := phaseOf(t, h, name); phase != "Running" {
			t.Errorf("%s: %s", name, phase)
		}
	}
	if got := eventMessages(t, h, "default", "Pod", "forever", "TaintManagerEviction"); len(got) != 0 {
		t.Errorf("events of forever: %q", got)
	}
	for _, e := range requestsOf(t, sb, nodeControllerSA, start) {
		if e.Status >= 300 {
			t.Errorf("%s %s: %d", e.Method, e.Path, e.Status)
		}
	}
}
