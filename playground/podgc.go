package playground

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"kubeplay/server/inproc"
	"kubeplay/store"
)

// podGC is kube-controller-manager's pod garbage collector. It force-deletes
// (marking them Failed first) the pods nobody else will: the oldest
// terminated pods beyond a threshold, the pods of a Node that no longer
// exists, the terminating pods of a Node out of service, and terminating
// pods never scheduled. The real one looks every 20 seconds; this one
// follows the changes that make such pods, so an idle sandbox costs nothing.
// Its keys are terminatedKey, "node/<name>" and "pod/<namespace>/<name>".
type podGC struct {
	c   *inproc.Client
	now func() time.Time
	// threshold is how many terminated pods may stay
	// (--terminated-pod-gc-threshold).
	threshold int

	// What the event goroutine tracks from the changes it sees, so that it
	// names work only when there is some: the terminated pods, the nodes
	// and those out of service.
	mu           sync.Mutex
	terminated   map[string]bool
	nodes        map[string]bool
	outOfService map[string]bool

	// missingSince is when each node pods name was first found missing;
	// only the worker goroutine touches it.
	missingSince map[string]time.Time
}

var podGCDef = controllerDef{name: "podGC", title: "pod garbage collector", serviceAccount: "pod-garbage-collector",
	start: func(sb *Sandbox) reconciler {
		return &podGC{c: inproc.New(sb.handler, controllerAgent("pod-garbage-collector")), now: sb.clock.Now,
			threshold: terminatedPodThreshold, missingSince: map[string]time.Time{}}
	}}

const (
	// terminatedPodThreshold is kube-controller-manager's default
	// --terminated-pod-gc-threshold.
	terminatedPodThreshold = 12500
	// orphanQuarantine is how long a pod's node must stay missing before
	// its pods are deleted (it may be being re-registered).
	orphanQuarantine = 40 * time.Second
	terminatedKey    = "terminated"
)

// gcPod is what podGC reads of a stored pod.
type gcPod struct {
	Metadata struct {
		DeletionTimestamp *metav1.Time `json:"deletionTimestamp"`
	} `json:"metadata"`
	Spec struct {
		NodeName string `json:"nodeName"`
	} `json:"spec"`
	Status struct {
		Phase corev1.PodPhase `json:"phase"`
	} `json:"status"`
}

func (p gcPod) terminated() bool {
	return p.Status.Phase != corev1.PodPending && p.Status.Phase != corev1.PodRunning && p.Status.Phase != corev1.PodUnknown
}

func (gc *podGC) resync(ctx context.Context, _ int64) ([]string, error) {
	nodes, err := listAs[corev1.Node](ctx, gc.c, allPath(coreV1("nodes")))
	if err != nil {
		return nil, err
	}
	pods, err := listAs[corev1.Pod](ctx, gc.c, allPath(coreV1("pods")))
	if err != nil {
		return nil, err
	}
	gc.mu.Lock()
	defer gc.mu.Unlock()
	gc.terminated, gc.nodes, gc.outOfService = map[string]bool{}, map[string]bool{}, map[string]bool{}
	var keys []string
	for _, n := range nodes {
		gc.nodes[n.Name] = true
		if outOfService(&n) {
			gc.outOfService[n.Name] = true
			keys = append(keys, "node/"+n.Name)
		}
	}
	for _, p := range pods {
		var gp gcPod
		gp.Metadata.DeletionTimestamp, gp.Spec.NodeName, gp.Status.Phase = p.DeletionTimestamp, p.Spec.NodeName, p.Status.Phase
		if gp.terminated() {
			gc.terminated[p.Namespace+"/"+p.Name] = true
		}
		if key := gc.podWork(p.Namespace+"/"+p.Name, gp); key != "" {
			keys = append(keys, key)
		}
	}
	if len(gc.terminated) > gc.threshold {
		keys = append(keys, terminatedKey)
	}
	return keys, nil
}

// podWork is the key of the work pod p calls for, if any; it requires
// gc.mu.
func (gc *podGC) podWork(key string, p gcPod) string {
	switch {
	case p.Metadata.DeletionTimestamp != nil && p.Spec.NodeName == "" && !p.terminated():
		return "pod/" + key
	case p.Spec.NodeName != "" && !gc.nodes[p.Spec.NodeName]:
		return "node/" + p.Spec.NodeName
	case p.Metadata.DeletionTimestamp != nil && gc.outOfService[p.Spec.NodeName]:
		return "node/" + p.Spec.NodeName
	}
	return ""
}

func (gc *podGC) keysOf(ev store.Event, q queue) {
	gc.mu.Lock()
	defer gc.mu.Unlock()
	if name, ok := strings.CutPrefix(ev.KV.Key, nodeKeyPrefix); ok {
		if ev.Type == store.Deleted {
			delete(gc.nodes, name)
			delete(gc.outOfService, name)
			q.Add("node/" + name)
			return
		}
		gc.nodes[name] = true
		var n corev1.Node
		if bytes.Contains(ev.KV.Value, []byte(corev1.TaintNodeOutOfService)) && json.Unmarshal(ev.KV.Value, &n) == nil && outOfService(&n) {
			gc.outOfService[name] = true
			q.Add("node/" + name)
		} else {
			delete(gc.outOfService, name)
		}
		return
	}
	key, ok := strings.CutPrefix(ev.KV.Key, podKeyPrefix)
	if !ok {
		return
	}
	var p gcPod
	if ev.Type == store.Deleted || json.Unmarshal(ev.KV.Value, &p) != nil {
		delete(gc.terminated, key)
		return
	}
	if p.terminated() {
		gc.terminated[key] = true
		if len(gc.terminated) > gc.threshold {
			q.Add(terminatedKey)
		}
	}
	if work := gc.podWork(key, p); work != "" {
		q.Add(work)
	}
}

func (gc *podGC) reconcile(ctx context.Context, key string) (time.Duration, error) {
	switch {
	case key == terminatedKey:
		return 0, gc.gcTerminated(ctx)
	case strings.HasPrefix(key, "node/"):
		return gc.gcNode(ctx, strings.TrimPrefix(key, "node/"))
	default:
		// Its role lets it list pods, not get one.
		ns, name, _ := strings.Cut(strings.TrimPrefix(key, "pod/"), "/")
		pods, err := listAs[corev1.Pod](ctx, gc.c, workloadCollection("", "pods", ns)+"?fieldSelector=metadata.name%3D"+url.QueryEscape(name))
		if err != nil || len(pods) != 1 {
			return 0, err
		}
		if p := &pods[0]; p.DeletionTimestamp != nil && p.Spec.NodeName == "" {
			return 0, gc.forceDelete(ctx, p, nil)
		}
		return 0, nil
	}
}

// gcTerminated deletes the terminated pods beyond the threshold: the
// evicted first, then the oldest.
func (gc *podGC) gcTerminated(ctx context.Context) error {
	pods, err := listAs[corev1.Pod](ctx, gc.c, allPath(coreV1("pods")))
	if err != nil {
		return err
	}
	var terminated []*corev1.Pod
	for i, p := range pods {
		if p.Status.Phase != corev1.PodPending && p.Status.Phase != corev1.PodRunning && p.Status.Phase != corev1.PodUnknown {
			terminated = append(terminated, &pods[i])
		}
	}
	if len(terminated) <= gc.threshold {
		return nil
	}
	slices.SortFunc(terminated, func(a, b *corev1.Pod) int {
		if ea, eb := a.Status.Reason == "Evicted", b.Status.Reason == "Evicted"; ea != eb {
			return cmp.Compare(boolInt(eb), boolInt(ea))
		}
		if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	for _, p := range terminated[:len(terminated)-gc.threshold] {
		if err := gc.forceDelete(ctx, p, nil); err != nil {
			return err
		}
	}
	return nil
}

// gcNode deletes the pods of a node that no longer exists, once it has
// been missing for the quarantine, and the terminating pods of one out of
// service.
func (gc *podGC) gcNode(ctx context.Context, name string) (time.Duration, error) {
	now := gc.now()
	if since, ok := gc.missingSince[name]; ok && now.Sub(since) < orphanQuarantine {
		return since.Add(orphanQuarantine).Sub(now), nil
	}
	node, err := getTyped[corev1.Node](ctx, gc.c, allPath(coreV1("nodes"))+"/"+url.PathEscape(name))
	if err != nil {
		return 0, err
	}
	if node != nil {
		delete(gc.missingSince, name)
		if !outOfService(node) {
			return 0, nil
		}
	} else if _, ok := gc.missingSince[name]; !ok {
		gc.missingSince[name] = now
		return orphanQuarantine, nil
	}
	pods, err := listAs[corev1.Pod](ctx, gc.c, allPath(coreV1("pods"))+"?fieldSelector=spec.nodeName%3D"+url.QueryEscape(name))
	if err != nil {
		return 0, err
	}
	for i := range pods {
		p := &pods[i]
		if node == nil {
			err = gc.forceDelete(ctx, p, &corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
				Reason: "DeletionByPodGC", Message: "PodGC: node no longer exists"})
		} else if p.DeletionTimestamp != nil {
			err = gc.forceDelete(ctx, p, nil)
		}
		if err != nil {
			return 0, err
		}
	}
	delete(gc.missingSince, name)
	return 0, nil
}

// forceDelete marks an unfinished pod Failed (with cond, if any) and
// deletes it at once.
func (gc *podGC) forceDelete(ctx context.Context, p *corev1.Pod, cond *corev1.PodCondition) error {
	path := namedPath("", "pods", p.Namespace, p.Name)
	if p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
		status := map[string]any{"phase": corev1.PodFailed}
		if p.Generation > 0 {
			status["observedGeneration"] = p.Generation
		}
		if cond != nil {
			cond.LastTransitionTime = metav1.NewTime(gc.now())
			cond.ObservedGeneration = p.Generation
			status["conditions"] = []corev1.PodCondition{*cond}
		}
		patch := map[string]any{"metadata": map[string]any{"uid": p.UID}, "status": status}
		if err := gc.c.Patch(ctx, path+"/status", "application/strategic-merge-patch+json", patch, nil); err != nil {
			if apierrors.IsNotFound(err) {
				return nil
			}
			return err
		}
	}
	zero := int64(0)
	opts := metav1.DeleteOptions{TypeMeta: metav1.TypeMeta{Kind: "DeleteOptions", APIVersion: "v1"}, GracePeriodSeconds: &zero}
	if err := gc.c.Do(ctx, "DELETE", path, opts, nil); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}

// outOfService reports whether a node is not ready and tainted
// node.kubernetes.io/out-of-service: its pods will not be stopped by its
// kubelet.
func outOfService(n *corev1.Node) bool {
	if !slices.ContainsFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.Key == corev1.TaintNodeOutOfService }) {
		return false
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status != corev1.ConditionTrue
		}
	}
	return true
}
