package e2e_test

import (
	"strings"
	"testing"
	"time"

	"kubeplay/e2e"
)

// TestKubectl_PodStreams: kubectl logs, exec, attach and port-forward on a
// pod the simulated kubelet runs get the simulated kubelet's answers (a log
// saying the container is simulated; errors that say why there is nothing
// to exec into or forward to), never a 404 for the route and never a hang;
// kubectl drain evicts through pods/eviction, which a PodDisruptionBudget
// holds back.
func TestKubectl_PodStreams(t *testing.T) {
	kubectl := e2e.Kubectl(t, e2e.Start(t, t.TempDir(), "--simulate-workloads").URL).Flags("-n", "default")
	k := kubectl.Succeeds
	// A pod needs its namespace's default ServiceAccount, which the
	// ServiceAccount controller makes once the cluster runs (a fresh kind
	// cluster refuses a pod for a moment too).
	kubectl.Eventually("get", "serviceaccount", "default")
	k("run", "web", "--image=nginx")
	waitRunning := func(pod string) {
		t.Helper()
		deadline := time.Now().Add(e2e.WaitLimit(t))
		for k("get", "pod", pod, "-o", "jsonpath={.status.phase}") != "Running" {
			if time.Now().After(deadline) {
				t.Fatalf("pod %s is not Running", pod)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	waitRunning("web")
	if out := k("logs", "web"); !strings.Contains(out, `container "web" of pod default/web is simulated`) {
		t.Errorf("logs: %s", out)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"exec", "web", "--", "ls"}, "error: container \"web\" of pod web is simulated by kubeplay: it runs no process, so there is nothing to exec"},
		{[]string{"attach", "web"}, "error: container \"web\" of pod web is simulated by kubeplay: it runs no process, so there is nothing to attach"},
		{[]string{"port-forward", "web", ":80"}, "error: error upgrading connection: pod web is simulated by kubeplay: no process listens on its ports, so there is nothing to forward to"},
		{[]string{"logs", "web", "-c", "nope"}, "error: container nope is not valid for pod web"},
		{[]string{"exec", "nope", "--", "ls"}, `Error from server (NotFound): pods "nope" not found`},
	} {
		if out := kubectl.Fails(tc.args...); !strings.Contains(out, tc.want) {
			t.Errorf("kubectl %s:\n%s\nwant %q", strings.Join(tc.args, " "), out, tc.want)
		}
	}

	// db on a simulated node, whose kubelet runs it.
	kubectl.Stdin(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"db","labels":{"app":"db"}},"spec":{"nodeName":"kubeplay-worker","containers":[{"name":"db","image":"postgres"}]}}`).Succeeds("create", "-f", "-")
	waitRunning("db") // a pending pod is evicted whatever its budget
	k("create", "poddisruptionbudget", "db", "--selector=app=db", "--min-available=1")
	if out := kubectl.Fails("drain", "kubeplay-worker", "--force", "--ignore-daemonsets", "--timeout=2s"); !strings.Contains(out, "Cannot evict pod as it would violate the pod's disruption budget.") {
		t.Errorf("drain held back by a budget:\n%s", out)
	}
	k("delete", "poddisruptionbudget", "db")
	if out := k("drain", "kubeplay-worker", "--force", "--ignore-daemonsets", "--grace-period=0", e2e.TimeoutFlag(t)); !strings.Contains(out, "pod/db evicted") || !strings.Contains(out, "node/kubeplay-worker drained") {
		t.Errorf("drain:\n%s", out)
	}
}
