package playground

import (
	"context"
	"hash/fnv"
	"net/url"
	"slices"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"

	"kubeplay/server"
	"kubeplay/server/authn"
	"kubeplay/server/inproc"
	"kubeplay/store"
)

// The simulated metrics-server serves the resource metrics API
// (metrics.k8s.io/v1beta1, see server.MetricsSource) that `kubectl top`
// and the horizontal pod autoscaler read. metrics-server reads what
// containers use from the kubelets; no container runs here, so what a
// running pod on a simulated node uses is computed, the same at every
// reading: each container uses a steady share of what it requests (cpu
// 10–30%, memory 30–60%, by a hash of the pod's and container's names), or
// a few millicores and MiB if it requests nothing. Annotations set it
// instead. On a pod, per container:
//
//	simulated.kubeplay.dev/cpu-usage: 250m
//	simulated.kubeplay.dev/memory-usage: 64Mi
//
// On a HorizontalPodAutoscaler, the same annotations are the load of its
// whole target, shared evenly by its ready pods that have none of their
// own — so that scaling out lowers each pod's share, as it would on a
// cluster (kubectl annotate hpa web simulated.kubeplay.dev/cpu-usage=900m).
// A node uses what its running pods use, plus what its system daemons do.
// Off, the API is not served, as on a cluster without metrics-server.
const (
	cpuUsageAnnotation    = "simulated.kubeplay.dev/cpu-usage"
	memoryUsageAnnotation = "simulated.kubeplay.dev/memory-usage"
)

// metricsWindow is the window of every reading: metrics-server's default
// resolution, the time between the two scrapes a reading compares.
const metricsWindow = 15 * time.Second

var metricsDef = controllerDef{name: "metrics", title: "metrics-server", simulated: true, actsAs: kubeadmUser,
	start: func(sb *Sandbox) reconciler { return &metricsServer{api: inproc.New(sb.handler, installerAgent)} }}

// metricsServer installs what metrics-server's manifest adds to the
// cluster besides its APIService (which the API server registers with the
// readings: server.SetMetrics): the ClusterRole that lets view, edit and
// admin read metrics. The API server computes the readings when asked
// (simulatedMetrics); it is a switch, so that a sandbox can be without
// metrics.
type metricsServer struct{ api *inproc.Client }

const metricsReaderRole = "system:aggregated-metrics-reader"

func (*metricsServer) resync(context.Context, int64) ([]string, error) {
	return []string{metricsReaderRole}, nil
}

func (*metricsServer) keysOf(store.Event, queue) {}

func (m *metricsServer) reconcile(ctx context.Context, _ string) (time.Duration, error) {
	path := "/apis/rbac.authorization.k8s.io/v1/clusterroles/" + url.PathEscape(metricsReaderRole)
	if role, err := get(ctx, m.api, path); err != nil || role != nil {
		return 0, err
	}
	role := map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
		"metadata": map[string]any{"name": metricsReaderRole, "labels": map[string]any{"k8s-app": "metrics-server",
			"rbac.authorization.k8s.io/aggregate-to-admin": "true", "rbac.authorization.k8s.io/aggregate-to-edit": "true",
			"rbac.authorization.k8s.io/aggregate-to-view": "true"}},
		"rules": []any{map[string]any{"apiGroups": []any{"metrics.k8s.io"}, "resources": []any{"pods", "nodes"}, "verbs": []any{"get", "list", "watch"}}}}
	err := m.api.Do(ctx, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", role, nil)
	if apierrors.IsAlreadyExists(err) {
		return 0, nil
	}
	return 0, err
}

// simulatedMetrics is the sandbox's server.MetricsSource. It reads the
// cluster as metrics-server's informers hold it: straight from the API
// server, not through the journal, whose requests are the clients'.
type simulatedMetrics struct {
	c     *inproc.Client
	now   func() time.Time
	nodes []string // the simulated nodes, the only ones with kubelets to read
}

var _ server.MetricsSource = (*simulatedMetrics)(nil)

// metricsAgent is metrics-server's user agent.
const metricsAgent = "metrics-server/v0.8.0 (linux/amd64) kubernetes/$Format"

func newSimulatedMetrics(sb *Sandbox) *simulatedMetrics {
	return &simulatedMetrics{c: inproc.New(sb.api, metricsAgent), now: sb.clock.Now, nodes: sb.nodeNames()}
}

func (m *simulatedMetrics) NodeMetrics(ctx context.Context) ([]metricsv1beta1.NodeMetrics, error) {
	ctx = authn.WithUser(ctx, simulatorUser)
	var nodes corev1.NodeList
	if err := m.c.Get(ctx, "/api/v1/nodes", &nodes); err != nil {
		return nil, err
	}
	pods, readings, err := m.podReadings(ctx, "")
	if err != nil {
		return nil, err
	}
	var out []metricsv1beta1.NodeMetrics
	for _, n := range nodes.Items {
		if !slices.Contains(m.nodes, n.Name) {
			continue
		}
		// What the node's system daemons use, kubelet and runtime.
		cpu := nanocores(int64(60+spread(n.Name, "cpu", 60)) * 1e6)
		memory := kibibytes(int64(450+spread(n.Name, "memory", 200)) << 20)
		for i, pod := range pods {
			if pod.Spec.NodeName != n.Name {
				continue
			}
			for _, c := range readings[i].Containers {
				cpu.Add(c.Usage[corev1.ResourceCPU])
				memory.Add(c.Usage[corev1.ResourceMemory])
			}
		}
		out = append(out, metricsv1beta1.NodeMetrics{ObjectMeta: m.meta(n.ObjectMeta), Timestamp: m.timestamp(),
			Window: metav1.Duration{Duration: metricsWindow}, Usage: corev1.ResourceList{corev1.ResourceCPU: cpu, corev1.ResourceMemory: memory}})
	}
	return out, nil
}

func (m *simulatedMetrics) PodMetrics(ctx context.Context, namespace string) ([]metricsv1beta1.PodMetrics, error) {
	_, readings, err := m.podReadings(authn.WithUser(ctx, simulatorUser), namespace)
	return readings, err
}

// podReadings returns the pods of namespace ("": all) that have readings,
// the running pods of the simulated nodes, and their readings.
func (m *simulatedMetrics) podReadings(ctx context.Context, namespace string) ([]*corev1.Pod, []metricsv1beta1.PodMetrics, error) {
	path := "/api/v1/pods"
	if namespace != "" {
		path = workloadCollection("", "pods", namespace)
	}
	var pods corev1.PodList
	if err := m.c.Get(ctx, path+"?fieldSelector="+url.QueryEscape("status.phase=Running"), &pods); err != nil {
		return nil, nil, err
	}
	var read []*corev1.Pod
	for i := range pods.Items {
		if pod := &pods.Items[i]; slices.Contains(m.nodes, pod.Spec.NodeName) {
			read = append(read, pod)
		}
	}
	shares, err := m.targetShares(ctx, namespace, read)
	if err != nil {
		return nil, nil, err
	}
	var readings []metricsv1beta1.PodMetrics
	for _, pod := range read {
		pm := metricsv1beta1.PodMetrics{ObjectMeta: m.meta(pod.ObjectMeta), Timestamp: m.timestamp(), Window: metav1.Duration{Duration: metricsWindow}}
		for _, c := range pod.Spec.Containers {
			pm.Containers = append(pm.Containers, metricsv1beta1.ContainerMetrics{Name: c.Name, Usage: corev1.ResourceList{
				corev1.ResourceCPU:    containerUsage(pod, c, corev1.ResourceCPU, shares),
				corev1.ResourceMemory: containerUsage(pod, c, corev1.ResourceMemory, shares),
			}})
		}
		readings = append(readings, pm)
	}
	return read, readings, nil
}

// meta is a reading's metadata: its object's name, namespace and labels,
// made now.
func (m *simulatedMetrics) meta(of metav1.ObjectMeta) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: of.Name, Namespace: of.Namespace, Labels: of.Labels, CreationTimestamp: metav1.NewTime(m.now().Truncate(time.Second))}
}

// timestamp is when the reading was scraped: the end of its window.
func (m *simulatedMetrics) timestamp() metav1.Time {
	return metav1.NewTime(m.now().Truncate(time.Second))
}

// shareKey names what one pod uses of one resource by its target's load.
type shareKey struct {
	pod string // namespace/name
	res corev1.ResourceName
}

// targetShares spreads the load the usage annotations of the
// HorizontalPodAutoscalers of namespace ("": all) give their targets over
// the ready pods of each target that are read (pods), not being deleted,
// with no usage annotation of their own: what each such pod uses, in
// nanocores or bytes. The pods the autoscaler counts, so that what it
// reads adds up to the load.
func (m *simulatedMetrics) targetShares(ctx context.Context, namespace string, pods []*corev1.Pod) (map[shareKey]int64, error) {
	path := allPath(hpaGVR)
	if namespace != "" {
		path = workloadCollection("autoscaling/v2", hpaGVR.Resource, namespace)
	}
	var hpas autoscalingv2.HorizontalPodAutoscalerList
	if err := m.c.Get(ctx, path, &hpas); apierrors.IsNotFound(err) {
		return nil, nil // autoscaling/v2 switched off: no HPA gives a load
	} else if err != nil {
		return nil, err
	}
	shares := map[shareKey]int64{}
	for _, h := range hpas.Items {
		var loads []corev1.ResourceName
		for _, res := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			if _, ok := simulatedUsage(h.Annotations, res); ok {
				loads = append(loads, res)
			}
		}
		if len(loads) == 0 {
			continue
		}
		target := h.Spec.ScaleTargetRef
		gvr, err := resourceFor(ctx, m.c, target.APIVersion, target.Kind)
		if err != nil {
			continue // no target, no load
		}
		scale, err := getScale(ctx, m.c, gvr, h.Namespace, target.Name)
		if err != nil {
			continue
		}
		sel, err := labels.Parse(scale.Status.Selector)
		if err != nil || scale.Status.Selector == "" {
			continue
		}
		for _, res := range loads {
			load, _ := simulatedUsage(h.Annotations, res)
			var sharing []string
			for _, p := range pods {
				if _, own := simulatedUsage(p.Annotations, res); p.Namespace == h.Namespace && !own && p.DeletionTimestamp == nil &&
					isPodReady(p) && sel.Matches(labels.Set(p.Labels)) {
					sharing = append(sharing, p.Namespace+"/"+p.Name)
				}
			}
			// In whole millicores, as an annotation sets them: a share
			// rounded up would read as one more millicore used, which can
			// be the one that makes the autoscaler take a pod more.
			share := baseUnits(load, res) / int64(len(sharing))
			if res == corev1.ResourceCPU {
				share = share / 1e6 * 1e6
			}
			for _, p := range sharing {
				shares[shareKey{p, res}] += share
			}
		}
	}
	return shares, nil
}

// containerUsage is what container c of pod uses of res: its pod's usage
// annotation, else its share of the pod's share of its target's load,
// else a steady share of its request.
func containerUsage(pod *corev1.Pod, c corev1.Container, res corev1.ResourceName, shares map[shareKey]int64) resource.Quantity {
	var units int64
	if q, own := simulatedUsage(pod.Annotations, res); own {
		units = baseUnits(q, res)
	} else if share, ok := shares[shareKey{pod.Namespace + "/" + pod.Name, res}]; ok {
		units = share / int64(len(pod.Spec.Containers))
	} else {
		units = idleUsage(pod.Name+"/"+c.Name, c.Resources.Requests, res)
	}
	if res == corev1.ResourceMemory {
		return kibibytes(units)
	}
	return nanocores(units)
}

// idleUsage is what a container that requests requests uses of res by
// itself, in nanocores or bytes.
func idleUsage(name string, requests corev1.ResourceList, res corev1.ResourceName) int64 {
	request, requested := requests[res]
	switch {
	case res == corev1.ResourceCPU && requested:
		return request.ScaledValue(resource.Nano) * int64(10+spread(name, "cpu", 20)) / 100
	case res == corev1.ResourceCPU:
		return int64(1+spread(name, "cpu", 4)) * 1e6
	case requested:
		return request.Value() * int64(30+spread(name, "memory", 30)) / 100
	default:
		return int64(4+spread(name, "memory", 20)) << 20
	}
}

// spread is a number in [0, n), the same for the same name and salt.
func spread(name, salt string, n uint32) uint32 {
	h := fnv.New32a()
	h.Write([]byte(name + "\x00" + salt))
	return h.Sum32() % n
}

// baseUnits is q in nanocores (cpu) or bytes (memory).
func baseUnits(q resource.Quantity, res corev1.ResourceName) int64 {
	if res == corev1.ResourceMemory {
		return q.Value()
	}
	return q.ScaledValue(resource.Nano)
}

// nanocores is cpu usage as metrics-server reports it ("2160340n").
func nanocores(n int64) resource.Quantity { return *resource.NewScaledQuantity(n, resource.Nano) }

// kibibytes is memory usage as metrics-server reports it ("14420Ki").
func kibibytes(bytes int64) resource.Quantity {
	return *resource.NewQuantity(bytes/1024*1024, resource.BinarySI)
}

// usageAnnotation is the annotation that says how much of res (cpu or
// memory) is used.
func usageAnnotation(res corev1.ResourceName) string {
	if res == corev1.ResourceMemory {
		return memoryUsageAnnotation
	}
	return cpuUsageAnnotation
}

// simulatedUsage reads a usage annotation of res from annotations.
func simulatedUsage(annotations map[string]string, res corev1.ResourceName) (resource.Quantity, bool) {
	q, err := resource.ParseQuantity(annotations[usageAnnotation(res)])
	return q, err == nil
}
