package playground

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"kubeplay/server/inproc"
	"kubeplay/store"
)

// taintEvictionController is kube-controller-manager's taint-eviction
// controller: a pod bound to a node with a NoExecute taint it does not
// tolerate is deleted at once; one that tolerates every such taint for a
// while (tolerationSeconds) is deleted once the shortest of those has passed
// on the sandbox clock, unless the taints go first. Its keys are
// "<namespace>/<name>" of pods: node changes name the pods bound to the
// node, and a pending eviction is a later look at its pod, never a poll.
type taintEvictionController struct {
	c      *inproc.Client
	now    func() time.Time
	events *eventRecorder

	mu sync.Mutex // guards the fields below
	// taints are the NoExecute taints of each node that has some.
	taints map[string][]corev1.Taint
	// podNode is the node of each bound pod, and onNode its inverse, so that
	// a node's taints changing names its pods, as upstream's pod index does.
	podNode map[string]string
	onNode  map[string]map[string]bool
	// changed are the queued pods whose pod or node changed since they were
	// last looked at; a key not in it is only a pending eviction falling due.
	changed map[string]bool
	// pending are the evictions scheduled for later, by pod.
	pending map[string]pendingEviction
}

// pendingEviction is an eviction waiting for a pod's tolerationSeconds.
type pendingEviction struct {
	since, at time.Time
}

// kube-controller-manager runs it with the node lifecycle controller's
// credentials, whose role covers it.
var taintEvictionDef = controllerDef{name: "taintEviction", title: "taint-eviction controller", serviceAccount: "node-controller",
	start: func(sb *Sandbox) reconciler {
		c := inproc.New(sb.handler, controllerAgent("node-controller"))
		return &taintEvictionController{c: c, now: sb.clock.Now, events: newEventRecorder(c, "taint-eviction-controller", "", sb.clock.Now),
			pending: map[string]pendingEviction{}}
	}}

// taintedPod is what the controller reads of a stored pod.
type taintedPod struct {
	Spec struct {
		NodeName    string              `json:"nodeName"`
		Tolerations []corev1.Toleration `json:"tolerations"`
	} `json:"spec"`
}

func (tc *taintEvictionController) resync(ctx context.Context, _ int64) ([]string, error) {
	nodes, err := listAs[corev1.Node](ctx, tc.c, allPath(coreV1("nodes")))
	if err != nil {
		return nil, err
	}
	pods, err := listAs[corev1.Pod](ctx, tc.c, allPath(coreV1("pods")))
	if err != nil {
		return nil, err
	}
	tc.mu.Lock()
	defer tc.mu.Unlock()
	tc.taints, tc.podNode, tc.onNode, tc.changed = map[string][]corev1.Taint{}, map[string]string{}, map[string]map[string]bool{}, map[string]bool{}
	for _, n := range nodes {
		if taints := noExecuteTaints(n.Spec.Taints); len(taints) > 0 {
			tc.taints[n.Name] = taints
		}
	}
	var keys []string
	for _, p := range pods {
		key := p.Namespace + "/" + p.Name
		tc.bind(key, p.Spec.NodeName)
		if _, pending := tc.pending[key]; pending || len(tc.taints[p.Spec.NodeName]) > 0 {
			tc.changed[key] = true
			keys = append(keys, key)
		}
	}
	for key := range tc.pending {
		if _, ok := tc.podNode[key]; !ok { // deleted while the controller was not watching
			tc.changed[key] = true
			keys = append(keys, key)
		}
	}
	return keys, nil
}

// bind records that pod key is bound to node ("": to none); it requires tc.mu.
func (tc *taintEvictionController) bind(key, node string) {
	if old, ok := tc.podNode[key]; ok {
		if old == node {
			return
		}
		delete(tc.onNode[old], key)
		if len(tc.onNode[old]) == 0 {
			delete(tc.onNode, old)
		}
		delete(tc.podNode, key)
	}
	if node == "" {
		return
	}
	tc.podNode[key] = node
	if tc.onNode[node] == nil {
		tc.onNode[node] = map[string]bool{}
	}
	tc.onNode[node][key] = true
}

// look queues pod key as changed; it requires tc.mu.
func (tc *taintEvictionController) look(key string, q queue) {
	tc.changed[key] = true
	q.Add(key)
}

func (tc *taintEvictionController) keysOf(ev store.Event, q queue) {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	if name, ok := strings.CutPrefix(ev.KV.Key, nodeKeyPrefix); ok {
		if ev.Type != store.Deleted && tc.taints[name] == nil && !bytes.Contains(ev.KV.Value, []byte(corev1.TaintEffectNoExecute)) {
			return // a heartbeat of an untainted node, most likely
		}
		var n corev1.Node
		if ev.Type == store.Deleted || json.Unmarshal(ev.KV.Value, &n) != nil {
			// Its pods' pending evictions are cancelled when they fall due:
			// the pod garbage collector deletes the pods of a node gone.
			delete(tc.taints, name)
			return
		}
		taints := noExecuteTaints(n.Spec.Taints)
		if reflect.DeepEqual(taints, tc.taints[name]) {
			return
		}
		if len(taints) > 0 {
			tc.taints[name] = taints
		} else {
			delete(tc.taints, name)
		}
		for key := range tc.onNode[name] {
			tc.look(key, q)
		}
		return
	}
	key, ok := strings.CutPrefix(ev.KV.Key, podKeyPrefix)
	if !ok {
		return
	}
	_, pending := tc.pending[key]
	var p taintedPod
	if ev.Type == store.Deleted || json.Unmarshal(ev.KV.Value, &p) != nil {
		tc.bind(key, "")
		if pending {
			tc.look(key, q)
		}
		return
	}
	tc.bind(key, p.Spec.NodeName)
	if !pending && len(tc.taints[p.Spec.NodeName]) == 0 {
		return
	}
	// Only what decides an eviction concerns it (not the kubelet's status
	// updates), as upstream's pod handler.
	var prev taintedPod
	if ev.Prev != nil && json.Unmarshal(ev.Prev.Value, &prev) == nil && prev.Spec.NodeName == p.Spec.NodeName &&
		(len(prev.Spec.Tolerations) == 0 && len(p.Spec.Tolerations) == 0 || reflect.DeepEqual(prev.Spec.Tolerations, p.Spec.Tolerations)) {
		return
	}
	tc.look(key, q)
}

func (tc *taintEvictionController) reconcile(ctx context.Context, key string) (time.Duration, error) {
	now := tc.now()
	tc.mu.Lock()
	changed := tc.changed[key]
	delete(tc.changed, key)
	due, pending := tc.pending[key]
	tc.mu.Unlock()
	switch {
	case !changed && !pending:
		return 0, nil // an eviction cancelled since it was scheduled
	case !changed && now.Before(due.at):
		return due.at.Sub(now), nil
	}
	ns, name, _ := strings.Cut(key, "/")
	pod, err := getTyped[corev1.Pod](ctx, tc.c, namedPath("", "pods", ns, name))
	if err != nil {
		if changed {
			tc.mu.Lock()
			tc.changed[key] = true
			tc.mu.Unlock()
		}
		return 0, err
	}
	tc.mu.Lock()
	var taints []corev1.Taint
	if pod != nil {
		taints = tc.taints[pod.Spec.NodeName]
	}
	tc.mu.Unlock()
	if pod == nil || pod.Spec.NodeName == "" || len(taints) == 0 {
		tc.cancel(ctx, key)
		return 0, nil
	}
	used, allTolerated := matchingTolerations(taints, pod.Spec.Tolerations)
	if !allTolerated {
		// Deleted at once: whatever was scheduled no longer holds.
		tc.cancel(ctx, key)
		return 0, tc.evict(ctx, pod)
	}
	minToleration, forever := minTolerationTime(used)
	if forever {
		tc.cancel(ctx, key)
		return 0, nil
	}
	if !pending {
		// An eviction scheduled earlier keeps its time, as upstream's.
		since := evictionCountsFrom(pod, taints, now)
		due = pendingEviction{since: since, at: since.Add(minToleration)}
		tc.mu.Lock()
		tc.pending[key] = due
		tc.mu.Unlock()
	}
	if now.Before(due.at) {
		return due.at.Sub(now), nil
	}
	tc.mu.Lock()
	delete(tc.pending, key)
	tc.mu.Unlock()
	if err := tc.evict(ctx, pod); err != nil {
		tc.mu.Lock()
		tc.pending[key] = due // tried again after a backoff
		tc.mu.Unlock()
		return 0, err
	}
	return 0, nil
}

// cancel drops the pending eviction of pod key, if any, saying so in an
// Event as upstream does.
func (tc *taintEvictionController) cancel(ctx context.Context, key string) {
	tc.mu.Lock()
	_, pending := tc.pending[key]
	delete(tc.pending, key)
	tc.mu.Unlock()
	if pending {
		tc.events.event(ctx, podRef(key), corev1.EventTypeNormal, "TaintManagerEviction", "Cancelling deletion of Pod "+key)
	}
}

// evict marks pod as disrupted by a NoExecute taint and deletes it,
// gracefully.
func (tc *taintEvictionController) evict(ctx context.Context, pod *corev1.Pod) error {
	key := pod.Namespace + "/" + pod.Name
	tc.events.event(ctx, podRef(key), corev1.EventTypeNormal, "TaintManagerEviction", "Marking for deletion Pod "+key)
	path := namedPath("", "pods", pod.Namespace, pod.Name)
	cond := corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, ObservedGeneration: pod.Generation,
		Reason: "DeletionByTaintManager", Message: "Taint manager: deleting due to NoExecute taint"}
	if !hasPodCondition(pod, cond) {
		cond.LastTransitionTime = metav1.NewTime(tc.now())
		patch := map[string]any{"metadata": map[string]any{"uid": pod.UID}, "status": map[string]any{"conditions": []corev1.PodCondition{cond}}}
		if err := tc.c.Patch(ctx, path+"/status", "application/strategic-merge-patch+json", patch, nil); err != nil {
			if apierrors.IsNotFound(err) {
				return nil
			}
			return err
		}
	}
	opts := metav1.DeleteOptions{TypeMeta: metav1.TypeMeta{Kind: "DeleteOptions", APIVersion: "v1"}}
	if err := tc.c.Do(ctx, "DELETE", path, opts, nil); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}

// hasPodCondition reports whether pod already has cond as it would be set
// (upstream then patches nothing).
func hasPodCondition(pod *corev1.Pod, cond corev1.PodCondition) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == cond.Type {
			return c.Status == cond.Status && c.Reason == cond.Reason && c.Message == cond.Message && c.ObservedGeneration == cond.ObservedGeneration
		}
	}
	return false
}

// podRef is what the controller's Events say of the pod key: no uid, as
// upstream's reference carries none.
func podRef(key string) objectRef {
	ns, name, _ := strings.Cut(key, "/")
	return objectRef{APIVersion: "v1", Kind: "Pod", Namespace: ns, Name: name}
}

// noExecuteTaints are the taints of taints whose effect is NoExecute.
func noExecuteTaints(taints []corev1.Taint) []corev1.Taint {
	var out []corev1.Taint
	for _, t := range taints {
		if t.Effect == corev1.TaintEffectNoExecute {
			out = append(out, t)
		}
	}
	return out
}

// matchingTolerations returns, for each taint, the first of tolerations
// that tolerates it, and whether every taint is tolerated.
func matchingTolerations(taints []corev1.Taint, tolerations []corev1.Toleration) ([]corev1.Toleration, bool) {
	used := make([]corev1.Toleration, 0, len(taints))
	for i := range taints {
		j := 0
		for j < len(tolerations) && !tolerations[j].ToleratesTaint(klog.Background(), &taints[i], false) {
			j++
		}
		if j == len(tolerations) {
			return nil, false
		}
		used = append(used, tolerations[j])
	}
	return used, true
}

// minTolerationTime is the shortest tolerationSeconds of used (0 if one is
// not positive), or forever if none sets one.
func minTolerationTime(used []corev1.Toleration) (d time.Duration, forever bool) {
	least := int64(math.MaxInt64)
	for _, t := range used {
		if t.TolerationSeconds == nil {
			continue
		}
		if *t.TolerationSeconds <= 0 {
			return 0, false
		}
		least = min(least, *t.TolerationSeconds)
	}
	if least == math.MaxInt64 {
		return 0, true
	}
	return time.Duration(least) * time.Second, false
}

// evictionCountsFrom is when a tolerating pod's time on its tainted node
// began. Upstream counts from when it first saw the pod there; what the
// store says of that (the taints' timeAdded, the pod's binding) survives a
// restart of the controllers, which advancing the sandbox clock is. A taint
// without timeAdded counts from now.
func evictionCountsFrom(pod *corev1.Pod, taints []corev1.Taint, now time.Time) time.Time {
	var tainted time.Time
	for _, t := range taints {
		if t.TimeAdded == nil {
			return now
		}
		if tainted.IsZero() || t.TimeAdded.Time.Before(tainted) {
			tainted = t.TimeAdded.Time
		}
	}
	bound := pod.CreationTimestamp.Time
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionTrue && !c.LastTransitionTime.IsZero() {
			bound = c.LastTransitionTime.Time
		}
	}
	since := tainted
	if bound.After(since) {
		since = bound
	}
	if since.After(now) {
		return now
	}
	return since
}
