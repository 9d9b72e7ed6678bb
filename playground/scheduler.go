package playground

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"kubeplay/internal/jsonmap"
	"kubeplay/server/inproc"
	"kubeplay/store"
)

// The scheduler stands in for kube-scheduler: it binds each pod that asks
// for the default scheduler and names no node to a node that fits it,
// through pods/binding, after the filters kube-scheduler runs (the node is
// schedulable, the pod tolerates its taints, matches its node selector and
// required node affinity, its host ports are free, its requests fit in what
// the node's pods leave of its allocatable, its required pod (anti-)affinity
// holds, its topology spread constraints hold: topologyspread.go),
// preferring the least allocated node so that pods spread. A pod
// that fits nowhere gets the PodScheduled condition and FailedScheduling
// event kube-scheduler gives it, and is tried again when a node or a pod
// changes in a way that may make room for it, never on a timer.
//
// Like kube-scheduler it reads nodes and pods from what it watches (here
// the store's changes, after one list when it starts), so it sends only
// bindings, status patches and events.

const (
	schedulerAgent    = "kube-scheduler/v1.35.4 (linux/amd64) kubernetes/7b8c6cf/scheduler"
	defaultScheduler  = "default-scheduler"
	schedulerInstance = defaultScheduler + "-kubeplay-control-plane"
)

var schedulerDef = controllerDef{name: "scheduler", title: "scheduler", simulated: true,
	actsAs: schedulerUser,
	start: func(sb *Sandbox) reconciler {
		return &scheduler{api: inproc.New(sb.handler, schedulerAgent), now: sb.clock.Now}
	}}

// scheduler's keys are pods, "<namespace>/<name>".
type scheduler struct {
	api *inproc.Client
	now func() time.Time

	mu    sync.Mutex // guards the fields below
	nodes map[string]jsonmap.Object
	pods  map[string]jsonmap.Object
	// assumed are the nodes of the pods bound but not yet seen bound, so
	// that the next pod counts them.
	assumed map[string]string
	// unschedulable are the pods that fit nowhere when last tried.
	unschedulable map[string]bool
}

var _ reconciler = (*scheduler)(nil)

func (s *scheduler) resync(ctx context.Context, _ int64) ([]string, error) {
	nodes, err := list(ctx, s.api, "/api/v1/nodes")
	if err != nil {
		return nil, err
	}
	pods, err := list(ctx, s.api, "/api/v1/pods")
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nodes, s.pods, s.assumed, s.unschedulable = map[string]jsonmap.Object{}, map[string]jsonmap.Object{}, map[string]string{}, map[string]bool{}
	for _, n := range nodes {
		s.nodes[jsonmap.String(n, "metadata", "name")] = n
	}
	var keys []string
	for _, p := range pods {
		key := podKey(p)
		s.pods[key] = p
		if waitsForScheduler(p) {
			keys = append(keys, key)
		}
	}
	return keys, nil
}

func podKey(p jsonmap.Object) string {
	return jsonmap.String(p, "metadata", "namespace") + "/" + jsonmap.String(p, "metadata", "name")
}

// waitsForScheduler reports whether p is this scheduler's to bind.
func waitsForScheduler(p jsonmap.Object) bool {
	name := jsonmap.String(p, "spec", "schedulerName")
	return (name == "" || name == defaultScheduler) && jsonmap.String(p, "spec", "nodeName") == "" && !deleting(p) && !podTerminal(p)
}

func podTerminal(p jsonmap.Object) bool {
	phase := jsonmap.String(p, "status", "phase")
	return phase == "Succeeded" || phase == "Failed"
}

func (s *scheduler) keysOf(ev store.Event, q queue) {
	key := ev.KV.Key
	if name, ok := strings.CutPrefix(key, nodeKeyPrefix); ok {
		s.mu.Lock()
		defer s.mu.Unlock()
		if ev.Type == store.Deleted {
			delete(s.nodes, name)
			return
		}
		var n jsonmap.Object
		if json.Unmarshal(ev.KV.Value, &n) != nil {
			return
		}
		old := s.nodes[name]
		s.nodes[name] = n
		if old == nil || !jsonEqual(schedulingView(old), schedulingView(n)) {
			s.retryUnschedulable(q)
		}
		return
	}
	podKey, ok := strings.CutPrefix(key, podKeyPrefix)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.pods[podKey]
	if ev.Type == store.Deleted {
		delete(s.pods, podKey)
		delete(s.assumed, podKey)
		delete(s.unschedulable, podKey)
		if old != nil && jsonmap.String(old, "spec", "nodeName") != "" {
			s.retryUnschedulable(q) // room freed
		}
		return
	}
	var p jsonmap.Object
	if json.Unmarshal(ev.KV.Value, &p) != nil {
		return
	}
	s.pods[podKey] = p
	if jsonmap.String(p, "spec", "nodeName") != "" {
		delete(s.assumed, podKey)
		delete(s.unschedulable, podKey)
		// A pod newly on a node may satisfy another's affinity; one
		// that ends or is relabelled may free room or a topology.
		if old == nil || jsonmap.String(old, "spec", "nodeName") == "" || podTerminal(p) != podTerminal(old) ||
			!jsonEqual(meta(p)["labels"], meta(old)["labels"]) {
			s.retryUnschedulable(q)
		}
		return
	}
	// A pod waiting to be scheduled is tried when it is new or its spec or
	// labels change, not when only its status does (the scheduler's own
	// condition).
	if waitsForScheduler(p) && (old == nil || !jsonEqual(schedulingView(old), schedulingView(p))) {
		q.Add(podKey)
	}
}

// schedulingView is what of a pod or node scheduling depends on.
func schedulingView(o jsonmap.Object) []any {
	return []any{meta(o)["labels"], meta(o)["deletionTimestamp"], o["spec"], jsonmap.Child(o, "status")["allocatable"]}
}

// retryUnschedulable queues the pods that fit nowhere; it requires s.mu.
func (s *scheduler) retryUnschedulable(q queue) {
	for key := range s.unschedulable {
		q.Add(key)
	}
}

func (s *scheduler) reconcile(ctx context.Context, key string) (time.Duration, error) {
	s.mu.Lock()
	p := s.pods[key]
	if p == nil || !waitsForScheduler(p) || s.assumed[key] != "" {
		delete(s.unschedulable, key)
		s.mu.Unlock()
		return 0, nil
	}
	node, reason, fitErr, pre := s.schedule(p)
	if fitErr == "" {
		delete(s.unschedulable, key)
	} else {
		s.unschedulable[key] = true
	}
	if pre != nil {
		// Nominated at once, so that the pods scheduled before its status
		// says so leave the room its victims free to it.
		nominated := copyMap(p)
		jsonmap.Ensure(nominated, "status")["nominatedNodeName"] = pre.node
		s.pods[key] = nominated
	}
	s.mu.Unlock()

	ref := refTo(p, "v1", "Pod")
	if fitErr != "" {
		nominated := ""
		if pre != nil {
			if err := s.evict(ctx, p, pre); err != nil {
				return 0, err
			}
			nominated = pre.node
		}
		return 0, s.failed(ctx, p, ref, reason, fitErr, nominated)
	}
	binding := map[string]any{"apiVersion": "v1", "kind": "Binding",
		"metadata": map[string]any{"name": ref.Name, "namespace": ref.Namespace, "uid": ref.UID},
		"target":   map[string]any{"kind": "Node", "name": node}}
	if err := s.api.Do(ctx, "POST", namedPath("", "pods", ref.Namespace, ref.Name)+"/binding", binding, nil); err != nil {
		return 0, err
	}
	s.mu.Lock()
	if s.pods[key] != nil && jsonmap.String(s.pods[key], "spec", "nodeName") == "" {
		s.assumed[key] = node
	}
	s.mu.Unlock()
	schedulerEvent(ctx, s.api, s.now(), defaultScheduler, schedulerInstance, ref, "Normal", "Scheduled", "Binding",
		fmt.Sprintf("Successfully assigned %s/%s to %s", ref.Namespace, ref.Name, node))
	return 0, nil
}

// failed reports that p fits on no node: its PodScheduled condition (when
// it says something new), the node it is nominated to after preempting
// pods there, and a FailedScheduling event.
func (s *scheduler) failed(ctx context.Context, p jsonmap.Object, ref objectRef, reason, msg, nominated string) error {
	cond := map[string]any{}
	for _, c := range jsonmap.List(p, "status", "conditions") {
		if m, _ := c.(map[string]any); m["type"] == "PodScheduled" {
			cond = m
		}
	}
	if cond["status"] != "False" || cond["reason"] != reason || cond["message"] != msg || nominated != "" {
		status := map[string]any{"conditions": []any{map[string]any{"type": "PodScheduled", "status": "False",
			"reason": reason, "message": msg, "lastProbeTime": nil, "lastTransitionTime": timestamp(s.now)}}}
		if nominated != "" {
			status["nominatedNodeName"] = nominated
		}
		patch := map[string]any{"status": status}
		err := s.api.Patch(ctx, namedPath("", "pods", ref.Namespace, ref.Name)+"/status", "application/strategic-merge-patch+json", patch, nil)
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
	}
	schedulerEvent(ctx, s.api, s.now(), defaultScheduler, schedulerInstance, ref, "Warning", "FailedScheduling", "Scheduling", msg)
	return nil
}

// schedule picks the node for p, or says why none fits as kube-scheduler
// words it, with the reason of the PodScheduled condition, and what p
// preempts to make room if it can; it requires s.mu.
func (s *scheduler) schedule(p jsonmap.Object) (node, reason, fitErr string, pre *preemption) {
	if len(s.nodes) == 0 {
		return "", "SchedulerError", "no nodes available to schedule pods", nil
	}
	onNode := s.podsByNode()
	s.addNominated(p, onNode)
	req := podRequests(p)
	reasons := map[string]int{}
	// resolvable are the nodes where preemption could help: those that
	// failed only for room (resources or ports) rather than for what they
	// are.
	var resolvable []string
	nominated := jsonmap.String(p, "status", "nominatedNodeName")
	var feasible []string
	for _, name := range slices.Sorted(maps.Keys(s.nodes)) {
		n := s.nodes[name]
		why, canPreempt := s.filter(p, req, n, onNode)
		if len(why) > 0 {
			for _, r := range why {
				reasons[r]++
			}
			if canPreempt {
				resolvable = append(resolvable, name)
			}
			continue
		}
		if name == nominated {
			return name, "", "", nil // the node its preemption made room on
		}
		feasible = append(feasible, name)
	}
	if best := s.best(p, req, feasible, onNode); best != "" {
		return best, "", "", nil
	}
	total := len(s.nodes)
	msg := fmt.Sprintf("0/%d nodes are available: %s.", total, histogram(reasons))
	if ok, why := s.mayPreempt(p, onNode); !ok {
		return "", "Unschedulable", msg + " preemption: " + why, nil
	}
	pre, preReasons := s.preempt(p, req, resolvable, onNode)
	if pre != nil {
		return "", "Unschedulable", msg, pre
	}
	if total > len(resolvable) {
		preReasons["Preemption is not helpful for scheduling"] = total - len(resolvable)
	}
	return "", "Unschedulable", fmt.Sprintf("%s preemption: 0/%d nodes are available: %s.", msg, total, histogram(preReasons)), nil
}

// best is the feasible node that scores highest for p, "" if none: the
// least allocated, weighed with PodTopologySpread's score as
// kube-scheduler weighs its plugins (NodeResourcesFit 1, PodTopologySpread
// 2); it requires s.mu.
func (s *scheduler) best(p jsonmap.Object, req resources, feasible []string, onNode map[string][]jsonmap.Object) string {
	spread := s.spreadScores(p, feasible, onNode)
	best, bestScore := "", -1.0
	for _, name := range feasible {
		score := leastAllocated(req, s.nodes[name], onNode[name])*maxNodeScore + 2*float64(spread[name])
		if score > bestScore {
			best, bestScore = name, score
		}
	}
	return best
}

// histogram words reasons by count, as kube-scheduler: "1 Insufficient
// cpu, 2 node(s) had untolerated taint(s)".
func histogram(reasons map[string]int) string {
	var hist []string
	for r, n := range reasons {
		hist = append(hist, fmt.Sprintf("%d %s", n, r))
	}
	sort.Strings(hist)
	return strings.Join(hist, ", ")
}

// podsByNode groups the pods that take room on a node (bound or assumed,
// not finished) by node; it requires s.mu.
func (s *scheduler) podsByNode() map[string][]jsonmap.Object {
	by := map[string][]jsonmap.Object{}
	for key, p := range s.pods {
		node := jsonmap.String(p, "spec", "nodeName")
		if node == "" {
			node = s.assumed[key]
		}
		if node != "" && !podTerminal(p) {
			by[node] = append(by[node], p)
		}
	}
	return by
}

// addNominated counts on their nodes the pods waiting for the room their
// preemption made, when they matter at least as much as p, so that p does
// not take it (kube-scheduler's filters with nominated pods); it requires
// s.mu.
func (s *scheduler) addNominated(p jsonmap.Object, onNode map[string][]jsonmap.Object) {
	for key, other := range s.pods {
		node := jsonmap.String(other, "status", "nominatedNodeName")
		if node != "" && key != podKey(p) && waitsForScheduler(other) && s.assumed[key] == "" && priorityOf(other) >= priorityOf(p) {
			onNode[node] = append(onNode[node], other)
		}
	}
}

// filter runs kube-scheduler's filters, in its order, for p on node n: the
// reasons it does not fit (none if it does), and whether preemption could
// make room.
func (s *scheduler) filter(p jsonmap.Object, req resources, n jsonmap.Object, onNode map[string][]jsonmap.Object) (reasons []string, canPreempt bool) {
	tolerations := jsonmap.List(p, "spec", "tolerations")
	if unschedulable, _ := jsonmap.Child(n, "spec")["unschedulable"].(bool); unschedulable &&
		!tolerates(tolerations, map[string]any{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}) {
		return []string{"node(s) were unschedulable"}, false
	}
	if untoleratedTaint(tolerations, n) != nil {
		return []string{"node(s) had untolerated taint(s)"}, false
	}
	if !matchesNodeSelector(p, n) {
		return []string{"node(s) didn't match Pod's node affinity/selector"}, false
	}
	name := jsonmap.String(n, "metadata", "name")
	here := onNode[name]
	if portsConflict(p, here) {
		return []string{"node(s) didn't have free ports for the requested pod ports"}, true
	}
	if why, unresolvable := insufficient(req, n, here); len(why) > 0 {
		return why, !unresolvable
	}
	if why, resolvable := s.topologySpread(p, n, onNode); why != "" {
		return []string{why}, resolvable
	}
	if why, resolvable := s.podAffinity(p, n, onNode); why != "" {
		return []string{why}, resolvable
	}
	return nil, false
}

// untoleratedTaint is the first of n's NoSchedule or NoExecute taints that
// tolerations do not tolerate, nil if none.
func untoleratedTaint(tolerations []any, n jsonmap.Object) map[string]any {
	for _, t := range jsonmap.List(n, "spec", "taints") {
		taint, _ := t.(map[string]any)
		if e := taint["effect"]; (e == "NoSchedule" || e == "NoExecute") && !tolerates(tolerations, taint) {
			return taint
		}
	}
	return nil
}

// tolerates reports whether one of tolerations tolerates taint.
func tolerates(tolerations []any, taint map[string]any) bool {
	for _, t := range tolerations {
		tol, _ := t.(map[string]any)
		if e, _ := tol["effect"].(string); e != "" && e != taint["effect"] {
			continue
		}
		key, _ := tol["key"].(string)
		switch tol["operator"] {
		case "Exists":
			if key == "" || key == taint["key"] {
				return true
			}
		default: // Equal
			if key == taint["key"] && stringOf(tol["value"]) == stringOf(taint["value"]) {
				return true
			}
		}
	}
	return false
}

func stringOf(v any) string { s, _ := v.(string); return s }

// matchesNodeSelector checks p's nodeSelector and required node affinity
// against n, as the DaemonSet controller does (selectsNode).
func matchesNodeSelector(p, n jsonmap.Object) bool {
	var spec corev1.PodSpec
	var node corev1.Node
	if decodeInto(jsonmap.Child(p, "spec"), &spec) != nil || decodeInto(n, &node) != nil {
		return false
	}
	return selectsNode(&spec, &node)
}

// hostPort is one port a pod takes on its node's addresses.
type hostPort struct {
	ip, protocol string
	port         int64
}

func hostPortsOf(p jsonmap.Object) []hostPort {
	var out []hostPort
	for _, list := range []string{"initContainers", "containers"} {
		for _, c := range jsonmap.Items(jsonmap.Child(p, "spec")[list]) {
			for _, port := range jsonmap.Items(c["ports"]) {
				n, _ := jsonmap.IntOf(port["hostPort"])
				if n <= 0 {
					continue
				}
				hp := hostPort{ip: stringOf(port["hostIP"]), protocol: stringOf(port["protocol"]), port: n}
				if hp.ip == "" {
					hp.ip = "0.0.0.0"
				}
				if hp.protocol == "" {
					hp.protocol = "TCP"
				}
				out = append(out, hp)
			}
		}
	}
	return out
}

// portsConflict reports whether a host port p asks for is taken on the
// node by one of its pods.
func portsConflict(p jsonmap.Object, onNode []jsonmap.Object) bool {
	want := hostPortsOf(p)
	if len(want) == 0 {
		return false
	}
	for _, other := range onNode {
		for _, taken := range hostPortsOf(other) {
			for _, w := range want {
				if w.port == taken.port && w.protocol == taken.protocol &&
					(w.ip == taken.ip || w.ip == "0.0.0.0" || taken.ip == "0.0.0.0") {
					return true
				}
			}
		}
	}
	return false
}

// resources are amounts of resources by name: milli-units for cpu, units
// for the others.
type resources map[string]int64

// podRequests is what p requests of its node, as the scheduler counts it:
// its containers and sidecars together, or the largest init container
// with the sidecars started before it if that is more, plus its overhead.
func podRequests(p jsonmap.Object) resources {
	spec := jsonmap.Child(p, "spec")
	sum, sidecars := resources{}, resources{}
	for _, c := range jsonmap.Items(spec["containers"]) {
		sum.add(containerRequests(c))
	}
	initMax := resources{}
	for _, c := range jsonmap.Items(spec["initContainers"]) {
		if c["restartPolicy"] == "Always" {
			sidecars.add(containerRequests(c))
			sum.add(containerRequests(c))
			continue
		}
		step := resources{}
		step.add(sidecars)
		step.add(containerRequests(c))
		for k, v := range step {
			initMax[k] = max(initMax[k], v)
		}
	}
	for k, v := range initMax {
		sum[k] = max(sum[k], v)
	}
	if overhead, ok := spec["overhead"].(map[string]any); ok {
		sum.add(quantities(overhead))
	}
	return sum
}

func containerRequests(c map[string]any) resources {
	r, _ := jsonmap.Child(c, "resources")["requests"].(map[string]any)
	return quantities(r)
}

// quantities reads a resource list; cpu in milli-units.
func quantities(list map[string]any) resources {
	out := resources{}
	for name, v := range list {
		q, ok := jsonmap.Quantity(v)
		if !ok {
			continue
		}
		if name == "cpu" {
			out[name] = q.MilliValue()
		} else {
			out[name] = q.Value()
		}
	}
	return out
}

func (r resources) add(o resources) {
	for k, v := range o {
		r[k] += v
	}
}

// insufficient lists the resources that n has too little of left for req,
// as kube-scheduler's NodeResourcesFit words them, and whether one is more
// than the node has at all (which preemption cannot help).
func insufficient(req resources, n jsonmap.Object, onNode []jsonmap.Object) (reasons []string, unresolvable bool) {
	alloc, _ := jsonmap.Child(n, "status")["allocatable"].(map[string]any)
	allocatable := quantities(alloc)
	used := resources{}
	for _, p := range onNode {
		used.add(podRequests(p))
	}
	if int64(len(onNode))+1 > allocatable["pods"] {
		reasons = append(reasons, "Too many pods")
	}
	for _, name := range []string{"cpu", "memory", "ephemeral-storage"} {
		if req[name] > 0 && req[name] > allocatable[name]-used[name] {
			reasons = append(reasons, "Insufficient "+name)
			unresolvable = unresolvable || req[name] > allocatable[name]
		}
	}
	for _, name := range slices.Sorted(maps.Keys(req)) {
		if name == "cpu" || name == "memory" || name == "ephemeral-storage" || name == "pods" || req[name] == 0 {
			continue
		}
		if req[name] > allocatable[name]-used[name] {
			reasons = append(reasons, "Insufficient "+name)
			unresolvable = unresolvable || req[name] > allocatable[name]
		}
	}
	return reasons, unresolvable
}

// Requests counted for a container that sets none, when scoring (as
// kube-scheduler's non-zero defaults), so that such pods spread too.
const (
	defaultMilliCPU = 100
	defaultMemory   = 200 << 20
)

// leastAllocated scores n for p: the share of its cpu and memory left once
// p is on it (kube-scheduler's default NodeResourcesFit scoring).
func leastAllocated(req resources, n jsonmap.Object, onNode []jsonmap.Object) float64 {
	alloc, _ := jsonmap.Child(n, "status")["allocatable"].(map[string]any)
	allocatable := quantities(alloc)
	nonZero := func(r resources) resources {
		return resources{"cpu": cmpOr(r["cpu"], defaultMilliCPU), "memory": cmpOr(r["memory"], defaultMemory)}
	}
	used := nonZero(req)
	for _, p := range onNode {
		used.add(nonZero(podRequests(p)))
	}
	score := 0.0
	for _, name := range []string{"cpu", "memory"} {
		if a := allocatable[name]; a > 0 {
			score += float64(max(a-used[name], 0)) / float64(a)
		}
	}
	return score / 2
}

func cmpOr(v, def int64) int64 {
	if v == 0 {
		return def
	}
	return v
}

// podAffinity checks p's required pod affinity and anti-affinity, and the
// required anti-affinity of the pods already placed, for n: the reason it
// fails (kube-scheduler's InterPodAffinity) and whether preemption could
// help. It requires s.mu.
func (s *scheduler) podAffinity(p, n jsonmap.Object, onNode map[string][]jsonmap.Object) (reason string, resolvable bool) {
	topologyOf := func(node, key string) (string, bool) {
		lbls, _ := meta(s.nodes[node])["labels"].(map[string]any)
		v, ok := lbls[key].(string)
		return v, ok
	}
	nodeName := jsonmap.String(n, "metadata", "name")
	// sameTopology reports whether other's node shares key's value with n.
	sameTopology := func(otherNode, key string) bool {
		mine, ok := topologyOf(nodeName, key)
		theirs, ok2 := topologyOf(otherNode, key)
		return ok && ok2 && mine == theirs
	}
	ns := jsonmap.String(p, "metadata", "namespace")
	// Existing pods' anti-affinity against p.
	for node, pods := range onNode {
		for _, other := range pods {
			for _, term := range affinityTerms(other, "podAntiAffinity") {
				if term.matches(s, jsonmap.String(other, "metadata", "namespace"), p) && sameTopology(node, term.topologyKey) {
					return "node(s) didn't satisfy existing pods anti-affinity rules", true
				}
			}
		}
	}
	for _, term := range affinityTerms(p, "podAffinity") {
		found, anywhere := false, false
		for node, pods := range onNode {
			for _, other := range pods {
				if !term.matches(s, ns, other) {
					continue
				}
				anywhere = true
				if sameTopology(node, term.topologyKey) {
					found = true
				}
			}
		}
		// The first pod of a group that matches its own affinity may go
		// anywhere its topology key exists.
		_, hasKey := topologyOf(nodeName, term.topologyKey)
		if !found && !(!anywhere && hasKey && term.matches(s, ns, p)) {
			return "node(s) didn't match pod affinity rules", false
		}
	}
	for _, term := range affinityTerms(p, "podAntiAffinity") {
		for node, pods := range onNode {
			for _, other := range pods {
				if term.matches(s, ns, other) && sameTopology(node, term.topologyKey) {
					return "node(s) didn't match pod anti-affinity rules", true
				}
			}
		}
	}
	return "", false
}

// affinityTerm is one required pod (anti-)affinity term.
type affinityTerm struct {
	selector, nsSelector labels.Selector
	namespaces           []string
	topologyKey          string
}

// affinityTerms are p's required terms of kind (podAffinity or
// podAntiAffinity); a term whose selectors do not parse matches nothing.
func affinityTerms(p jsonmap.Object, kind string) []affinityTerm {
	var out []affinityTerm
	for _, t := range jsonmap.Items(jsonmap.Child(p, "spec", "affinity", kind)["requiredDuringSchedulingIgnoredDuringExecution"]) {
		term := affinityTerm{selector: labels.Nothing(), topologyKey: stringOf(t["topologyKey"]),
			namespaces: jsonmap.StringsOf(t["namespaces"])}
		term.selector = selectorOf(t["labelSelector"], labels.Nothing())
		if t["namespaceSelector"] != nil {
			term.nsSelector = selectorOf(t["namespaceSelector"], labels.Nothing())
		}
		out = append(out, term)
	}
	return out
}

func selectorOf(v any, none labels.Selector) labels.Selector {
	if v == nil {
		return none
	}
	b, _ := json.Marshal(v)
	var ls metav1.LabelSelector
	if json.Unmarshal(b, &ls) != nil {
		return none
	}
	sel, err := metav1.LabelSelectorAsSelector(&ls)
	if err != nil {
		return none
	}
	return sel
}

// matches reports whether the term, of a pod in namespace ns, selects
// other. A namespace selector is matched against the namespace's name
// label only (the scheduler here does not follow namespaces' labels).
func (t affinityTerm) matches(s *scheduler, ns string, other jsonmap.Object) bool {
	otherNS := jsonmap.String(other, "metadata", "namespace")
	inNS := slices.Contains(t.namespaces, otherNS)
	if t.nsSelector != nil && t.nsSelector.Matches(labels.Set{"kubernetes.io/metadata.name": otherNS}) {
		inNS = true
	}
	if len(t.namespaces) == 0 && t.nsSelector == nil {
		inNS = otherNS == ns
	}
	if !inNS {
		return false
	}
	return t.selector.Matches(objectLabels(other))
}
