package playground

import (
	"context"
	"fmt"
	"hash/fnv"
	"maps"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"kubeplay/internal/jsonmap"
	"kubeplay/server/inproc"
	"kubeplay/store"
)

// kubeletAgent is how a kubelet identifies itself to the API server.
const kubeletAgent = "kubelet/v1.35.4 (linux/amd64) kubernetes/7b8c6cf"

// Restart back-off of a container that exits and is restarted: none the
// first time, then 10 s doubling up to 5 minutes, as a kubelet's.
const (
	backoffInitial = 10 * time.Second
	backoffMax     = 5 * time.Minute
)

// kubelet is the kubelets of the simulated nodes (simulated: no containers
// run). Each runs the pods bound to its node as a kubelet shows them
// through the API: Pending with ContainerCreating, the init containers in
// order, images pulled and containers created and started (with events),
// Running and Ready (as its probes say: see probes.go), then what the
// containers' commands do (see programOf): a container that exits, or that
// its liveness or startup probe has killed, is restarted per the pod's
// restartPolicy with the kubelet's back-off (CrashLoopBackOff), and a pod
// whose containers are done Succeeds or Fails, one past its
// activeDeadlineSeconds Fails (DeadlineExceeded); a pod whose RuntimeClass
// cannot be run gets no sandbox, a container whose subPathExpr is wrong
// is not created (CreateContainerConfigError), an image that cannot be
// pulled backs off (ImagePullBackOff: see imagepull.go), and a pod whose
// host port a pod of the node holds is rejected (Failed: see admit). A pod
// deleted gracefully has its containers stopped (a shell or sleep as PID 1
// ignores SIGTERM and is killed when the grace period ends), then is
// removed for good. Every timed step is a later look at the pod
// (reconcile's after), on the sandbox's clock.
// Its keys are "<namespace>/<name>" of pods.
type kubelet struct {
	api   *inproc.Client
	now   func() time.Time
	names []string

	mu sync.Mutex // guards the fields below
	// events records each node's kubelet's events.
	events map[string]*eventRecorder
	// nextIP numbers the pod IPs each node hands out.
	nextIP map[string]int
	// pulled are the images each node has pulled.
	pulled map[string]map[string]bool
	// killing are the pods (by uid) whose containers were told to stop.
	killing map[string]bool
	// probed are, by pod uid and container ID, the offsets from the
	// container's start up to which its probes' events are recorded.
	probed map[string]map[string]time.Duration
	// pullBackOffs are the failed pulls of images that cannot be pulled,
	// by pod uid and image.
	pullBackOffs map[string]map[string]pullBackOff
	// disks are the nodes' disks, which outlive the kubelets, and the
	// pods' emptyDir volumes.
	disks *nodeDisks
}

var kubeletDef = controllerDef{name: "kubelet", title: "kubelets", simulated: true,
	start: func(sb *Sandbox) reconciler {
		return &kubelet{api: inproc.New(sb.handler, kubeletAgent), now: sb.clock.Now, names: sb.nodeNames(),
			events: map[string]*eventRecorder{}, nextIP: map[string]int{}, pulled: map[string]map[string]bool{}, killing: map[string]bool{}, probed: map[string]map[string]time.Duration{},
			pullBackOffs: map[string]map[string]pullBackOff{}, disks: &sb.disks}
	}}

// podKeyPrefix is where the store keeps pods.
var podKeyPrefix = builtinKeyPrefix(coreV1("pods"))

// stopping reports whether p waits for its node's kubelet to stop it.
func stopping(p jsonmap.Object) bool {
	grace, _ := jsonmap.Int(p, "metadata", "deletionGracePeriodSeconds")
	return deleting(p) && jsonmap.String(p, "spec", "nodeName") != "" && grace > 0
}

func (k *kubelet) resync(ctx context.Context, _ int64) ([]string, error) {
	pods, err := list(ctx, k.api, "/api/v1/pods")
	if err != nil {
		return nil, err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	var keys []string
	for _, p := range pods {
		node := jsonmap.String(p, "spec", "nodeName")
		if ip := jsonmap.String(p, "status", "podIP"); ip != "" && nodeIndex(k.names, node) >= 0 && jsonmap.Child(p, "spec")["hostNetwork"] != true {
			var a, b, c, d int
			if n, _ := fmt.Sscanf(ip, "%d.%d.%d.%d", &a, &b, &c, &d); n == 4 && d >= k.nextIP[node] {
				k.nextIP[node] = d + 1
			}
		}
		if stopping(p) || node != "" && !podTerminal(p) {
			keys = append(keys, podKey(p))
		}
	}
	return keys, nil
}

// keysOf names a pod that changed.
func (k *kubelet) keysOf(ev store.Event, q queue) {
	if key, ok := strings.CutPrefix(ev.KV.Key, podKeyPrefix); ok && ev.Type != store.Deleted {
		q.Add(key)
	}
}

func (k *kubelet) reconcile(ctx context.Context, key string) (time.Duration, error) {
	ns, name, _ := strings.Cut(key, "/")
	p, err := get(ctx, k.api, namedPath("", "pods", ns, name))
	if err != nil || p == nil {
		return 0, err
	}
	node := jsonmap.String(p, "spec", "nodeName")
	i := nodeIndex(k.names, node)
	if i < 0 {
		if stopping(p) {
			return k.stopOrphan(ctx, p, node)
		}
		return 0, nil
	}
	if deleting(p) {
		return k.terminate(ctx, p, i)
	}
	if podTerminal(p) {
		return 0, nil
	}
	return k.sync(ctx, p, i)
}

// stopOrphan removes a pod deleted gracefully whose node does not exist
// once its grace period is over (the pod garbage collector's part; no
// kubelet will ever confirm it).
func (k *kubelet) stopOrphan(ctx context.Context, p jsonmap.Object, node string) (time.Duration, error) {
	if n, err := get(ctx, k.api, "/api/v1/nodes/"+node); err != nil || n != nil {
		return 0, err
	}
	if wait := k.untilDeadline(p); wait > 0 {
		return wait, nil
	}
	return 0, k.remove(ctx, p)
}

func (k *kubelet) untilDeadline(p jsonmap.Object) time.Duration {
	deadline, err := time.Parse(time.RFC3339, jsonmap.String(p, "metadata", "deletionTimestamp"))
	if err != nil {
		return 0
	}
	return deadline.Sub(k.now())
}

// remove deletes p for good, as a kubelet confirms that its containers
// have stopped.
func (k *kubelet) remove(ctx context.Context, p jsonmap.Object) error {
	zero := int64(0)
	uid := types.UID(jsonmap.String(p, "metadata", "uid"))
	opts := metav1.DeleteOptions{TypeMeta: metav1.TypeMeta{Kind: "DeleteOptions", APIVersion: "v1"},
		GracePeriodSeconds: &zero, Preconditions: &metav1.Preconditions{UID: &uid}}
	if err := k.api.Do(ctx, "DELETE", objectPath("", "pods", p), opts, nil); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return err
	}
	k.mu.Lock()
	delete(k.killing, string(uid))
	delete(k.probed, string(uid))
	delete(k.pullBackOffs, string(uid))
	k.mu.Unlock()
	k.disks.drop("pod/" + string(uid))
	return nil
}

// recorder is the event recorder of node's kubelet.
func (k *kubelet) recorder(node string) *eventRecorder {
	k.mu.Lock()
	defer k.mu.Unlock()
	r := k.events[node]
	if r == nil {
		r = newEventRecorder(k.api, "kubelet", node, k.now)
		k.events[node] = r
	}
	return r
}

// podSync is one look at a pod: its status being made, the events to
// record once it is written, and when to look again.
type podSync struct {
	k      *kubelet
	p      jsonmap.Object
	node   string
	now    time.Time
	ts     string
	status jsonmap.Object
	events []podEvent
	due    time.Duration
	// probed are, by container ID, the offsets up to which its probes'
	// events are recorded once this look is written.
	probed map[string]time.Duration
}

type podEvent struct {
	fieldPath, eventType, reason, message string
}

// later asks for another look after d (the earliest asked wins).
func (s *podSync) later(d time.Duration) {
	d = max(d, time.Millisecond)
	if s.due == 0 || d < s.due {
		s.due = d
	}
}

func (s *podSync) event(fieldPath, eventType, reason, message string) {
	s.events = append(s.events, podEvent{fieldPath, eventType, reason, message})
}

// write stores the status if it changed, then records the events.
func (s *podSync) write(ctx context.Context) (time.Duration, error) {
	if !jsonEqual(s.status, jsonmap.Child(s.p, "status")) {
		p := copyMap(s.p)
		p["status"] = s.status
		if err := s.k.api.Do(ctx, "PUT", objectPath("", "pods", p)+"/status", p, nil); err != nil {
			if apierrors.IsNotFound(err) {
				return 0, nil
			}
			return 0, err
		}
	}
	if s.probed != nil {
		uid := jsonmap.String(s.p, "metadata", "uid")
		s.k.mu.Lock()
		if s.k.probed[uid] == nil {
			s.k.probed[uid] = map[string]time.Duration{}
		}
		maps.Copy(s.k.probed[uid], s.probed)
		s.k.mu.Unlock()
	}
	r := s.k.recorder(s.node)
	for _, e := range s.events {
		ref := refTo(s.p, "v1", "Pod")
		ref.FieldPath = e.fieldPath
		r.event(ctx, ref, e.eventType, e.reason, e.message)
	}
	return s.due, nil
}

// sync moves a pod bound to the simulated node i one step on.
func (k *kubelet) sync(ctx context.Context, p jsonmap.Object, i int) (time.Duration, error) {
	s := &podSync{k: k, p: p, node: k.names[i], now: k.now(), ts: timestamp(k.now), status: copyMap(jsonmap.Child(p, "status"))}
	if s.status == nil {
		s.status = jsonmap.Object{}
	}
	st := s.status
	if st["startTime"] == nil {
		reason, message, err := k.admit(ctx, p, s.node)
		if err != nil {
			return 0, err
		}
		if reason != "" {
			s.event("", "Warning", reason, message)
			st["phase"], st["reason"], st["message"] = "Failed", reason, "Pod was rejected: "+message
			return s.write(ctx)
		}
		// First sight: the pod is accepted, its sandbox being made; the
		// change this write makes brings the pod back here to start it.
		hostIP := nodeIP(i)
		st["hostIP"], st["hostIPs"] = hostIP, []any{map[string]any{"ip": hostIP}}
		st["startTime"] = s.ts
	} else if st["podIP"] == nil {
		failure, err := k.sandboxFailure(ctx, p)
		if err != nil {
			return 0, err
		}
		if failure == "" {
			k.assignIP(s, i)
		} else {
			// Tried again when the pod changes.
			s.event("", "Warning", "FailedCreatePodSandBox", "Failed to create pod sandbox: "+failure)
		}
	}
	sandboxReady := st["podIP"] != nil
	if s.pastActiveDeadline() {
		return s.write(ctx)
	}
	if err := k.recallProbeEvents(ctx, p); err != nil {
		return 0, err
	}
	if err := k.recallPullBackOffs(ctx, p); err != nil {
		return 0, err
	}
	s.syncContainers(sandboxReady)
	s.conditions(sandboxReady)
	return s.write(ctx)
}

// admit is why the kubelet of node rejects p on first sight, as its
// admission handler does ("" if it accepts it): a host port that a pod it
// accepted before holds (a pod bound to the node by its nodeName, which no
// scheduler checked).
func (k *kubelet) admit(ctx context.Context, p jsonmap.Object, node string) (reason, message string, err error) {
	if len(hostPortsOf(p)) == 0 {
		return "", "", nil
	}
	pods, err := list(ctx, k.api, "/api/v1/pods?fieldSelector=spec.nodeName%3D"+node)
	if err != nil {
		return "", "", err
	}
	var accepted []jsonmap.Object
	for _, other := range pods {
		if jsonmap.String(other, "metadata", "uid") != jsonmap.String(p, "metadata", "uid") && !podTerminal(other) &&
			jsonmap.String(other, "status", "startTime") != "" {
			accepted = append(accepted, other)
		}
	}
	if portsConflict(p, accepted) {
		return "NodePorts", "Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports", nil
	}
	return "", "", nil
}

// pastActiveDeadline fails the pod, as a kubelet does, once it has been
// active on the node for its spec.activeDeadlineSeconds (counted from its
// startTime; an update may shorten it): its containers are killed at once.
// Until then it asks for a look when the deadline comes.
func (s *podSync) pastActiveDeadline() bool {
	seconds, ok := jsonmap.Int(s.p, "spec", "activeDeadlineSeconds")
	if !ok {
		return false
	}
	left := parseTime(stringOf(s.status["startTime"])).Add(time.Duration(seconds) * time.Second).Sub(s.now)
	if left > 0 {
		s.later(left)
		return false
	}
	const reason, message = "DeadlineExceeded", "Pod was active on the node longer than the specified deadline"
	s.event("", "Normal", reason, message)
	s.stopContainers(true, 0)
	s.status["phase"], s.status["reason"], s.status["message"] = "Failed", reason, message
	s.conditions(false)
	return true
}

// runtimeHandlers are the handlers the nodes' container runtime has, as
// on a kind node.
var runtimeHandlers = map[string]bool{"runc": true, "test-handler": true}

// sandboxFailure is why the node's runtime cannot make the pod's sandbox,
// "" if it can: its RuntimeClass does not exist (deleted since the pod
// was admitted) or names a handler the runtime does not have.
func (k *kubelet) sandboxFailure(ctx context.Context, p jsonmap.Object) (string, error) {
	name := jsonmap.String(p, "spec", "runtimeClassName")
	if name == "" {
		return "", nil
	}
	class, err := get(ctx, k.api, "/apis/node.k8s.io/v1/runtimeclasses/"+name)
	switch {
	case err != nil:
		return "", err
	case class == nil:
		return fmt.Sprintf("runtimeclass.node.k8s.io %q not found", name), nil
	case !runtimeHandlers[stringOf(class["handler"])]:
		return fmt.Sprintf("rpc error: code = Unknown desc = failed to get sandbox runtime: no runtime for %q is configured", class["handler"]), nil
	}
	return "", nil
}

// assignIP gives the pod its IP, from its node's pod CIDR (the node's own
// for a pod on the host's network).
func (k *kubelet) assignIP(s *podSync, i int) {
	ip := nodeIP(i)
	if hostNetwork, _ := jsonmap.Child(s.p, "spec")["hostNetwork"].(bool); !hostNetwork {
		k.mu.Lock()
		n := max(k.nextIP[s.node], 2)
		k.nextIP[s.node] = n + 1
		k.mu.Unlock()
		ip = podIP(i, n)
	}
	s.status["podIP"], s.status["podIPs"] = ip, []any{map[string]any{"ip": ip}}
}

// syncContainers steps the init containers in order, then the containers.
func (s *podSync) syncContainers(sandboxReady bool) {
	spec := jsonmap.Child(s.p, "spec")
	inits, containers := jsonmap.Items(spec["initContainers"]), jsonmap.Items(spec["containers"])
	waiting := "ContainerCreating"
	if len(inits) > 0 {
		waiting = "PodInitializing"
	}
	initStatuses := s.statuses("initContainerStatuses", inits, waiting)
	statuses := s.statuses("containerStatuses", containers, waiting)
	restartPolicy := stringOf(spec["restartPolicy"])
	initialized := sandboxReady
	for j, c := range inits {
		if !initialized {
			break
		}
		cs := initStatuses[j]
		fieldPath := "spec.initContainers{" + stringOf(c["name"]) + "}"
		if c["restartPolicy"] == "Always" { // a sidecar: started, then the next one
			s.step(c, cs, "Always", fieldPath)
			initialized = cs["started"] == true
			continue
		}
		policy := restartPolicy
		if policy == "Always" {
			policy = "OnFailure" // an init container that succeeded is done
		}
		s.step(c, cs, policy, fieldPath)
		// A kubelet reports an init container that completed as ready.
		cs["ready"] = exitCodeOf(cs) == 0 && jsonmap.Child(cs, "state", "terminated") != nil
		initialized = cs["ready"] == true
	}
	if initialized {
		for j, c := range containers {
			s.step(c, statuses[j], restartPolicy, "spec.containers{"+stringOf(c["name"])+"}")
		}
	}
	if len(inits) > 0 {
		s.status["initContainerStatuses"] = toAny(initStatuses)
	}
	s.status["containerStatuses"] = toAny(statuses)
	s.status["phase"] = s.phase(inits, initStatuses, statuses, restartPolicy)
}

func toAny(l []jsonmap.Object) []any {
	out := make([]any, len(l))
	for i, o := range l {
		out[i] = map[string]any(o)
	}
	return out
}

// statuses are the statuses of containers from the pod's status under
// field, each new one waiting for reason.
func (s *podSync) statuses(field string, containers []map[string]any, reason string) []jsonmap.Object {
	old := map[string]jsonmap.Object{}
	for _, cs := range jsonmap.Items(s.status[field]) {
		old[stringOf(cs["name"])] = cs
	}
	out := make([]jsonmap.Object, len(containers))
	for i, c := range containers {
		name := stringOf(c["name"])
		if cs := old[name]; cs != nil {
			out[i] = cs
			continue
		}
		image := stringOf(c["image"])
		out[i] = jsonmap.Object{"name": name, "image": canonicalImage(image), "imageID": "", "ready": false, "restartCount": int64(0),
			"started": false, "lastState": map[string]any{}, "state": map[string]any{"waiting": map[string]any{"reason": reason}}}
		if mounts := volumeMountsOf(c); len(mounts) > 0 {
			out[i]["volumeMounts"] = mounts
		}
	}
	return out
}

func volumeMountsOf(c map[string]any) []any {
	var out []any
	for _, m := range jsonmap.Items(c["volumeMounts"]) {
		vm := map[string]any{"name": m["name"], "mountPath": m["mountPath"]}
		if ro, _ := m["readOnly"].(bool); ro {
			vm["readOnly"] = true
			vm["recursiveReadOnly"] = "Disabled"
		}
		out = append(out, vm)
	}
	return out
}

// canonicalImage is an image reference as the container runtime reports
// it ("nginx" -> "docker.io/library/nginx:latest").
func canonicalImage(image string) string {
	name, digest, hasDigest := strings.Cut(image, "@")
	first, _, hasSlash := strings.Cut(name, "/")
	if !hasSlash {
		name = "docker.io/library/" + name
	} else if !strings.ContainsAny(first, ".:") && first != "localhost" {
		name = "docker.io/" + name
	}
	if hasDigest {
		return name + "@" + digest
	}
	if i := strings.LastIndex(name, ":"); i < strings.LastIndex(name, "/") || i < 0 {
		name += ":latest"
	}
	return name
}

// imageID is the simulated digest of an image.
func imageID(image string) string {
	repo := canonicalImage(image)
	if i := strings.LastIndexAny(repo, ":@"); i > strings.LastIndex(repo, "/") {
		repo = repo[:i]
	}
	return repo + "@sha256:" + hashHex(image, 64)
}

func hashHex(s string, n int) string {
	var out string
	for i := 0; len(out) < n; i++ {
		h := fnv.New64a()
		fmt.Fprint(h, s, i)
		out += fmt.Sprintf("%016x", h.Sum64())
	}
	return out[:n]
}

// backoff is how long a container that has restarted restarts times, and
// then ran for ran, waits before its next start. A kubelet forgets the
// back-off of a container that ran for twice its maximum: a program runs
// the same way each time, so such a container always restarts at once.
func backoff(restarts int64, ran time.Duration) time.Duration {
	if restarts <= 0 || ran > 2*backoffMax {
		return 0
	}
	return doubling(backoffInitial, backoffMax, int(restarts))
}

// doubling is the nth delay (from 1) of a back-off that starts at initial
// and doubles up to limit.
func doubling(initial, limit time.Duration, n int) time.Duration {
	d := initial
	for range n - 1 {
		if d *= 2; d >= limit {
			return limit
		}
	}
	return d
}

// step moves one container on: started when it is its turn, ended when
// its program ends, restarted after its back-off when policy says so.
func (s *podSync) step(c map[string]any, cs jsonmap.Object, policy, fieldPath string) {
	state := jsonmap.Child(cs, "state")
	restarts, _ := jsonmap.IntOf(cs["restartCount"])
	switch {
	case state["running"] != nil:
		s.running(c, cs, parseTime(jsonmap.String(state, "running", "startedAt")), policy, fieldPath)
	case jsonmap.String(state, "waiting", "reason") == createContainerConfigError:
		// Tried again when the pod changes: its spec or the fields its
		// environment reads.
		if containerConfigError(s.p, c) != jsonmap.String(state, "waiting", "message") {
			s.start(c, cs, fieldPath)
		}
	case state["waiting"] != nil && jsonmap.Child(cs, "lastState", "terminated") != nil:
		finished := parseTime(jsonmap.String(cs, "lastState", "terminated", "finishedAt"))
		ran := finished.Sub(parseTime(jsonmap.String(cs, "lastState", "terminated", "startedAt")))
		if wait := finished.Add(backoff(restarts, ran)).Sub(s.now); wait > 0 {
			s.later(wait)
			return
		}
		cs["restartCount"] = restarts + 1
		s.start(c, cs, fieldPath)
	case state["waiting"] != nil:
		s.start(c, cs, fieldPath)
	}
}

// createContainerConfigError is the reason a container waits whose
// configuration its kubelet cannot make.
const createContainerConfigError = "CreateContainerConfigError"

// start pulls the container's image as its pull policy says and starts it.
func (s *podSync) start(c map[string]any, cs jsonmap.Object, fieldPath string) {
	image := stringOf(c["image"])
	if reason := pullError(image); reason != "" {
		s.failPull(cs, image, reason, fieldPath)
		return
	}
	s.k.mu.Lock()
	pulled := s.k.pulled[s.node]
	if pulled == nil {
		pulled = map[string]bool{}
		s.k.pulled[s.node] = pulled
	}
	present := pulled[image]
	pulled[image] = true
	s.k.mu.Unlock()
	if c["imagePullPolicy"] == "Always" || !present {
		s.event(fieldPath, "Normal", "Pulling", fmt.Sprintf("Pulling image %q", image))
		size := 1<<20 + len(hashHex(image, 8))*(1<<18)
		s.event(fieldPath, "Normal", "Pulled", fmt.Sprintf("Successfully pulled image %q in 812ms (812ms including waiting). Image size: %d bytes.", image, size))
	} else {
		s.event(fieldPath, "Normal", "Pulled", fmt.Sprintf("Container image %q already present on machine", image))
	}
	if msg := containerConfigError(s.p, c); msg != "" {
		s.event(fieldPath, "Warning", "Failed", "Error: "+msg)
		cs["state"] = map[string]any{"waiting": map[string]any{"reason": createContainerConfigError, "message": msg}}
		return
	}
	s.event(fieldPath, "Normal", "Created", "Container created")
	s.event(fieldPath, "Normal", "Started", "Container started")
	h := fnv.New64a()
	fmt.Fprint(h, jsonmap.String(s.p, "metadata", "uid"), cs["name"], cs["restartCount"])
	cs["containerID"] = fmt.Sprintf("%s%016x%016x", strings.SplitAfter(nodeRuntime, "://")[0], h.Sum64(), h.Sum64()^0x9e3779b97f4a7c15)
	cs["imageID"] = imageID(image)
	cs["state"] = map[string]any{"running": map[string]any{"startedAt": s.ts}}
	cs["ready"], cs["started"] = false, false
	s.running(c, cs, s.now, "", fieldPath)
}

// running looks at a running container: its probes' events, whether it
// has started and is ready, and whether its program has ended or its
// probes have had it killed.
func (s *podSync) running(c map[string]any, cs jsonmap.Object, startedAt time.Time, policy, fieldPath string) {
	prog := s.program(c, cs)
	ran := s.now.Sub(startedAt)
	s.wrote(c, cs, prog, ran)
	end := prog.runs
	if prog.forever {
		end = -1
	}
	tl := containerProbes(s.p, c, stringOf(s.status["podIP"]), prog, end)
	if tl.kill != nil {
		// Killed: a shell that ignores SIGTERM holds on for the grace
		// period, then dies of SIGKILL; another dies of SIGTERM.
		end = tl.kill.at + tl.kill.grace
		prog.runs, prog.message, prog.exitCode = end, "", 143
		if prog.ignoresTerm {
			prog.exitCode = 137
		}
	}
	s.probeEvents(cs, tl, ran, fieldPath)
	if end >= 0 && ran >= end {
		s.exit(c, cs, prog, startedAt, policy, fieldPath)
		return
	}
	cs["started"], cs["ready"] = tl.startedBy(ran), tl.readyAt(ran)
	if next, ok := tl.next(ran, end); ok {
		s.later(next - ran)
	}
	if end >= 0 {
		s.later(end - ran)
	}
}

// recallProbeEvents learns, for a pod with probes that this kubelet has
// not looked at since it started (the sandbox's controllers restart when
// its clock is advanced), which of its probes' events it recorded before:
// those its Events say, so that none is recorded twice.
func (k *kubelet) recallProbeEvents(ctx context.Context, p jsonmap.Object) error {
	uid := jsonmap.String(p, "metadata", "uid")
	k.mu.Lock()
	_, known := k.probed[uid]
	k.mu.Unlock()
	spec := jsonmap.Child(p, "spec")
	probed := false
	for _, c := range append(jsonmap.Items(spec["initContainers"]), jsonmap.Items(spec["containers"])...) {
		probed = probed || c["livenessProbe"] != nil || c["readinessProbe"] != nil || c["startupProbe"] != nil
	}
	if known || !probed {
		return nil
	}
	events, err := list(ctx, k.api, "/api/v1/namespaces/"+jsonmap.String(p, "metadata", "namespace")+"/events?fieldSelector=involvedObject.uid%3D"+uid)
	if err != nil {
		return err
	}
	recorded := map[string]time.Duration{}
	st := jsonmap.Child(p, "status")
	for _, cs := range append(jsonmap.Items(st["initContainerStatuses"]), jsonmap.Items(st["containerStatuses"])...) {
		startedAt := jsonmap.String(jsonmap.Object(cs), "state", "running", "startedAt")
		if startedAt == "" {
			continue
		}
		for _, ev := range events {
			name := "{" + stringOf(cs["name"]) + "}"
			reason, message := stringOf(ev["reason"]), stringOf(ev["message"])
			if !strings.HasSuffix(jsonmap.String(ev, "involvedObject", "fieldPath"), name) ||
				reason != "Unhealthy" && !(reason == "Killing" && strings.Contains(message, " probe")) {
				continue
			}
			at := parseTime(stringOf(ev["lastTimestamp"])).Sub(parseTime(startedAt))
			id := stringOf(cs["containerID"])
			if prev, ok := recorded[id]; at >= 0 && (!ok || at > prev) {
				recorded[id] = at
			}
		}
	}
	k.mu.Lock()
	k.probed[uid] = recorded
	k.mu.Unlock()
	return nil
}

// probeEvents records the events of the container's probes due by ran
// that this kubelet has not recorded yet.
func (s *podSync) probeEvents(cs jsonmap.Object, tl probeTimeline, ran time.Duration, fieldPath string) {
	if len(tl.events) == 0 {
		return
	}
	id := stringOf(cs["containerID"])
	uid := jsonmap.String(s.p, "metadata", "uid")
	s.k.mu.Lock()
	done, seen := s.k.probed[uid][id]
	s.k.mu.Unlock()
	if !seen {
		done = -1
	}
	for _, e := range tl.events {
		if e.at > done && e.at <= ran {
			s.event(fieldPath, e.eventType, e.reason, e.text)
		}
	}
	if s.probed == nil {
		s.probed = map[string]time.Duration{}
	}
	s.probed[id] = ran
}

// exit ends a container's run at its program's end, and restarts it or
// waits out its back-off as policy ("" when the caller decides) says.
func (s *podSync) exit(c map[string]any, cs jsonmap.Object, prog program, startedAt time.Time, policy, fieldPath string) {
	if policy == "" {
		policy = s.policyOf(c, fieldPath)
	}
	reason := "Completed"
	if prog.exitCode != 0 {
		reason = "Error"
	}
	message := prog.message
	if message == "" && prog.exitCode != 0 && c["terminationMessagePolicy"] == "FallbackToLogsOnError" {
		message = lastLines(prog.logOf(prog.runs), 80, 2048)
	}
	terminated := map[string]any{"exitCode": int64(prog.exitCode), "reason": reason, "startedAt": startedAt.UTC().Format(time.RFC3339),
		"finishedAt": startedAt.Add(prog.runs).UTC().Format(time.RFC3339), "containerID": cs["containerID"]}
	if message != "" {
		terminated["message"] = message
	}
	cs["ready"], cs["started"] = false, false
	if policy == "Always" || policy == "OnFailure" && prog.exitCode != 0 {
		restarts, _ := jsonmap.IntOf(cs["restartCount"])
		cs["lastState"] = map[string]any{"terminated": terminated}
		delay := backoff(restarts, prog.runs)
		wait := startedAt.Add(prog.runs).Add(delay).Sub(s.now)
		if wait <= 0 {
			cs["restartCount"] = restarts + 1
			s.start(c, cs, fieldPath)
			return
		}
		pod := fmt.Sprintf("%s_%s(%s)", jsonmap.String(s.p, "metadata", "name"), jsonmap.String(s.p, "metadata", "namespace"), jsonmap.String(s.p, "metadata", "uid"))
		cs["state"] = map[string]any{"waiting": map[string]any{"reason": "CrashLoopBackOff",
			"message": fmt.Sprintf("back-off %s restarting failed container=%s pod=%s", delay, cs["name"], pod)}}
		s.event(fieldPath, "Warning", "BackOff", fmt.Sprintf("Back-off restarting failed container %s in pod %s", cs["name"], pod))
		s.later(wait)
		return
	}
	cs["state"] = map[string]any{"terminated": terminated}
}

// policyOf is the restart policy of the container at fieldPath.
func (s *podSync) policyOf(c map[string]any, fieldPath string) string {
	policy := jsonmap.String(s.p, "spec", "restartPolicy")
	if strings.HasPrefix(fieldPath, "spec.initContainers") {
		if c["restartPolicy"] == "Always" {
			return "Always"
		}
		if policy == "Always" {
			return "OnFailure"
		}
	}
	return policy
}

// lastLines is the end of a log, at most n lines and size bytes.
func lastLines(log string, n, size int) string {
	lines := strings.SplitAfter(log, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	out := strings.Join(lines, "")
	if len(out) > size {
		out = out[len(out)-size:]
	}
	return out
}

func exitCodeOf(cs jsonmap.Object) int64 {
	n, _ := jsonmap.Int(cs, "state", "terminated", "exitCode")
	return n
}

func parseTime(s string) time.Time {
	t, _ := time.Parse(time.RFC3339, s)
	return t
}

// phase is the pod's phase as a kubelet derives it from its containers.
func (s *podSync) phase(inits []map[string]any, initStatuses, statuses []jsonmap.Object, restartPolicy string) string {
	for j, c := range inits {
		cs := initStatuses[j]
		if c["restartPolicy"] != "Always" && jsonmap.Child(cs, "state", "terminated") != nil && exitCodeOf(cs) != 0 && restartPolicy == "Never" {
			return "Failed"
		}
		if c["restartPolicy"] != "Always" && (jsonmap.Child(cs, "state", "terminated") == nil || exitCodeOf(cs) != 0) {
			return "Pending"
		}
	}
	running, stopped, succeeded := 0, 0, 0
	for _, cs := range statuses {
		state := jsonmap.Child(cs, "state")
		switch {
		case state["running"] != nil:
			running++
		case state["terminated"] != nil:
			stopped++
			if exitCodeOf(cs) == 0 {
				succeeded++
			}
		case jsonmap.Child(cs, "lastState", "terminated") != nil:
			stopped++
		default:
			return "Pending"
		}
	}
	switch {
	case running > 0:
		return "Running"
	case restartPolicy == "Always" || stopped > endedForGood(statuses):
		return "Running" // waiting to restart
	case succeeded == stopped:
		return "Succeeded"
	}
	return "Failed"
}

// endedForGood counts the containers that ended and will not restart.
func endedForGood(statuses []jsonmap.Object) int {
	n := 0
	for _, cs := range statuses {
		if jsonmap.Child(cs, "state", "terminated") != nil {
			n++
		}
	}
	return n
}

// conditions sets the pod's conditions as a kubelet generates them.
func (s *podSync) conditions(sandboxReady bool) {
	st := s.status
	phase := stringOf(st["phase"])
	spec := jsonmap.Child(s.p, "spec")
	var incomplete, unready []string
	regularStarted := false
	for _, cs := range jsonmap.Items(st["containerStatuses"]) {
		if cs["ready"] != true {
			unready = append(unready, stringOf(cs["name"]))
		}
		if jsonmap.Child(cs, "state")["running"] != nil || jsonmap.Child(cs, "lastState")["terminated"] != nil || jsonmap.Child(cs, "state")["terminated"] != nil {
			regularStarted = true
		}
	}
	inits := jsonmap.Items(spec["initContainers"])
	for j, cs := range jsonmap.Items(st["initContainerStatuses"]) {
		sidecar := j < len(inits) && inits[j]["restartPolicy"] == "Always"
		if sidecar && cs["ready"] != true {
			unready = append([]string{stringOf(cs["name"])}, unready...)
		}
		done := jsonmap.Child(cs, "state")["terminated"] != nil && exitCodeOf(cs) == 0 || sidecar && cs["started"] == true
		if !done {
			incomplete = append(incomplete, stringOf(cs["name"]))
		}
	}
	bool2 := func(b bool) string {
		if b {
			return "True"
		}
		return "False"
	}
	type cond struct{ status, reason, message string }
	ready := cond{status: "True"}
	switch {
	case phase == "Succeeded":
		ready = cond{"False", "PodCompleted", ""}
	case phase == "Failed":
		ready = cond{"False", "PodFailed", ""}
	case len(unready) > 0:
		ready = cond{"False", "ContainersNotReady", fmt.Sprintf("containers with unready status: %v", unready)}
	}
	initialized := cond{status: "True"}
	if phase == "Succeeded" {
		initialized.reason = "PodCompleted"
	} else if len(incomplete) > 0 && !regularStarted {
		initialized = cond{"False", "ContainersNotInitialized", fmt.Sprintf("containers with incomplete status: %v", incomplete)}
	}
	want := []struct {
		t string
		cond
	}{
		{"PodReadyToStartContainers", cond{status: bool2(sandboxReady && phase != "Succeeded" && phase != "Failed")}},
		{"Initialized", initialized},
		{"Ready", ready},
		{"ContainersReady", ready},
	}
	generation, _ := jsonmap.Int(s.p, "metadata", "generation")
	old := jsonmap.Items(st["conditions"])
	var conds []any
	for _, w := range want {
		c := map[string]any{"type": w.t, "status": w.status, "lastProbeTime": nil, "lastTransitionTime": s.ts}
		if generation > 0 {
			c["observedGeneration"] = generation
		}
		if w.reason != "" {
			c["reason"] = w.reason
		}
		if w.message != "" {
			c["message"] = w.message
		}
		for _, o := range old {
			if o["type"] == w.t && o["status"] == w.status {
				c["lastTransitionTime"] = o["lastTransitionTime"]
			}
		}
		conds = append(conds, c)
	}
	for _, o := range old {
		switch o["type"] {
		case "PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady":
		default:
			conds = append(conds, map[string]any(o)) // PodScheduled, DisruptionTarget, readiness gates' ...
		}
	}
	st["conditions"] = conds
	if generation > 0 {
		st["observedGeneration"] = generation
	}
}

// terminate stops the containers of a pod being deleted, then removes it:
// a container that acts on SIGTERM stops at once, one that ignores it is
// killed when the grace period ends.
func (k *kubelet) terminate(ctx context.Context, p jsonmap.Object, i int) (time.Duration, error) {
	if podTerminal(p) || jsonmap.String(p, "status", "podIP") == "" {
		return 0, k.remove(ctx, p)
	}
	s := &podSync{k: k, p: p, node: k.names[i], now: k.now(), ts: timestamp(k.now), status: copyMap(jsonmap.Child(p, "status"))}
	uid := jsonmap.String(p, "metadata", "uid")
	k.mu.Lock()
	first := !k.killing[uid]
	k.killing[uid] = true
	k.mu.Unlock()
	wait := k.untilDeadline(p)
	allStopped := s.stopContainers(first, wait)
	if allStopped {
		s.neverStarted()
		failed := false
		for _, cs := range jsonmap.Items(s.status["containerStatuses"]) {
			failed = failed || exitCodeOf(cs) != 0
		}
		s.status["phase"] = map[bool]string{false: "Succeeded", true: "Failed"}[failed]
	}
	sandbox := !allStopped
	s.conditions(sandbox)
	if _, err := s.write(ctx); err != nil {
		return 0, err
	}
	if !allStopped {
		return wait, nil
	}
	return 0, k.remove(ctx, p)
}

// neverStarted marks the containers of a pod that ended that were still
// waiting (their image not pulled, a back-off) as a kubelet does: terminated,
// their state unknown, so the pod ends Failed rather than Succeeded.
func (s *podSync) neverStarted() {
	for _, field := range []string{"initContainerStatuses", "containerStatuses"} {
		for _, cs := range jsonmap.Items(s.status[field]) {
			if jsonmap.Child(cs, "state", "waiting") == nil {
				continue
			}
			cs["ready"], cs["started"] = false, false
			cs["state"] = map[string]any{"terminated": map[string]any{"exitCode": int64(137), "reason": "ContainerStatusUnknown",
				"message": "The container could not be located when the pod was terminated", "startedAt": nil, "finishedAt": nil}}
		}
	}
}

// stopContainers stops the pod's running containers (announcing it when
// first): one that acts on SIGTERM stops at once, one that ignores it is
// killed when its grace period, wait, is over. It reports whether all
// have stopped.
func (s *podSync) stopContainers(first bool, wait time.Duration) bool {
	spec := jsonmap.Child(s.p, "spec")
	allStopped := true
	for _, field := range []struct{ spec, status, path string }{{"initContainers", "initContainerStatuses", "spec.initContainers"}, {"containers", "containerStatuses", "spec.containers"}} {
		containers := jsonmap.Items(spec[field.spec])
		for _, cs := range jsonmap.Items(s.status[field.status]) {
			running := jsonmap.Child(cs, "state", "running")
			if running == nil {
				continue
			}
			var c map[string]any
			for _, sc := range containers {
				if sc["name"] == cs["name"] {
					c = sc
				}
			}
			if first {
				s.event(field.path+"{"+stringOf(cs["name"])+"}", "Normal", "Killing", "Stopping container "+stringOf(cs["name"]))
			}
			if c["readinessProbe"] != nil {
				cs["ready"] = false // its readiness probe, still run, sees it shutting down
			}
			code, reason := int64(0), "Completed"
			if programOf(s.p, c).ignoresTerm {
				if wait > 0 {
					allStopped = false
					continue
				}
				code, reason = 137, "Error"
			}
			cs["ready"], cs["started"] = false, false
			cs["state"] = map[string]any{"terminated": map[string]any{"exitCode": code, "reason": reason,
				"startedAt": running["startedAt"], "finishedAt": s.ts, "containerID": cs["containerID"]}}
		}
	}
	return allStopped
}
