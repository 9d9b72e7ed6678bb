package playground_test

import (
	"strings"
	"testing"
	"time"

	"kubeplay/playground"
)

// The tutorial's liveness probe: the container removes the file its exec
// probe reads, the probe fails failureThreshold times, and the kubelet
// kills the container (a shell as PID 1: at the end of the grace period)
// and restarts it.
func TestProbes_livenessRestarts(t *testing.T) {
	sb := openSandboxWith(t, playground.Options{Controllers: playground.Controllers{Nodes: 1}})
	h := sb.Handler()
	waitNodes(t, sb, "kubeplay-worker")
	waitForDefaultServiceAccount(t, h, "default")
	createPod(t, h, "liveness", `{"containers":[{"name":"liveness","image":"registry.k8s.io/busybox","args":["/bin/sh","-c","touch /tmp/healthy; sleep 30; rm -f /tmp/healthy; sleep 600"],
		"livenessProbe":{"exec":{"command":["cat","/tmp/healthy"]},"initialDelaySeconds":5,"periodSeconds":5}}]}`)
	waitFor(t, "liveness to be ready", func() bool { return condition(pod(t, h, "liveness"), "Ready")["status"] == "True" })

	sb.AdvanceClock(41 * time.Second) // failures at 30 (the file just removed), 35 and 40 s
	unhealthy := `Unhealthy: Liveness probe failed: cat: can't open '/tmp/healthy': No such file or directory` + "\n"
	killing := "Killing: Container liveness failed liveness probe, will be restarted"
	waitFor(t, "the Killing event", func() bool {
		return strings.Contains(strings.Join(kubeletEvents(t, h, "liveness"), "\n"), killing)
	})
	if got := lookup(pod(t, h, "liveness"), "status.containerStatuses.0.restartCount"); got != float64(0) {
		t.Errorf("restartCount %v during the grace period", got)
	}
	for _, ev := range items(t, h, "/api/v1/namespaces/default/events") {
		if ev["reason"] == "Unhealthy" && lookup(ev, "involvedObject.name") == "liveness" {
			if ev["type"] != "Warning" || ev["count"] != float64(3) || "Unhealthy: "+ev["message"].(string) != unhealthy ||
				lookup(ev, "involvedObject.fieldPath") != "spec.containers{liveness}" {
				t.Errorf("Unhealthy event: %s", jsonOf(ev))
			}
		}
	}

	sb.AdvanceClock(30 * time.Second) // the grace period
	waitFor(t, "the restart", func() bool {
		return lookup(pod(t, h, "liveness"), "status.containerStatuses.0.restartCount") == float64(1)
	})
	p := pod(t, h, "liveness")
	for path, want := range map[string]any{
		"status.containerStatuses.0.lastState.terminated.exitCode": float64(137),
		"status.containerStatuses.0.lastState.terminated.reason":   "Error",
	} {
		if got := lookup(p, path); got != want {
			t.Errorf("%s = %v, want %v", path, got, want)
		}
	}
	// The clock's advance restarted the kubelet: what it recorded before
	// is not recorded again.
	events := kubeletEvents(t, h, "liveness")
	n := 0
	for _, e := range events {
		if e == killing {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d Killing events:\n%s", n, strings.Join(events, "\n"))
	}
}

// A readiness probe on a port the container does not declare fails: the
// pod stays unready, its Unhealthy event recorded once, and the sandbox
// idle; a liveness probe that succeeds writes nothing.
func TestProbes_readinessFailsAndIdle(t *testing.T) {
	sb := openSandboxWith(t, playground.Options{Controllers: playground.Controllers{Nodes: 1}})
	h := sb.Handler()
	waitNodes(t, sb, "kubeplay-worker")
	waitForDefaultServiceAccount(t, h, "default")
	createPod(t, h, "unready", `{"containers":[{"name":"web","image":"nginx","ports":[{"containerPort":80}],"readinessProbe":{"httpGet":{"path":"/","port":81}}}]}`)
	createPod(t, h, "healthy", `{"containers":[{"name":"web","image":"nginx","ports":[{"name":"http","containerPort":80}],
		"livenessProbe":{"httpGet":{"path":"/","port":"http"},"periodSeconds":1},"readinessProbe":{"tcpSocket":{"port":80},"initialDelaySeconds":60}}]}`)
	waitFor(t, "unready to run", func() bool { return phaseOf(t, h, "unready") == "Running" })
	waitFor(t, "healthy to run", func() bool { return phaseOf(t, h, "healthy") == "Running" })
	if c := condition(pod(t, h, "healthy"), "Ready"); c["status"] != "False" {
		t.Errorf("healthy ready before its readiness probe's initial delay: %v", c)
	}
	sb.AdvanceClock(60 * time.Second)
	waitFor(t, "healthy to be ready", func() bool { return condition(pod(t, h, "healthy"), "Ready")["status"] == "True" })
	waitIdle(t, sb)
	assertStaysIdle(t, sb)

	p := pod(t, h, "unready")
	if c := condition(p, "Ready"); c["status"] != "False" || c["reason"] != "ContainersNotReady" || c["message"] != "containers with unready status: [web]" {
		t.Errorf("Ready: %v", c)
	}
	if started := lookup(p, "status.containerStatuses.0.started"); started != true {
		t.Errorf("started = %v", started)
	}
	ip := lookup(p, "status.podIP").(string)
	want := `Unhealthy: Readiness probe failed: Get "http://` + ip + `:81/": dial tcp ` + ip + `:81: connect: connection refused`
	if events := kubeletEvents(t, h, "unready"); !strings.Contains(strings.Join(events, "\n"), want) {
		t.Errorf("no %q in\n%s", want, strings.Join(events, "\n"))
	}
	if events := strings.Join(kubeletEvents(t, h, "healthy"), "\n"); strings.Contains(events, "Unhealthy") {
		t.Errorf("healthy has failed a probe:\n%s", events)
	}
}

// A startup probe holds the other probes until it succeeds; one that
// never succeeds has the container killed.
func TestProbes_startup(t *testing.T) {
	sb := openSandboxWith(t, playground.Options{Controllers: playground.Controllers{Nodes: 1}})
	h := sb.Handler()
	waitNodes(t, sb, "kubeplay-worker")
	waitForDefaultServiceAccount(t, h, "default")
	createPod(t, h, "slow", `{"containers":[{"name":"c","image":"busybox","command":["sh","-c","sleep 20; touch /tmp/started; sleep 600"],
		"startupProbe":{"exec":{"command":["test","-f","/tmp/started"]},"periodSeconds":5,"failureThreshold":10},
		"livenessProbe":{"exec":{"command":["cat","/tmp/started"]}}}]}`)
	createPod(t, h, "never", `{"containers":[{"name":"c","image":"agnhost","args":["grpc-health-checking"],"ports":[{"containerPort":5000}],
		"startupProbe":{"grpc":{"port":2333},"periodSeconds":5,"failureThreshold":2}}]}`)
	waitFor(t, "the pods to run", func() bool { return phaseOf(t, h, "slow") == "Running" && phaseOf(t, h, "never") == "Running" })
	if p := pod(t, h, "slow"); lookup(p, "status.containerStatuses.0.started") != false || lookup(p, "status.containerStatuses.0.ready") != false {
		t.Errorf("slow started at once: %s", jsonOf(p["status"]))
	}
	sb.AdvanceClock(20 * time.Second)
	waitFor(t, "slow to be ready", func() bool { return condition(pod(t, h, "slow"), "Ready")["status"] == "True" })
	waitFor(t, "never to be killed", func() bool {
		return lookup(pod(t, h, "never"), "status.containerStatuses.0.restartCount") == float64(1)
	})
	for _, want := range []string{`Unhealthy: Startup probe failed: timeout: failed to connect service "` + lookup(pod(t, h, "never"), "status.podIP").(string) + `:2333" within 1s: context deadline exceeded`,
		"Killing: Container c failed startup probe, will be restarted"} {
		// The events are written after the status that restarts it.
		waitFor(t, want, func() bool { return strings.Contains(strings.Join(kubeletEvents(t, h, "never"), "\n"), want) })
	}
	if got := lookup(pod(t, h, "never"), "status.containerStatuses.0.lastState.terminated.exitCode"); got != float64(143) {
		t.Errorf("exit code %v of a server killed", got)
	}
	if events := strings.Join(kubeletEvents(t, h, "slow"), "\n"); !strings.Contains(events, "Unhealthy: Startup probe failed: \n") && !strings.HasSuffix(events, "Unhealthy: Startup probe failed: ") {
		t.Errorf("slow's startup probe never failed:\n%s", events)
	}
}

// A script serves nothing: a network probe of it fails, and the probe's
// terminationGracePeriodSeconds bounds the kill. agnhost's liveness server
// redirecting elsewhere passes its probe with a warning.
func TestProbes_scriptsAndRedirects(t *testing.T) {
	sb := openSandboxWith(t, playground.Options{Controllers: playground.Controllers{Nodes: 1}})
	h := sb.Handler()
	waitNodes(t, sb, "kubeplay-worker")
	waitForDefaultServiceAccount(t, h, "default")
	createPod(t, h, "script", `{"terminationGracePeriodSeconds":500,"containers":[{"name":"c","image":"busybox","command":["sh","-c","sleep 1000"],
		"livenessProbe":{"httpGet":{"path":"/healthz","port":8080},"initialDelaySeconds":10,"failureThreshold":1,"terminationGracePeriodSeconds":5}}]}`)
	createPod(t, h, "redirect", `{"containers":[{"name":"c","image":"registry.k8s.io/e2e-test-images/agnhost:2.59","args":["liveness"],
		"livenessProbe":{"httpGet":{"path":"/redirect?loc=http%3A%2F%2F0.0.0.0%2F","port":8080},"initialDelaySeconds":15,"failureThreshold":1}}]}`)
	waitFor(t, "the pods to run", func() bool { return phaseOf(t, h, "script") == "Running" && phaseOf(t, h, "redirect") == "Running" })
	sb.AdvanceClock(15 * time.Second)
	waitFor(t, "script to restart", func() bool {
		return lookup(pod(t, h, "script"), "status.containerStatuses.0.restartCount") == float64(1)
	})
	ip := lookup(pod(t, h, "script"), "status.podIP").(string)
	unhealthy := `Unhealthy: Liveness probe failed: Get "http://` + ip + `:8080/healthz": dial tcp ` + ip + `:8080: connect: connection refused`
	// The events are written after the status that restarts it.
	waitFor(t, "the Unhealthy event", func() bool { return strings.Contains(strings.Join(kubeletEvents(t, h, "script"), "\n"), unhealthy) })
	want := `ProbeWarning: Liveness probe warning: Probe terminated redirects, Response body: <a href="http://0.0.0.0/">Found</a>.`
	waitFor(t, "the ProbeWarning event", func() bool { return strings.Contains(strings.Join(kubeletEvents(t, h, "redirect"), "\n"), want) })
	if got := lookup(pod(t, h, "redirect"), "status.containerStatuses.0.restartCount"); got != float64(0) {
		t.Errorf("redirect restarted %v times", got)
	}
}

// A pod being deleted whose shell holds on for its grace period turns
// unready: its readiness probe, still run, sees it shutting down.
func TestProbes_unreadyWhileTerminating(t *testing.T) {
	sb := openSandboxWith(t, playground.Options{Controllers: playground.Controllers{Nodes: 1}})
	h := sb.Handler()
	waitNodes(t, sb, "kubeplay-worker")
	waitForDefaultServiceAccount(t, h, "default")
	createPod(t, h, "shutting", `{"containers":[{"name":"c","image":"busybox","command":["sh","-c","touch /tmp/ready; sleep 3600"],
		"readinessProbe":{"exec":{"command":["cat","/tmp/ready"]}}}]}`)
	waitFor(t, "shutting to be ready", func() bool { return condition(pod(t, h, "shutting"), "Ready")["status"] == "True" })
	mustDo(t, h, 200, "DELETE", podPath("default", "shutting"), "")
	waitFor(t, "shutting to be unready", func() bool { return condition(pod(t, h, "shutting"), "Ready")["status"] == "False" })
	sb.AdvanceClock(30 * time.Second)
	waitFor(t, "shutting to go", gone(t, h, podPath("default", "shutting")))
}
