package playground

import (
	"context"
	"fmt"
	"hash/fnv"
	"strings"
	"sync/atomic"
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

// Delays of the simulated pod lifecycle: a pod is scheduled at once, its
// containers run after startDelay, a Job's pods finish after runDelay.
const (
	startDelay = 500 * time.Millisecond
	runDelay   = time.Second
)

// kubelet stands in for the scheduler and the kubelets of a cluster's
// nodes (simulated: no containers run). It moves pods through Pending,
// Running and (a Job's) Succeeded, and removes a pod deleted gracefully
// once its grace period ends, as a node's kubelet does when it has stopped
// the pod's containers. Its keys are "<namespace>/<name>" of pods.
type kubelet struct {
	api   *inproc.Client
	now   func() time.Time
	names []string
	// podIPs numbers the pod IPs handed out.
	podIPs atomic.Uint32
}

func init() {
	registerController(controllerDef{name: "kubelet", title: "kubelets and scheduler", simulated: true,
		start: func(sb *Sandbox) reconciler {
			return &kubelet{api: inproc.New(sb.handler, kubeletAgent), now: sb.clock.Now, names: sb.nodeNames()}
		}})
}

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
	var keys []string
	for _, p := range pods {
		if stopping(p) || !podSettled(p) {
			keys = append(keys, jsonmap.String(p, "metadata", "namespace")+"/"+jsonmap.String(p, "metadata", "name"))
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
	if deleting(p) {
		return k.stop(ctx, p)
	}
	if nodeIndex(k.names, jsonmap.String(p, "spec", "nodeName")) < 0 {
		return 0, nil
	}
	return k.syncPod(ctx, p)
}

// stop deletes a pod whose grace period is over, or asks to look again
// when it ends.
func (k *kubelet) stop(ctx context.Context, p jsonmap.Object) (time.Duration, error) {
	if !stopping(p) {
		return 0, nil
	}
	deadline, err := time.Parse(time.RFC3339, jsonmap.String(p, "metadata", "deletionTimestamp"))
	if err != nil {
		return 0, err
	}
	if wait := deadline.Sub(k.now()); wait > 0 {
		return wait, nil
	}
	zero := int64(0)
	uid := types.UID(jsonmap.String(p, "metadata", "uid"))
	opts := metav1.DeleteOptions{TypeMeta: metav1.TypeMeta{Kind: "DeleteOptions", APIVersion: "v1"},
		GracePeriodSeconds: &zero, Preconditions: &metav1.Preconditions{UID: &uid}}
	if err := k.api.Do(ctx, "DELETE", objectPath("", "pods", p), opts, nil); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return 0, err
	}
	return 0, nil
}

// syncPod moves a pod through its lifecycle as the scheduler and a kubelet
// would: Pending and scheduled at once, Running (ready) after startDelay,
// and for a Job's pod Succeeded runDelay later. It asks for another look
// when the pod's next phase is due.
func (k *kubelet) syncPod(ctx context.Context, p jsonmap.Object) (time.Duration, error) {
	now := k.now()
	ts := timestamp(k.now)
	status := copyMap(jsonmap.Child(p, "status"))
	if status == nil {
		status = jsonmap.Object{}
	}
	var due time.Duration
	switch jsonmap.String(p, "status", "phase") {
	case "Pending":
		started := since(now, jsonmap.String(p, "metadata", "creationTimestamp"))
		if started < startDelay {
			return max(startDelay-started, 10*time.Millisecond), nil
		}
		k.run(p, status, ts)
		if _, kind := controllerUID(p); kind == "Job" {
			due = runDelay
		}
	case "Running":
		if _, kind := controllerUID(p); kind != "Job" {
			return 0, nil
		}
		running := since(now, jsonmap.String(p, "status", "startTime"))
		if running < runDelay {
			return max(runDelay-running, 10*time.Millisecond), nil
		}
		k.succeed(p, status, ts)
	default:
		return 0, nil
	}
	p = copyMap(p)
	p["status"] = status
	if err := k.api.Do(ctx, "PUT", objectPath("", "pods", p)+"/status", p, nil); err != nil && !apierrors.IsNotFound(err) {
		return 0, err
	}
	return due, nil
}

// podSettled reports whether syncPod has nothing left to do with p.
func podSettled(p jsonmap.Object) bool {
	if deleting(p) {
		return true
	}
	switch jsonmap.String(p, "status", "phase") {
	case "", "Pending":
		return false
	case "Running":
		_, kind := controllerUID(p)
		return kind != "Job"
	}
	return true
}

func since(now time.Time, timestamp string) time.Duration {
	t, err := time.Parse(time.RFC3339, timestamp)
	if err != nil {
		return 0
	}
	return now.Sub(t)
}

// run sets the status of a pod whose containers all started.
func (k *kubelet) run(p, status jsonmap.Object, ts string) {
	n := k.podIPs.Add(1)
	ip := fmt.Sprintf("10.244.%d.%d", n/250, n%250+2)
	status["phase"] = "Running"
	hostIP := nodeIP(nodeIndex(k.names, jsonmap.String(p, "spec", "nodeName")))
	status["hostIP"], status["hostIPs"] = hostIP, []any{map[string]any{"ip": hostIP}}
	status["podIP"], status["podIPs"] = ip, []any{map[string]any{"ip": ip}}
	status["startTime"] = ts
	var conds []any
	for _, t := range []string{"PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled"} {
		conds = append(conds, map[string]any{"type": t, "status": "True", "lastProbeTime": nil, "lastTransitionTime": ts})
	}
	status["conditions"] = conds
	status["containerStatuses"] = containerStatuses(p, func(c jsonmap.Object) {
		c["ready"], c["started"] = true, true
		c["state"] = map[string]any{"running": map[string]any{"startedAt": ts}}
	})
}

// succeed sets the status of a pod whose containers all exited 0.
func (k *kubelet) succeed(p, status jsonmap.Object, ts string) {
	status["phase"] = "Succeeded"
	conds, _ := status["conditions"].([]any)
	for _, t := range []string{"PodReadyToStartContainers", "Ready", "ContainersReady"} {
		st, reason := "False", "PodCompleted"
		if t == "PodReadyToStartContainers" {
			reason = ""
		}
		for i, c := range conds {
			if m, _ := c.(map[string]any); m["type"] == t {
				m = copyMap(m)
				m["status"], m["lastTransitionTime"] = st, ts
				if reason != "" {
					m["reason"] = reason
				}
				conds[i] = m
			}
		}
	}
	status["conditions"] = conds
	started := jsonmap.String(p, "status", "startTime")
	status["containerStatuses"] = containerStatuses(p, func(c jsonmap.Object) {
		c["ready"], c["started"] = false, false
		c["state"] = map[string]any{"terminated": map[string]any{"exitCode": 0, "reason": "Completed",
			"startedAt": started, "finishedAt": ts, "containerID": c["containerID"]}}
	})
}

// containerStatuses describes each of p's containers, set by f.
func containerStatuses(p jsonmap.Object, f func(jsonmap.Object)) []any {
	var out []any
	containers, _ := jsonmap.Child(p, "spec")["containers"].([]any)
	for i, c := range containers {
		spec, _ := c.(map[string]any)
		h := fnv.New64a()
		fmt.Fprint(h, jsonmap.String(p, "metadata", "uid"), i)
		image, _ := spec["image"].(string)
		st := jsonmap.Object{"name": spec["name"], "image": image, "imageID": "", "restartCount": 0,
			"containerID": fmt.Sprintf("containerd://%016x", h.Sum64())}
		f(st)
		out = append(out, st)
	}
	return out
}
