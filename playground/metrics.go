package playground

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"kubeplay/store"
)

// The simulated metrics source stands in for metrics-server, which reads
// what containers use from the kubelets; no container runs here, so what a
// pod "uses" is what annotations say. On a pod, per container:
//
//	simulated.kubeplay.dev/cpu-usage: 250m
//	simulated.kubeplay.dev/memory-usage: 64Mi
//
// On a HorizontalPodAutoscaler, the same annotations are the load of its
// whole target, shared evenly by its ready pods that have none of their
// own — so that scaling out lowers each pod's share, as it would on a
// cluster (kubectl annotate hpa web simulated.kubeplay.dev/cpu-usage=900m).
// A pod with neither is idle (it uses nothing). The horizontal pod
// autoscaler reads them while the metrics switch is on; off, it finds no
// metrics, as on a cluster without metrics-server.
const (
	cpuUsageAnnotation    = "simulated.kubeplay.dev/cpu-usage"
	memoryUsageAnnotation = "simulated.kubeplay.dev/memory-usage"
)

func init() {
	registerController(controllerDef{name: "metrics", title: "metrics source", simulated: true,
		start: func(*Sandbox) reconciler { return metricsSource{} }})
}

// metricsSource has nothing to do on its own: its readings are the pods'
// annotations, read when asked (podUsage). It is a switch so that a
// sandbox can be without metrics.
type metricsSource struct{}

func (metricsSource) resync(context.Context, int64) ([]string, error)          { return nil, nil }
func (metricsSource) keysOf(store.Event, queue)                                {}
func (metricsSource) reconcile(context.Context, string) (time.Duration, error) { return 0, nil }

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
