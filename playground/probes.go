package playground

import (
	"cmp"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"kubeplay/internal/jsonmap"
)

// Probes as the simulated kubelets run them. No process answers a probe,
// so its outcome follows from what the container does (programOf), by a
// fixed rule:
//   - an exec probe runs through the same interpreter as the container's
//     command, seeing the files the command created and removed by then:
//     `cat /tmp/healthy` fails once `rm -f /tmp/healthy` has run, and
//     before `touch /tmp/healthy` has; a file the command never touches is
//     the image's and exists. `false`, `exit 1` fail; a probe that sleeps
//     beyond timeoutSeconds (or for ever) times out.
//   - an httpGet, tcpSocket or grpc probe reaches a running container on a
//     port it declares (by number or name) or on any port when it declares
//     none, and is refused on a port it does not declare. The one image
//     whose own behaviour is known: agnhost's `liveness` server answers its
//     /healthz with 500 from 10 seconds after its start.
//
// Since every outcome is a function of the time since the container
// started, a container's probes are worked out at once (probeTimeline) and
// the kubelet only looks again when something observable happens: a probe
// that starts failing, a readiness change, a kill. A probe that keeps
// succeeding writes nothing, as in a real cluster; a failing readiness
// probe records its Unhealthy event once per failing streak (a kubelet
// repeats it every period, which would keep the sandbox busy for ever).

// probeSpec is one of a container's probes, with the API's defaults.
type probeSpec struct {
	kind                   string // "Liveness", "Readiness", "Startup"
	handler                jsonmap.Object
	delay, period, timeout time.Duration
	successes, failures    int
	grace                  *time.Duration // terminationGracePeriodSeconds of a liveness or startup probe
}

func probeOf(c jsonmap.Object, field, kind string) *probeSpec {
	pr := jsonmap.Child(c, field)
	if pr == nil {
		return nil
	}
	seconds := func(key string, def int64) time.Duration {
		n, ok := jsonmap.IntOf(pr[key])
		if !ok || n <= 0 && key != "initialDelaySeconds" {
			n = def
		}
		return time.Duration(n) * time.Second
	}
	count := func(key string, def int64) int {
		n, ok := jsonmap.IntOf(pr[key])
		if !ok || n <= 0 {
			n = def
		}
		return int(n)
	}
	ps := &probeSpec{kind: kind, handler: pr, delay: seconds("initialDelaySeconds", 0), period: seconds("periodSeconds", 10),
		timeout: seconds("timeoutSeconds", 1), successes: count("successThreshold", 1), failures: count("failureThreshold", 3)}
	if n, ok := jsonmap.IntOf(pr["terminationGracePeriodSeconds"]); ok {
		d := time.Duration(n) * time.Second
		ps.grace = &d
	}
	return ps
}

// probeEvent is an event a container's probes cause, at an offset from its
// start.
type probeEvent struct {
	at                      time.Duration
	eventType, reason, text string
}

// probeKill is a container killed by its liveness or startup probe.
type probeKill struct {
	at    time.Duration // the probe that failed for the last time
	grace time.Duration // how long the container takes to stop
}

// readyChange is the container's readiness from an offset on.
type readyChange struct {
	at    time.Duration
	ready bool
}

// probeOutcome is the outcome of one probe.
type probeOutcome struct {
	ok     bool
	output string
	// warning: it succeeded with a warning (a redirect not followed).
	warning bool
}

// probeTimeline is what a container's probes make of one run of it.
type probeTimeline struct {
	started time.Duration // when its startup probe succeeded; -1: never
	ready   []readyChange
	kill    *probeKill
	events  []probeEvent
}

// startedBy reports whether the container counts as started after d.
func (tl probeTimeline) startedBy(d time.Duration) bool { return tl.started >= 0 && d >= tl.started }

// readyAt is the container's readiness after running for d.
func (tl probeTimeline) readyAt(d time.Duration) bool {
	ready := false
	for _, r := range tl.ready {
		if r.at <= d {
			ready = r.ready
		}
	}
	return ready
}

// next is the first offset after d at which something observable
// happens, before end (negative: the run does not end by itself).
func (tl probeTimeline) next(d, end time.Duration) (time.Duration, bool) {
	var times []time.Duration
	if tl.started > d {
		times = append(times, tl.started)
	}
	for _, r := range tl.ready {
		times = append(times, r.at)
	}
	for _, e := range tl.events {
		times = append(times, e.at)
	}
	best, ok := time.Duration(0), false
	for _, t := range times {
		if t > d && (end < 0 || t < end) && (!ok || t < best) {
			best, ok = t, true
		}
	}
	return best, ok
}

// containerProbes is the outcome of the probes of container c of pod p,
// whose IP is podIP, over one run of prog, which ends at runEnd (negative:
// never by itself).
func containerProbes(p, c jsonmap.Object, podIP string, prog program, runEnd time.Duration) probeTimeline {
	name := stringOf(c["name"])
	tl := probeTimeline{}
	// After its last change a container's health stays as it is: past
	// that, a few periods settle every threshold.
	settled := func(ps *probeSpec) time.Duration {
		return lastHealthChange(c, prog) + ps.delay + time.Duration(ps.failures+ps.successes+2)*ps.period
	}
	within := func(t time.Duration) bool { return runEnd < 0 || t < runEnd }
	warned := map[string]bool{}
	// result runs probe ps at t; a warning is recorded once per probe (a
	// kubelet repeats it each period).
	result := func(ps *probeSpec, t time.Duration) (bool, string) {
		o := probeResult(p, c, podIP, prog, ps, t)
		if o.warning && !warned[ps.kind] {
			warned[ps.kind] = true
			tl.events = append(tl.events, probeEvent{t, "Warning", "ProbeWarning", ps.kind + " probe warning: " + o.output})
		}
		return o.ok, o.output
	}
	unhealthy := func(ps *probeSpec, at time.Duration, output string) {
		tl.events = append(tl.events, probeEvent{at, "Warning", "Unhealthy", ps.kind + " probe failed: " + output})
	}
	killed := func(ps *probeSpec, at time.Duration) {
		message := fmt.Sprintf("Container %s failed %s probe", name, strings.ToLower(ps.kind))
		if restartPolicyOf(p, c) != "Never" {
			message += ", will be restarted"
		}
		tl.events = append(tl.events, probeEvent{at, "Normal", "Killing", message})
		grace := time.Duration(0)
		if prog.ignoresTerm {
			grace = podGrace(p)
			if ps.grace != nil {
				grace = *ps.grace
			}
		}
		tl.kill = &probeKill{at: at, grace: grace}
	}

	if ps := probeOf(c, "startupProbe", "Startup"); ps != nil {
		tl.started = -1
		failed := 0
		for t := ps.delay; within(t) && t <= settled(ps); t += ps.period {
			ok, output := result(ps, t)
			if ok {
				tl.started = t
				break
			}
			unhealthy(ps, t, output)
			if failed++; failed >= ps.failures {
				killed(ps, t)
				return tl
			}
		}
		if tl.started < 0 {
			return tl
		}
	}
	end := runEnd
	if ps := probeOf(c, "livenessProbe", "Liveness"); ps != nil {
		failed := 0
		for t := max(ps.delay, tl.started); within(t) && t <= settled(ps)+tl.started; t += ps.period {
			ok, output := result(ps, t)
			if ok {
				failed = 0
				continue
			}
			unhealthy(ps, t, output)
			if failed++; failed >= ps.failures {
				killed(ps, t)
				end = t
				break
			}
		}
	}
	ps := probeOf(c, "readinessProbe", "Readiness")
	if ps == nil {
		tl.ready = []readyChange{{tl.started, true}}
		return tl
	}
	ready, streak := false, 0
	for t := max(ps.delay, tl.started); (end < 0 || t < end) && t <= settled(ps)+tl.started; t += ps.period {
		ok, output := result(ps, t)
		switch {
		case ok && streak < 0:
			streak = 1
		case ok:
			streak++
		case streak >= 0: // the first failure of a streak
			unhealthy(ps, t, output)
			streak = -1
		default:
			streak--
		}
		if !ready && streak >= ps.successes || ready && -streak >= ps.failures {
			ready = !ready
			tl.ready = append(tl.ready, readyChange{t, ready})
		}
	}
	return tl
}

// restartPolicyOf is the restart policy of container c of pod p.
func restartPolicyOf(p, c jsonmap.Object) string {
	if policy := stringOf(c["restartPolicy"]); policy != "" {
		return policy
	}
	return jsonmap.String(p, "spec", "restartPolicy")
}

// podGrace is the pod's termination grace period.
func podGrace(p jsonmap.Object) time.Duration {
	n, ok := jsonmap.Int(p, "spec", "terminationGracePeriodSeconds")
	if !ok {
		n = 30
	}
	return time.Duration(n) * time.Second
}

// agnhostLiveness reports whether c runs agnhost's liveness server, whose
// /healthz fails from 10 seconds after its start.
func agnhostLiveness(c jsonmap.Object) bool {
	argv := append(jsonmap.StringsOf(c["command"]), jsonmap.StringsOf(c["args"])...)
	return imageName(stringOf(c["image"])) == "agnhost" && slices.Contains(argv, "liveness")
}

const agnhostLivenessHealthy = 10 * time.Second

// lastHealthChange is when the last thing a probe can see changes in a
// run of prog.
func lastHealthChange(c jsonmap.Object, prog program) time.Duration {
	last := time.Duration(0)
	for _, f := range prog.files {
		last = max(last, f.at)
	}
	if agnhostLiveness(c) {
		last = max(last, agnhostLivenessHealthy)
	}
	return last
}

// probeResult is the outcome of probe ps of container c (of pod p, whose
// IP is podIP) after it has run prog for d.
func probeResult(p, c jsonmap.Object, podIP string, prog program, ps *probeSpec, d time.Duration) probeOutcome {
	h := ps.handler
	if cmd := jsonmap.StringsOf(jsonmap.Child(h, "exec")["command"]); len(cmd) > 0 {
		sh := newShell(p, c)
		sh.files = func(path string) (bool, bool) { return prog.fileAt(path, d) }
		if !sh.exec(cmd) || sh.prog.forever || sh.prog.runs > ps.timeout {
			return probeOutcome{output: fmt.Sprintf("command timed out: %q timed out after %s", strings.Join(cmd, " "), ps.timeout)}
		}
		var out strings.Builder
		for _, l := range sh.prog.output {
			out.WriteString(l.text)
		}
		return probeOutcome{ok: sh.prog.exitCode == 0, output: out.String()}
	}
	host := podIP
	for _, kind := range []string{"httpGet", "tcpSocket", "grpc"} {
		action := jsonmap.Child(h, kind)
		if action == nil {
			continue
		}
		if kind != "grpc" && stringOf(action["host"]) != "" {
			host = stringOf(action["host"])
		}
		port, listening := probePort(c, action["port"])
		listening = listening && prog.serves
		addr := net.JoinHostPort(host, strconv.Itoa(port))
		switch {
		case kind == "grpc" && !listening:
			return probeOutcome{output: fmt.Sprintf("timeout: failed to connect service %q within %s: context deadline exceeded", addr, ps.timeout)}
		case kind == "tcpSocket" && !listening:
			return probeOutcome{output: fmt.Sprintf("dial tcp %s: connect: connection refused", addr)}
		case kind != "httpGet":
			return probeOutcome{ok: true}
		}
		scheme := strings.ToLower(cmp.Or(stringOf(action["scheme"]), "http"))
		path := stringOf(action["path"])
		if !listening {
			return probeOutcome{output: fmt.Sprintf("Get %q: dial tcp %s: connect: connection refused", scheme+"://"+addr+path, addr)}
		}
		if !agnhostLiveness(c) {
			return probeOutcome{ok: true}
		}
		if u, err := url.Parse(path); err == nil && u.Path == "/redirect" {
			loc := u.Query().Get("loc")
			if target, err := url.Parse(loc); err == nil && target.Host != "" {
				return probeOutcome{ok: true, warning: true, output: fmt.Sprintf("Probe terminated redirects, Response body: <a href=%q>Found</a>.\n\n", loc)}
			}
			path = loc // followed on the same host
		}
		if path == "/healthz" && d > agnhostLivenessHealthy {
			return probeOutcome{output: "HTTP probe failed with statuscode: 500"}
		}
		return probeOutcome{ok: true}
	}
	return probeOutcome{ok: true}
}

// probePort is the number of a probe's port (a number or the name of one
// of the container's ports) and whether the container listens there.
func probePort(c jsonmap.Object, port any) (int, bool) {
	declared := jsonmap.Items(c["ports"])
	if name, ok := port.(string); ok {
		for _, cp := range declared {
			if cp["name"] == name {
				n, _ := jsonmap.IntOf(cp["containerPort"])
				return int(n), true
			}
		}
		n, err := strconv.Atoi(name)
		if err != nil {
			return 0, false
		}
		port = int64(n)
	}
	n, _ := jsonmap.IntOf(port)
	if len(declared) == 0 {
		return int(n), true
	}
	for _, cp := range declared {
		if m, _ := jsonmap.IntOf(cp["containerPort"]); m == n {
			return int(n), true
		}
	}
	return int(n), false
}
