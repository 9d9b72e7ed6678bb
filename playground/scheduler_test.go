package playground_test

import (
	"fmt"
	"net/http"
	"testing"

	"kubeplay/playground"
)

// waitNodes waits for the simulated nodes named to be ready.
func waitNodes(t *testing.T, sb *playground.Sandbox, names ...string) {
	t.Helper()
	for _, n := range names {
		waitFor(t, n+" to be ready", func() bool { return nodeReady(t, sb, n) })
	}
}

func podPath(ns, name string) string { return "/api/v1/namespaces/" + ns + "/pods/" + name }

// createPod creates the pod name in default with spec (JSON).
func createPod(t *testing.T, h http.Handler, name, spec string) {
	t.Helper()
	mustDo(t, h, 201, "POST", "/api/v1/namespaces/default/pods", `{"metadata":{"name":"`+name+`"},"spec":`+spec+`}`)
}

// nodeOf is the node the pod name in default is bound to ("" if none).
func nodeOf(t *testing.T, h http.Handler, name string) string {
	t.Helper()
	p := mustDo(t, h, 200, "GET", podPath("default", name), "")
	n, _ := lookup(p, "spec.nodeName").(string)
	return n
}

// schedulerEvents are the notes of the scheduler's events of reason about
// the pod name in default.
func schedulerEvents(t *testing.T, h http.Handler, name, reason string) []string {
	t.Helper()
	var notes []string
	for _, ev := range items(t, h, "/apis/events.k8s.io/v1/namespaces/default/events") {
		if lookup(ev, "regarding.name") == name && ev["reason"] == reason && ev["reportingController"] == "default-scheduler" {
			notes = append(notes, ev["note"].(string))
		}
	}
	return notes
}

func TestScheduler_bindsAndSpreads(t *testing.T) {
	sb := openSandbox(t)
	h := sb.Handler()
	waitNodes(t, sb, "kubeplay-worker", "kubeplay-worker2", "kubeplay-worker3")
	for i := range 3 {
		createPod(t, h, fmt.Sprintf("p%d", i), `{"containers":[{"name":"c","image":"nginx","resources":{"requests":{"cpu":"1"}}}]}`)
	}
	used := map[string]bool{}
	for i := range 3 {
		name := fmt.Sprintf("p%d", i)
		waitFor(t, name+" to be bound", func() bool { return nodeOf(t, h, name) != "" })
		node := nodeOf(t, h, name)
		used[node] = true
		p := mustDo(t, h, 200, "GET", podPath("default", name), "")
		if c := condition(p, "PodScheduled"); c["status"] != "True" {
			t.Errorf("%s PodScheduled: %v", name, c)
		}
		want := fmt.Sprintf("Successfully assigned default/%s to %s", name, node)
		waitFor(t, "the Scheduled event", func() bool { return len(schedulerEvents(t, h, name, "Scheduled")) > 0 })
		if notes := schedulerEvents(t, h, name, "Scheduled"); notes[0] != want {
			t.Errorf("Scheduled event %q, want %q", notes[0], want)
		}
	}
	if len(used) != 3 {
		t.Errorf("3 pods on %d nodes, want them spread over 3", len(used))
	}
	waitIdle(t, sb)
}

// withoutAddons are the controllers of a sandbox whose scheduling a test
// follows closely: all but kubeadm's, whose CoreDNS pods would take room
// on the workers as the test goes.
var withoutAddons = playground.Controllers{}.Without("kubeadm")

func TestScheduler_unschedulable(t *testing.T) {
	sb := openSandboxWith(t, playground.Options{Controllers: withoutAddons})
	h := sb.Handler()
	waitNodes(t, sb, "kubeplay-worker", "kubeplay-worker2", "kubeplay-worker3")
	for i := range 3 {
		createPod(t, h, fmt.Sprintf("big%d", i), `{"containers":[{"name":"c","image":"nginx","resources":{"requests":{"cpu":"6"}}}]}`)
	}
	createPod(t, h, "big3", `{"containers":[{"name":"c","image":"nginx","resources":{"requests":{"cpu":"6"}}}]}`)
	createPod(t, h, "picky", `{"nodeSelector":{"disk":"ssd"},"containers":[{"name":"c","image":"nginx"}]}`)
	createPod(t, h, "huge", `{"containers":[{"name":"c","image":"nginx","resources":{"requests":{"cpu":"100","memory":"1Ti"}}}]}`)
	for name, want := range map[string]string{
		"big3":  "0/4 nodes are available: 1 node(s) had untolerated taint(s), 3 Insufficient cpu. preemption: 0/4 nodes are available: 1 Preemption is not helpful for scheduling, 3 No preemption victims found for incoming pod.",
		"picky": "0/4 nodes are available: 1 node(s) had untolerated taint(s), 3 node(s) didn't match Pod's node affinity/selector. preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling.",
		"huge":  "0/4 nodes are available: 1 node(s) had untolerated taint(s), 3 Insufficient cpu, 3 Insufficient memory. preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling.",
	} {
		waitFor(t, name+" to be unschedulable", func() bool {
			return condition(mustDo(t, h, 200, "GET", podPath("default", name), ""), "PodScheduled")["reason"] == "Unschedulable"
		})
		c := condition(mustDo(t, h, 200, "GET", podPath("default", name), ""), "PodScheduled")
		if c["status"] != "False" || c["message"] != want {
			t.Errorf("%s PodScheduled: %v\nwant message %q", name, c, want)
		}
		waitFor(t, "the FailedScheduling event", func() bool { return len(schedulerEvents(t, h, name, "FailedScheduling")) > 0 })
	}
	waitIdle(t, sb)
	assertStaysIdle(t, sb)

	// Room made on a node, or a node that now matches, schedules them.
	mustDo(t, h, 200, "DELETE", podPath("default", "big0")+"?gracePeriodSeconds=0", "")
	waitFor(t, "big3 to be bound", func() bool { return nodeOf(t, h, "big3") != "" })
	mergePatch(t, h, "/api/v1/nodes/kubeplay-worker2", `{"metadata":{"labels":{"disk":"ssd"}}}`)
	waitFor(t, "picky to be bound", func() bool { return nodeOf(t, h, "picky") == "kubeplay-worker2" })
	waitIdle(t, sb)
}

func TestScheduler_filters(t *testing.T) {
	c := withoutAddons
	c.Nodes = 2
	sb := openSandboxWith(t, playground.Options{Controllers: c})
	h := sb.Handler()
	waitNodes(t, sb, "kubeplay-control-plane", "kubeplay-worker", "kubeplay-worker2")
	// kubeplay-worker is cordoned, kubeplay-worker2 tainted, and the
	// control plane's node too.
	mergePatch(t, h, "/api/v1/nodes/kubeplay-worker", `{"spec":{"unschedulable":true}}`)
	mergePatch(t, h, "/api/v1/nodes/kubeplay-worker2", `{"spec":{"taints":[{"key":"dedicated","value":"db","effect":"NoSchedule"}]}}`)
	createPod(t, h, "plain", `{"containers":[{"name":"c","image":"nginx"}]}`)
	createPod(t, h, "tolerant", `{"tolerations":[{"key":"dedicated","operator":"Equal","value":"db","effect":"NoSchedule"}],"containers":[{"name":"c","image":"nginx"}]}`)
	createPod(t, h, "affine", `{"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchFields":[{"key":"metadata.name","operator":"In","values":["kubeplay-worker2"]}]}]}}},`+
		`"tolerations":[{"operator":"Exists"}],"containers":[{"name":"c","image":"nginx","ports":[{"containerPort":80,"hostPort":8080}]}]}`)
	waitFor(t, "tolerant to be bound", func() bool { return nodeOf(t, h, "tolerant") == "kubeplay-worker2" })
	waitFor(t, "affine to be bound", func() bool { return nodeOf(t, h, "affine") == "kubeplay-worker2" })
	mergePatch(t, h, podPath("default", "tolerant"), `{"metadata":{"labels":{"app":"db"}}}`)
	createPod(t, h, "port", `{"tolerations":[{"key":"dedicated","operator":"Exists"}],"containers":[{"name":"c","image":"nginx","ports":[{"containerPort":80,"hostPort":8080}]}]}`)
	createPod(t, h, "apart", `{"tolerations":[{"operator":"Exists"}],"affinity":{"podAntiAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[`+
		`{"labelSelector":{"matchLabels":{"app":"db"}},"topologyKey":"kubernetes.io/hostname"}]}},"containers":[{"name":"c","image":"nginx"}]}`)
	createPod(t, h, "near", `{"tolerations":[{"operator":"Exists"}],"affinity":{"podAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[`+
		`{"labelSelector":{"matchLabels":{"app":"db"}},"topologyKey":"kubernetes.io/hostname"}]}},"containers":[{"name":"c","image":"nginx"}]}`)
	for name, want := range map[string]string{
		"plain": "0/3 nodes are available: 1 node(s) were unschedulable, 2 node(s) had untolerated taint(s). preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.",
		"port":  "0/3 nodes are available: 1 node(s) didn't have free ports for the requested pod ports, 1 node(s) had untolerated taint(s), 1 node(s) were unschedulable. preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling.",
	} {
		waitFor(t, name+" to be unschedulable", func() bool {
			return condition(mustDo(t, h, 200, "GET", podPath("default", name), ""), "PodScheduled")["message"] == want
		})
	}
	// An unschedulable node tolerated is a node like another; a pod
	// affinity goes to the pod it names, an anti-affinity away from it.
	waitFor(t, "apart to be bound", func() bool { return nodeOf(t, h, "apart") == "kubeplay-worker" })
	waitFor(t, "near to be bound", func() bool { return nodeOf(t, h, "near") == "kubeplay-worker2" })
	waitIdle(t, sb)
}

// spreadPod creates the pod name in default, labelled app=web, with the
// spec fields spec and one constraint spreading app=web over zone (maxSkew
// 1; constraint adds its fields).
func spreadPod(t *testing.T, h http.Handler, name, spec, constraint string) {
	t.Helper()
	mustDo(t, h, 201, "POST", "/api/v1/namespaces/default/pods", `{"metadata":{"name":"`+name+`","labels":{"app":"web"}},"spec":{`+spec+
		`"topologySpreadConstraints":[{"maxSkew":1,"topologyKey":"zone","labelSelector":{"matchLabels":{"app":"web"}}`+constraint+`}],`+
		`"containers":[{"name":"c","image":"nginx"}]}}`)
}

// PodTopologySpread: DoNotSchedule filters nodes by the skew their zone
// would have, and ScheduleAnyway prefers the emptier zone even over the
// least allocated node.
func TestScheduler_topologySpread(t *testing.T) {
	sb := openSandboxWith(t, playground.Options{Controllers: withoutAddons})
	h := sb.Handler()
	waitNodes(t, sb, "kubeplay-worker", "kubeplay-worker2", "kubeplay-worker3")
	mergePatch(t, h, "/api/v1/nodes/kubeplay-worker", `{"metadata":{"labels":{"zone":"a"}}}`)
	mergePatch(t, h, "/api/v1/nodes/kubeplay-worker2", `{"metadata":{"labels":{"zone":"b"}}}`)
	for _, name := range []string{"a1", "a2"} {
		mustDo(t, h, 201, "POST", "/api/v1/namespaces/default/pods", `{"metadata":{"name":"`+name+`","labels":{"app":"web"}},"spec":{"nodeName":"kubeplay-worker","containers":[{"name":"c","image":"nginx"}]}}`)
	}
	// Zone a has 2, b none; kubeplay-worker3 and the control plane's node
	// have no zone.
	spreadPod(t, h, "spread", "", `,"whenUnsatisfiable":"DoNotSchedule"`)
	waitFor(t, "spread to be bound", func() bool { return nodeOf(t, h, "spread") != "" })
	if got := nodeOf(t, h, "spread"); got != "kubeplay-worker2" {
		t.Errorf("spread on %s, want kubeplay-worker2 (zone b)", got)
	}
	// Held to kubeplay-worker: its node affinity decides which nodes count,
	// unless nodeAffinityPolicy is Ignore.
	spreadPod(t, h, "honored", `"nodeSelector":{"kubernetes.io/hostname":"kubeplay-worker"},`, `,"whenUnsatisfiable":"DoNotSchedule"`)
	waitFor(t, "honored to be bound", func() bool { return nodeOf(t, h, "honored") == "kubeplay-worker" })
	spreadPod(t, h, "ignored", `"nodeSelector":{"kubernetes.io/hostname":"kubeplay-worker"},`, `,"whenUnsatisfiable":"DoNotSchedule","nodeAffinityPolicy":"Ignore"`)
	// Three zones of one pod each, but four asked for: the emptiest counts as 0.
	mergePatch(t, h, "/api/v1/nodes/kubeplay-worker3", `{"metadata":{"labels":{"zone":"c"}}}`)
	mustDo(t, h, 201, "POST", "/api/v1/namespaces/default/pods", `{"metadata":{"name":"c1","labels":{"app":"web"}},"spec":{"nodeName":"kubeplay-worker3","containers":[{"name":"c","image":"nginx"}]}}`)
	spreadPod(t, h, "few", "", `,"whenUnsatisfiable":"DoNotSchedule","minDomains":4`)
	for name, want := range map[string]string{
		"ignored": "0/4 nodes are available: 1 node(s) didn't match pod topology spread constraints, 1 node(s) had untolerated taint(s), 2 node(s) didn't match Pod's node affinity/selector. preemption: 0/4 nodes are available: 1 No preemption victims found for incoming pod, 3 Preemption is not helpful for scheduling.",
		"few":     "0/4 nodes are available: 1 node(s) had untolerated taint(s), 3 node(s) didn't match pod topology spread constraints. preemption: 0/4 nodes are available: 1 Preemption is not helpful for scheduling, 3 No preemption victims found for incoming pod.",
	} {
		waitFor(t, name+" to be unschedulable", func() bool {
			return condition(mustDo(t, h, 200, "GET", podPath("default", name), ""), "PodScheduled")["message"] == want
		})
	}
	waitIdle(t, sb)
}

func TestScheduler_topologySpreadScore(t *testing.T) {
	sb := openSandboxWith(t, playground.Options{Controllers: withoutAddons})
	h := sb.Handler()
	waitNodes(t, sb, "kubeplay-worker", "kubeplay-worker2", "kubeplay-worker3")
	for node, zone := range map[string]string{"kubeplay-worker": "a", "kubeplay-worker2": "a", "kubeplay-worker3": "b"} {
		mergePatch(t, h, "/api/v1/nodes/"+node, `{"metadata":{"labels":{"zone":"`+zone+`"}}}`)
	}
	// Zone a is the more allocated, zone b has the one pod of app=web.
	for _, node := range []string{"kubeplay-worker", "kubeplay-worker2"} {
		mustDo(t, h, 201, "POST", "/api/v1/namespaces/default/pods", `{"metadata":{"name":"heavy-`+node+`"},"spec":{"nodeName":"`+node+`","containers":[{"name":"c","image":"nginx","resources":{"requests":{"cpu":"4"}}}]}}`)
	}
	mustDo(t, h, 201, "POST", "/api/v1/namespaces/default/pods", `{"metadata":{"name":"b1","labels":{"app":"web"}},"spec":{"nodeName":"kubeplay-worker3","containers":[{"name":"c","image":"nginx"}]}}`)
	spreadPod(t, h, "soft", "", `,"whenUnsatisfiable":"ScheduleAnyway"`)
	waitFor(t, "soft to be bound", func() bool { return nodeOf(t, h, "soft") != "" })
	if got := nodeOf(t, h, "soft"); got == "kubeplay-worker3" {
		t.Errorf("soft on %s (zone b, where app=web is), want zone a", got)
	}
	// Without the constraint, the least allocated node wins.
	createPod(t, h, "plain", `{"containers":[{"name":"c","image":"nginx"}]}`)
	waitFor(t, "plain to be bound", func() bool { return nodeOf(t, h, "plain") == "kubeplay-worker3" })
	waitIdle(t, sb)
}
