package playground_test

import (
	"fmt"
	"testing"

	"kubeplay/playground"
)

// A pod of higher priority that fits nowhere preempts the pod of lowest
// priority that makes room for it, as kube-scheduler's DefaultPreemption,
// and is scheduled on that node once its victim is gone.
func TestScheduler_preemption(t *testing.T) {
	c := withoutAddons
	c.Nodes = 2
	sb := openSandboxWith(t, playground.Options{Controllers: c})
	h := sb.Handler()
	nodes := []string{"kubeplay-worker", "kubeplay-worker2"}
	waitNodes(t, sb, nodes...)
	for name, value := range map[string]int{"low": 1, "medium": 100, "high": 1000} {
		mustDo(t, h, 201, "POST", "/apis/scheduling.k8s.io/v1/priorityclasses", fmt.Sprintf(`{"metadata":{"name":%q},"value":%d}`, name, value))
	}
	mustDo(t, h, 201, "POST", "/apis/scheduling.k8s.io/v1/priorityclasses", `{"metadata":{"name":"high-meek"},"value":1000,"preemptionPolicy":"Never"}`)
	for _, node := range nodes {
		mergePatch(t, h, "/api/v1/nodes/"+node+"/status", `{"status":{"capacity":{"example.com/fakecpu":"5"},"allocatable":{"example.com/fakecpu":"5"}}}`)
	}
	pinned := func(name, node, class, extra string) {
		createPod(t, h, name, fmt.Sprintf(`{"priorityClassName":%q,%s"nodeSelector":{"kubernetes.io/hostname":%q},"containers":[{"name":"c","image":"registry.k8s.io/pause:3.10",`+
			`"resources":{"requests":{"example.com/fakecpu":"2"},"limits":{"example.com/fakecpu":"2"}}}]}`, class, extra, node))
	}
	pinned("victim", nodes[0], "low", "")
	pinned("kept0", nodes[0], "medium", "")
	pinned("kept1", nodes[1], "medium", "")
	pinned("kept2", nodes[1], "medium", "")
	for _, name := range []string{"victim", "kept0", "kept1", "kept2"} {
		waitFor(t, name+" to run", func() bool { return phaseOf(t, h, name) == "Running" })
	}

	// Too low a priority, or not allowed to preempt.
	createPod(t, h, "meek", `{"priorityClassName":"high-meek","containers":[{"name":"c","image":"registry.k8s.io/pause:3.10","resources":{"requests":{"example.com/fakecpu":"2"},"limits":{"example.com/fakecpu":"2"}}}]}`)
	createPod(t, h, "lowly", `{"priorityClassName":"low","containers":[{"name":"c","image":"registry.k8s.io/pause:3.10","resources":{"requests":{"example.com/fakecpu":"2"},"limits":{"example.com/fakecpu":"2"}}}]}`)
	for name, want := range map[string]string{
		"meek":  "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient example.com/fakecpu. preemption: not eligible due to preemptionPolicy=Never.",
		"lowly": "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient example.com/fakecpu. preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod.",
	} {
		waitFor(t, name+" to be unschedulable", func() bool {
			return condition(pod(t, h, name), "PodScheduled")["reason"] == "Unschedulable"
		})
		if got := condition(pod(t, h, name), "PodScheduled")["message"]; got != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
	mustDo(t, h, 200, "DELETE", podPath("default", "meek"), "")
	mustDo(t, h, 200, "DELETE", podPath("default", "lowly"), "")

	// The victim gets DisruptionTarget and is deleted; the preemptor is
	// nominated to its node, then scheduled there.
	mustDo(t, h, 201, "POST", "/api/v1/namespaces/default/pods", `{"metadata":{"name":"victim-held"},"spec":{"priorityClassName":"low","nodeSelector":{"kubernetes.io/hostname":"kubeplay-worker"},"containers":[{"name":"c","image":"registry.k8s.io/pause:3.10"}]}}`)
	createPod(t, h, "preemptor", `{"priorityClassName":"high","containers":[{"name":"c","image":"registry.k8s.io/pause:3.10","resources":{"requests":{"example.com/fakecpu":"2"},"limits":{"example.com/fakecpu":"2"}}}]}`)
	waitFor(t, "the preemptor to be scheduled", func() bool { return nodeOf(t, h, "preemptor") == nodes[0] })
	waitFor(t, "the victim to go", gone(t, h, podPath("default", "victim")))
	p := pod(t, h, "preemptor")
	if got := lookup(p, "status.nominatedNodeName"); got != nodes[0] {
		t.Errorf("nominatedNodeName %v", got)
	}
	uid := lookup(p, "metadata.uid")
	if notes := schedulerEvents(t, h, "victim", "Preempted"); len(notes) != 1 || notes[0] != fmt.Sprintf("Preempted by pod %s on node %s", uid, nodes[0]) {
		t.Errorf("Preempted events %q", notes)
	}
	if notes := schedulerEvents(t, h, "preemptor", "FailedScheduling"); len(notes) == 0 || notes[0] != "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient example.com/fakecpu." {
		t.Errorf("FailedScheduling events %q", notes)
	}
	for _, name := range []string{"kept0", "kept1", "kept2", "victim-held"} {
		if lookup(pod(t, h, name), "metadata.deletionTimestamp") != nil {
			t.Errorf("%s preempted", name)
		}
	}
	waitIdle(t, sb)
}
