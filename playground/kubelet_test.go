package playground_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"kubeplay/playground"
)

// pod reads the pod name in default.
func pod(t *testing.T, h http.Handler, name string) map[string]any {
	t.Helper()
	return mustDo(t, h, 200, "GET", podPath("default", name), "")
}

// kubeletEvents are "reason: message" of the kubelet's events about the pod
// name in default.
func kubeletEvents(t *testing.T, h http.Handler, name string) []string {
	t.Helper()
	var out []string
	for _, ev := range items(t, h, "/api/v1/namespaces/default/events") {
		if lookup(ev, "involvedObject.name") == name && lookup(ev, "source.component") == "kubelet" {
			out = append(out, ev["reason"].(string)+": "+ev["message"].(string))
		}
	}
	return out
}

func phaseOf(t *testing.T, h http.Handler, name string) string {
	t.Helper()
	phase, _ := lookup(pod(t, h, name), "status.phase").(string)
	return phase
}

func TestKubelet_runsPods(t *testing.T) {
	sb := openSandboxWith(t, playground.Options{Controllers: playground.Controllers{Nodes: 1}})
	h := sb.Handler()
	waitNodes(t, sb, "kubeplay-worker")
	waitForDefaultServiceAccount(t, h, "default")
	createPod(t, h, "web", `{"initContainers":[{"name":"setup","image":"busybox","command":["sh","-c","echo ready"]}],"containers":[{"name":"nginx","image":"nginx"}]}`)
	waitFor(t, "web to be ready", func() bool { return condition(pod(t, h, "web"), "Ready")["status"] == "True" })
	p := pod(t, h, "web")
	for path, want := range map[string]any{
		"status.phase":  "Running",
		"status.hostIP": "172.18.0.3",
		"status.initContainerStatuses.0.state.terminated.reason": "Completed",
		"status.initContainerStatuses.0.ready":                   true,
		"status.containerStatuses.0.image":                       "docker.io/library/nginx:latest",
		"status.containerStatuses.0.started":                     true,
	} {
		if got := lookup(p, path); got != want {
			t.Errorf("%s = %v, want %v", path, got, want)
		}
	}
	if ip, _ := lookup(p, "status.podIP").(string); !strings.HasPrefix(ip, "10.244.1.") {
		t.Errorf("pod IP %q, want one of the node's 10.244.1.0/24", ip)
	}
	for _, c := range []string{"PodReadyToStartContainers", "Initialized", "ContainersReady", "PodScheduled"} {
		if got := condition(p, c)["status"]; got != "True" {
			t.Errorf("%s = %v", c, got)
		}
	}
	waitIdle(t, sb)
	events := strings.Join(kubeletEvents(t, h, "web"), "\n")
	for _, want := range []string{`Pulling: Pulling image "busybox"`, `Pulling: Pulling image "nginx"`, "Created: Container created", "Started: Container started"} {
		if !strings.Contains(events, want) {
			t.Errorf("no event %q in\n%s", want, events)
		}
	}
	assertStaysIdle(t, sb)

	// Graceful deletion: nginx stops at once on SIGTERM.
	mustDo(t, h, 200, "DELETE", podPath("default", "web"), "")
	waitFor(t, "web to go", gone(t, h, podPath("default", "web")))
	if events := strings.Join(kubeletEvents(t, h, "web"), "\n"); !strings.Contains(events, "Killing: Stopping container nginx") {
		t.Errorf("no Killing event in\n%s", events)
	}
}

func TestKubelet_commands(t *testing.T) {
	sb := openSandboxWith(t, playground.Options{Controllers: playground.Controllers{Nodes: 1}})
	h := sb.Handler()
	waitNodes(t, sb, "kubeplay-worker")
	waitForDefaultServiceAccount(t, h, "default")
	createPod(t, h, "fails", `{"restartPolicy":"Never","containers":[{"name":"c","image":"busybox","command":["sh","-c","echo -n bye > /dev/termination-log; exit 3"]}]}`)
	createPod(t, h, "done", `{"restartPolicy":"OnFailure","containers":[{"name":"c","image":"busybox"}]}`)
	createPod(t, h, "sleeper", `{"restartPolicy":"Never","containers":[{"name":"c","image":"busybox","command":["sleep","30"]}]}`)
	createPod(t, h, "crash", `{"containers":[{"name":"c","image":"busybox","command":["false"]}]}`)
	waitFor(t, "fails to fail", func() bool { return phaseOf(t, h, "fails") == "Failed" })
	p := pod(t, h, "fails")
	for path, want := range map[string]any{
		"status.containerStatuses.0.state.terminated.exitCode": float64(3),
		"status.containerStatuses.0.state.terminated.reason":   "Error",
		"status.containerStatuses.0.state.terminated.message":  "bye",
		"status.conditions.2.reason":                           "PodFailed",
	} {
		if got := lookup(p, path); got != want {
			t.Errorf("%s = %v, want %v", path, got, want)
		}
	}
	waitFor(t, "done to succeed", func() bool { return phaseOf(t, h, "done") == "Succeeded" })
	waitFor(t, "crash to back off", func() bool {
		return lookup(pod(t, h, "crash"), "status.containerStatuses.0.state.waiting.reason") == "CrashLoopBackOff"
	})
	crash := pod(t, h, "crash")
	if lookup(crash, "status.phase") != "Running" || lookup(crash, "status.containerStatuses.0.restartCount") != float64(1) {
		t.Errorf("crash: %s", jsonOf(crash["status"]))
	}
	waitFor(t, "the BackOff event", func() bool {
		return strings.Contains(strings.Join(kubeletEvents(t, h, "crash"), "\n"), "BackOff: Back-off restarting failed container c in pod crash_default(")
	})
	waitFor(t, "sleeper to run", func() bool { return phaseOf(t, h, "sleeper") == "Running" })

	// The sandbox's clock: sleep ends, the back-off passes.
	sb.AdvanceClock(31 * time.Second)
	waitFor(t, "sleeper to succeed", func() bool { return phaseOf(t, h, "sleeper") == "Succeeded" })
	waitFor(t, "crash to restart", func() bool {
		return lookup(pod(t, h, "crash"), "status.containerStatuses.0.restartCount") == float64(2)
	})
	// A crash loop has work scheduled for ever (each back-off).
	mustDo(t, h, 200, "DELETE", podPath("default", "crash"), "")
	waitFor(t, "crash to go", gone(t, h, podPath("default", "crash")))

	// A shell as PID 1 ignores SIGTERM: it is killed when the grace period
	// ends.
	createPod(t, h, "stubborn", `{"containers":[{"name":"c","image":"busybox","command":["sh","-c","sleep 3600"]}]}`)
	waitFor(t, "stubborn to run", func() bool { return phaseOf(t, h, "stubborn") == "Running" })
	mustDo(t, h, 200, "DELETE", podPath("default", "stubborn"), "")
	waitFor(t, "the Killing event", func() bool {
		return strings.Contains(strings.Join(kubeletEvents(t, h, "stubborn"), "\n"), "Killing: Stopping container c")
	})
	mustDo(t, h, 200, "GET", podPath("default", "stubborn"), "")
	sb.AdvanceClock(30 * time.Second)
	waitFor(t, "stubborn to go", gone(t, h, podPath("default", "stubborn")))
	waitIdle(t, sb)
}

// logOf reads a container's log as kubectl logs does.
func logOf(t *testing.T, h http.Handler, name, query string) (int, string) {
	t.Helper()
	req := httptest.NewRequest("GET", podPath("default", name)+"/log"+query, nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code, rec.Body.String()
}

func TestKubelet_logs(t *testing.T) {
	sb := openSandboxWith(t, playground.Options{Controllers: playground.Controllers{Nodes: 1}})
	h := sb.Handler()
	waitNodes(t, sb, "kubeplay-worker")
	waitForDefaultServiceAccount(t, h, "default")
	createPod(t, h, "talker", `{"containers":[{"name":"c","image":"busybox","command":["sh","-c","echo 'Hello World' ; sleep 240; echo bye"]}]}`)
	createPod(t, h, "quiet", `{"containers":[{"name":"c","image":"nginx"}]}`)
	waitFor(t, "the pods to run", func() bool { return phaseOf(t, h, "talker") == "Running" && phaseOf(t, h, "quiet") == "Running" })
	if code, log := logOf(t, h, "talker", ""); code != 200 || log != "Hello World\n" {
		t.Errorf("log: %d %q", code, log)
	}
	if code, log := logOf(t, h, "quiet", ""); code != 200 || !strings.Contains(log, `container "c" of pod default/quiet is simulated`) {
		t.Errorf("log of a silent container: %d %q", code, log)
	}
	if code, log := logOf(t, h, "talker", "?previous=true"); code != 400 || !strings.Contains(log, `previous terminated container \"c\" in pod \"talker\" not found`) {
		t.Errorf("previous log: %d %s", code, log)
	}
	sb.AdvanceClock(241 * time.Second)
	waitFor(t, "talker to restart", func() bool {
		return lookup(pod(t, h, "talker"), "status.containerStatuses.0.restartCount") == float64(1)
	})
	if code, log := logOf(t, h, "talker", "?previous=true"); code != 200 || log != "Hello World\nbye\n" {
		t.Errorf("previous log: %d %q", code, log)
	}
	if code, log := logOf(t, h, "talker", "?previous=true&tailLines=1"); code != 200 || log != "bye\n" {
		t.Errorf("tail of the previous log: %d %q", code, log)
	}
}

// A container that keeps failing: restarted at once the first time, then
// after a back-off that doubles from 10 s to 5 minutes, waiting in
// CrashLoopBackOff meanwhile, the pod Running and unready. One that ran
// for more than 10 minutes before failing restarts at once every time.
func TestKubelet_crashLoop(t *testing.T) {
	sb := openSandboxWith(t, playground.Options{Controllers: playground.Controllers{Nodes: 1}})
	h := sb.Handler()
	waitNodes(t, sb, "kubeplay-worker")
	waitForDefaultServiceAccount(t, h, "default")
	createPod(t, h, "crash", `{"containers":[{"name":"c","image":"busybox","command":["sh","-c","echo crash; exit 2"]}]}`)
	createPod(t, h, "slow", `{"containers":[{"name":"c","image":"busybox","command":["sh","-c","sleep 700; exit 1"]}]}`)
	restarts := func(name string) any {
		return lookup(pod(t, h, name), "status.containerStatuses.0.restartCount")
	}
	waitFor(t, "slow to run", func() bool { return phaseOf(t, h, "slow") == "Running" })
	uid := lookup(pod(t, h, "crash"), "metadata.uid")
	for i, delay := range []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second, 80 * time.Second,
		160 * time.Second, 5 * time.Minute, 5 * time.Minute} {
		waitFor(t, "the back-off", func() bool {
			return restarts("crash") == float64(i+1) && lookup(pod(t, h, "crash"), "status.containerStatuses.0.state.waiting") != nil
		})
		p := pod(t, h, "crash")
		for path, want := range map[string]any{
			"status.phase": "Running",
			"status.containerStatuses.0.state.waiting.reason":          "CrashLoopBackOff",
			"status.containerStatuses.0.state.waiting.message":         fmt.Sprintf("back-off %s restarting failed container=c pod=crash_default(%s)", delay, uid),
			"status.containerStatuses.0.lastState.terminated.exitCode": float64(2),
			"status.containerStatuses.0.lastState.terminated.reason":   "Error",
			"status.containerStatuses.0.ready":                         false,
			"status.containerStatuses.0.started":                       false,
		} {
			if got := lookup(p, path); got != want {
				t.Errorf("after %d restarts: %s = %v, want %v", i+1, path, got, want)
			}
		}
		for _, c := range []string{"Ready", "ContainersReady"} {
			if cond := condition(p, c); cond["status"] != "False" || cond["reason"] != "ContainersNotReady" || cond["message"] != "containers with unready status: [c]" {
				t.Errorf("%s: %v", c, cond)
			}
		}
		sb.AdvanceClock(delay)
	}
	waitFor(t, "slow to restart", func() bool { return restarts("slow") == float64(1) })
	sb.AdvanceClock(700 * time.Second)
	waitFor(t, "slow to restart again", func() bool { return restarts("slow") == float64(2) })
	if waiting := lookup(pod(t, h, "slow"), "status.containerStatuses.0.state.waiting"); waiting != nil {
		t.Errorf("slow waits: %v", waiting)
	}
}

// A pod active for longer than its activeDeadlineSeconds (which an update
// may shorten) is failed by its kubelet, on the sandbox's clock.
func TestKubelet_activeDeadline(t *testing.T) {
	sb := openSandboxWith(t, playground.Options{Controllers: playground.Controllers{Nodes: 1}})
	h := sb.Handler()
	waitNodes(t, sb, "kubeplay-worker")
	waitForDefaultServiceAccount(t, h, "default")
	createPod(t, h, "bounded", `{"activeDeadlineSeconds":3600,"containers":[{"name":"c","image":"nginx"}]}`)
	waitFor(t, "bounded to run", func() bool { return phaseOf(t, h, "bounded") == "Running" })
	mergePatch(t, h, podPath("default", "bounded"), `{"spec":{"activeDeadlineSeconds":600}}`)
	sb.AdvanceClock(601 * time.Second)
	waitFor(t, "bounded to fail", func() bool { return phaseOf(t, h, "bounded") == "Failed" })
	p := pod(t, h, "bounded")
	for path, want := range map[string]any{
		"status.reason":  "DeadlineExceeded",
		"status.message": "Pod was active on the node longer than the specified deadline",
		"status.containerStatuses.0.state.terminated.reason": "Completed",
	} {
		if got := lookup(p, path); got != want {
			t.Errorf("%s = %v, want %v", path, got, want)
		}
	}
	if got := condition(p, "Ready")["reason"]; got != "PodFailed" {
		t.Errorf("Ready's reason %v", got)
	}
	waitIdle(t, sb)
	events := strings.Join(kubeletEvents(t, h, "bounded"), "\n")
	for _, want := range []string{"DeadlineExceeded: Pod was active on the node longer than the specified deadline", "Killing: Stopping container c"} {
		if !strings.Contains(events, want) {
			t.Errorf("no event %q in\n%s", want, events)
		}
	}
}

// A container whose subPathExpr expands to an absolute path, steps out
// with "..", or reads a variable with no value waits with
// CreateContainerConfigError until the pod changes so that it does not.
func TestKubelet_subPathExpr(t *testing.T) {
	sb := openSandboxWith(t, playground.Options{Controllers: playground.Controllers{Nodes: 1}})
	h := sb.Handler()
	waitNodes(t, sb, "kubeplay-worker")
	waitForDefaultServiceAccount(t, h, "default")
	spec := func(value, expr string) string {
		return `{"restartPolicy":"Never","volumes":[{"name":"w","emptyDir":{}}],"containers":[{"name":"c","image":"busybox","command":["sh","-c","tail -f /dev/null"],` +
			`"env":[{"name":"POD_NAME","value":"` + value + `"},{"name":"ANNOTATION","valueFrom":{"fieldRef":{"fieldPath":"metadata.annotations['mysubpath']"}}}],` +
			`"volumeMounts":[{"name":"w","mountPath":"/sub","subPathExpr":"` + expr + `"}]}]}`
	}
	createPod(t, h, "absolute", spec("/tmp", "$(POD_NAME)"))
	createPod(t, h, "backsteps", spec("..", "$(POD_NAME)"))
	createPod(t, h, "missing", spec("foo", "$(ANNOTATION)/$(POD_NAME)"))
	for name, want := range map[string]string{
		"absolute":  "error SubPath `/tmp` must not be an absolute path",
		"backsteps": "unable to provision SubPath `..`: must not contain '..'",
		"missing":   "missing value for ANNOTATION",
	} {
		waitFor(t, name+" to fail its configuration", func() bool {
			return lookup(pod(t, h, name), "status.containerStatuses.0.state.waiting.reason") == "CreateContainerConfigError"
		})
		p := pod(t, h, name)
		if got := lookup(p, "status.containerStatuses.0.state.waiting.message"); got != want || lookup(p, "status.phase") != "Pending" {
			t.Errorf("%s: %v in phase %v, want %q", name, got, lookup(p, "status.phase"), want)
		}
		waitFor(t, name+"'s Failed event", func() bool {
			return strings.Contains(strings.Join(kubeletEvents(t, h, name), "\n"), "Failed: Error: "+want)
		})
	}
	mergePatch(t, h, podPath("default", "missing"), `{"metadata":{"annotations":{"mysubpath":"mypath"}}}`)
	waitFor(t, "missing to run", func() bool { return phaseOf(t, h, "missing") == "Running" })
	waitIdle(t, sb)
}

// A pod whose RuntimeClass names a handler the runtime does not have gets
// no sandbox: it stays Pending, with the kubelet's FailedCreatePodSandBox.
func TestKubelet_unconfiguredRuntimeHandler(t *testing.T) {
	sb := openSandboxWith(t, playground.Options{Controllers: playground.Controllers{Nodes: 1}})
	h := sb.Handler()
	waitNodes(t, sb, "kubeplay-worker")
	waitForDefaultServiceAccount(t, h, "default")
	mustDo(t, h, 201, "POST", "/apis/node.k8s.io/v1/runtimeclasses", `{"metadata":{"name":"odd"},"handler":"odd-handler"}`)
	createPod(t, h, "odd", `{"runtimeClassName":"odd","containers":[{"name":"c","image":"nginx"}]}`)
	want := `FailedCreatePodSandBox: Failed to create pod sandbox: rpc error: code = Unknown desc = failed to get sandbox runtime: no runtime for "odd-handler" is configured`
	waitFor(t, "the FailedCreatePodSandBox event", func() bool {
		return strings.Contains(strings.Join(kubeletEvents(t, h, "odd"), "\n"), want)
	})
	waitIdle(t, sb)
	if p := pod(t, h, "odd"); lookup(p, "status.phase") != "Pending" || lookup(p, "status.podIP") != nil {
		t.Errorf("status %s", jsonOf(p["status"]))
	}
}

// An image that cannot be pulled (see imagepull.go) leaves its container
// waiting, the pod Pending: ErrImagePull at each attempt, ImagePullBackOff
// between them, the attempts backing off from 10 s doubling, with the
// events kubectl describe shows on a kind node.
func TestKubelet_imagePullBackOff(t *testing.T) {
	sb := openSandboxWith(t, playground.Options{Controllers: playground.Controllers{Nodes: 1}})
	h := sb.Handler()
	waitNodes(t, sb, "kubeplay-worker")
	waitForDefaultServiceAccount(t, h, "default")
	createPod(t, h, "missing", `{"containers":[{"name":"web","image":"webserver:404"}]}`)
	createPod(t, h, "unresolved", `{"containers":[{"name":"c","image":"invalid.registry.k8s.io/invalid/alpine:3.1"}]}`)
	createPod(t, h, "typo", `{"containers":[{"name":"nginx","image":"nginx:1.161"}]}`)
	createPod(t, h, "fine", `{"containers":[{"name":"nginx","image":"nginx:1.16.1"}]}`)
	const notFound = `rpc error: code = NotFound desc = failed to pull and unpack image "docker.io/library/webserver:404": ` +
		`failed to resolve reference "docker.io/library/webserver:404": docker.io/library/webserver:404: not found`
	waiting := func(name string) (reason, message any) {
		p := pod(t, h, name)
		return lookup(p, "status.containerStatuses.0.state.waiting.reason"), lookup(p, "status.containerStatuses.0.state.waiting.message")
	}
	pullFailures := func() int {
		n := 0
		for _, ev := range items(t, h, "/api/v1/namespaces/default/events") {
			if lookup(ev, "involvedObject.name") == "missing" && ev["message"] == `Failed to pull image "webserver:404": `+notFound {
				n += int(ev["count"].(float64))
			}
		}
		return n
	}
	waitFor(t, "fine to run", func() bool { return phaseOf(t, h, "fine") == "Running" })
	waitFor(t, "the first pull to fail", func() bool { r, _ := waiting("missing"); return r == "ErrImagePull" })
	// The kubelet's events follow the status it wrote.
	waitFor(t, "the first pull's events", func() bool {
		return strings.Contains(strings.Join(kubeletEvents(t, h, "missing"), "\n"), "Failed: Error: ErrImagePull")
	})
	p := pod(t, h, "missing")
	for path, want := range map[string]any{
		"status.phase": "Pending",
		"status.containerStatuses.0.state.waiting.message": notFound,
		"status.containerStatuses.0.ready":                 false,
		"status.containerStatuses.0.imageID":               "",
	} {
		if got := lookup(p, path); got != want {
			t.Errorf("%s = %v, want %v", path, got, want)
		}
	}
	if c := condition(p, "Ready"); c["status"] != "False" || c["reason"] != "ContainersNotReady" {
		t.Errorf("Ready: %v", c)
	}
	events := strings.Join(kubeletEvents(t, h, "missing"), "\n")
	for _, want := range []string{`Pulling: Pulling image "webserver:404"`, `Failed: Failed to pull image "webserver:404": ` + notFound, "Failed: Error: ErrImagePull"} {
		if !strings.Contains(events, want) {
			t.Errorf("events lack %q:\n%s", want, events)
		}
	}
	if strings.Contains(events, "Pulled") || strings.Contains(events, "Started") {
		t.Errorf("a container started:\n%s", events)
	}
	waitFor(t, "unresolved to fail", func() bool { r, _ := waiting("unresolved"); return r == "ErrImagePull" })
	if _, msg := waiting("unresolved"); !strings.HasSuffix(msg.(string), "dial tcp: lookup invalid.registry.k8s.io: no such host") {
		t.Errorf("unresolved: %v", msg)
	}
	waitFor(t, "typo to fail", func() bool { r, _ := waiting("typo"); return r == "ErrImagePull" })

	// The back-off: 10 s after the first failure, a second pull (and 20 s
	// of back-off); 10 s later still, backing off; 10 s later, a third.
	// (Each advance restarts the kubelets: they recall the back-off.)
	sb.AdvanceClock(10 * time.Second)
	waitFor(t, "the second pull", func() bool { return pullFailures() == 2 })
	sb.AdvanceClock(10 * time.Second)
	waitFor(t, "the back-off", func() bool { r, _ := waiting("missing"); return r == "ImagePullBackOff" })
	if _, msg := waiting("missing"); msg != `Back-off pulling image "webserver:404": ErrImagePull: `+notFound {
		t.Errorf("back-off message: %v", msg)
	}
	waitFor(t, "the back-off's events", func() bool {
		return strings.Contains(strings.Join(kubeletEvents(t, h, "missing"), "\n"), "Failed: Error: ImagePullBackOff")
	})
	events = strings.Join(kubeletEvents(t, h, "missing"), "\n")
	for _, want := range []string{`BackOff: Back-off pulling image "webserver:404"`, "Failed: Error: ImagePullBackOff"} {
		if !strings.Contains(events, want) {
			t.Errorf("events lack %q:\n%s", want, events)
		}
	}
	if n := pullFailures(); n != 2 {
		t.Errorf("%d pulls during the back-off, want 2", n)
	}
	sb.AdvanceClock(10 * time.Second)
	waitFor(t, "the third pull", func() bool { return pullFailures() == 3 })
	if r, _ := waiting("missing"); r != "ErrImagePull" {
		t.Errorf("after the third pull: %v", r)
	}
	if phaseOf(t, h, "missing") != "Pending" {
		t.Errorf("phase %s", phaseOf(t, h, "missing"))
	}

	// Deleted while its image cannot be pulled, the pod ends Failed: its
	// container never ran, and the kubelet cannot say how it ended. (A
	// finalizer keeps the pod to be read.)
	mergePatch(t, h, "/api/v1/namespaces/default/pods/missing", `{"metadata":{"finalizers":["example.com/keep"]}}`)
	mustDo(t, h, 200, "DELETE", "/api/v1/namespaces/default/pods/missing", "")
	waitFor(t, "the deleted pod to end", func() bool { return phaseOf(t, h, "missing") == "Failed" })
	p = pod(t, h, "missing")
	if got := jsonOf(lookup(p, "status.containerStatuses.0.state")); got != `{"terminated":{"exitCode":137,"finishedAt":null,"message":"The container could not be located when the pod was terminated","reason":"ContainerStatusUnknown","startedAt":null}}` {
		t.Errorf("the container's last state: %s", got)
	}
}

// A kubelet rejects a pod bound to its node whose host port a pod it
// accepted holds (no scheduler checked it: it named its node): Failed,
// with the NodePorts reason and event, never started.
func TestKubelet_rejectsHostPortConflict(t *testing.T) {
	sb := openSandboxWith(t, playground.Options{Controllers: playground.Controllers{Nodes: 1}})
	h := sb.Handler()
	waitNodes(t, sb, "kubeplay-worker")
	waitForDefaultServiceAccount(t, h, "default")
	const spec = `{"nodeName":"kubeplay-worker","containers":[{"name":"c","image":"nginx","ports":[{"containerPort":21017,"hostPort":21017}]}]}`
	createPod(t, h, "holder", spec)
	waitFor(t, "holder to run", func() bool { return phaseOf(t, h, "holder") == "Running" })
	createPod(t, h, "rival", spec)
	waitFor(t, "rival to be rejected", func() bool { return phaseOf(t, h, "rival") == "Failed" })
	const message = "Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports"
	p := pod(t, h, "rival")
	for path, want := range map[string]any{
		"status.reason":            "NodePorts",
		"status.message":           "Pod was rejected: " + message,
		"status.containerStatuses": nil,
		"status.startTime":         nil,
	} {
		if got := lookup(p, path); got != want {
			t.Errorf("%s = %v, want %v", path, got, want)
		}
	}
	waitIdle(t, sb) // the kubelet's event follows the status it wrote
	if events := kubeletEvents(t, h, "rival"); jsonOf(events) != jsonOf([]string{"NodePorts: " + message}) {
		t.Errorf("events %q", events)
	}
	if phaseOf(t, h, "holder") != "Running" {
		t.Errorf("holder: %s", phaseOf(t, h, "holder"))
	}
}

// An emptyDir volume keeps what a container's run wrote for its next run:
// the e2e suite's "fail once" script fails, leaving a marker, and its
// restart finds the marker and succeeds.
func TestKubelet_emptyDirOutlivesARun(t *testing.T) {
	sb := openSandboxWith(t, playground.Options{Controllers: playground.Controllers{Nodes: 1}})
	h := sb.Handler()
	waitNodes(t, sb, "kubeplay-worker")
	waitForDefaultServiceAccount(t, h, "default")
	createPod(t, h, "once", `{"restartPolicy":"OnFailure","volumes":[{"name":"data","emptyDir":{}}],
		"containers":[{"name":"c","image":"busybox","command":["/bin/sh","-c"],"volumeMounts":[{"name":"data","mountPath":"/data"}],
			"args":["\n\t\t\tif [[ -r /data/foo ]]\n\t\t\tthen\n\t\t\t\texit 0\n\t\t\telse\n\t\t\t\ttouch /data/foo\n\t\t\t\texit 1\n\t\t\tfi\n\t\t"]}]}`)
	waitFor(t, "once to succeed", func() bool { return phaseOf(t, h, "once") == "Succeeded" })
	p := pod(t, h, "once")
	for path, want := range map[string]any{
		"status.containerStatuses.0.restartCount":                  float64(1),
		"status.containerStatuses.0.lastState.terminated.exitCode": float64(1),
		"status.containerStatuses.0.state.terminated.exitCode":     float64(0),
	} {
		if got := lookup(p, path); got != want {
			t.Errorf("%s = %v, want %v", path, got, want)
		}
	}
}
