package playground

import (
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
)

// The replica calculator as kube-controller-manager's: pods without a
// reading and unready pods are counted so as to hold a change back, and a
// pod whose cpu is initializing counts once read a window after it became
// ready.
func TestHorizontal_replicaCalculator(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	hc := &horizontalController{now: func() time.Time { return now }}
	// pod is a pod requesting 1 cpu, started long ago, in phase, Ready
	// (since readySince before now) if ready.
	pod := func(name string, phase corev1.PodPhase, ready bool, readySince time.Duration) corev1.Pod {
		p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}},
			Status: corev1.PodStatus{Phase: phase, StartTime: &metav1.Time{Time: now.Add(-time.Hour)}}}
		if phase == corev1.PodRunning {
			status := corev1.ConditionFalse
			if ready {
				status = corev1.ConditionTrue
			}
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: status, LastTransitionTime: metav1.Time{Time: now.Add(-readySince)}}}
		}
		return p
	}
	running := func(name string) corev1.Pod { return pod(name, corev1.PodRunning, true, time.Hour) }
	reading := func(name, cpu string) metricsv1beta1.PodMetrics {
		return metricsv1beta1.PodMetrics{ObjectMeta: metav1.ObjectMeta{Name: name}, Timestamp: metav1.Time{Time: now}, Window: metav1.Duration{Duration: 15 * time.Second},
			Containers: []metricsv1beta1.ContainerMetrics{{Name: "c", Usage: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}}
	}
	utilization := int32(50)
	metric := autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
		Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: &utilization}}}

	for _, tc := range []struct {
		name     string
		current  int32
		pods     []corev1.Pod
		readings []metricsv1beta1.PodMetrics
		want     int32
		recheck  time.Duration
	}{
		{name: "ready pods at 70% of a 50% target", current: 3,
			pods: []corev1.Pod{running("a"), running("b"), running("c")}, readings: []metricsv1beta1.PodMetrics{reading("a", "700m"), reading("b", "700m"), reading("c", "700m")},
			want: 5},
		{name: "within the tolerance", current: 3,
			pods: []corev1.Pod{running("a"), running("b")}, readings: []metricsv1beta1.PodMetrics{reading("a", "540m"), reading("b", "540m")},
			want: 3},
		// 140% of target over 3 pods, but the pending one taken at 0 makes
		// it 104%: within the tolerance.
		{name: "scale-up with a pending pod", current: 4,
			pods:     []corev1.Pod{running("a"), running("b"), running("c"), pod("d", corev1.PodPending, false, 0)},
			readings: []metricsv1beta1.PodMetrics{reading("a", "700m"), reading("b", "700m"), reading("c", "700m")},
			want:     4},
		// 20% of target read, but the two pods without readings taken at
		// 100% make it 110%: the change would turn, so none.
		{name: "scale-down with pods missing readings", current: 4,
			pods:     []corev1.Pod{running("a"), running("b"), running("c"), running("d")},
			readings: []metricsv1beta1.PodMetrics{reading("a", "100m"), reading("b", "100m")},
			want:     4},
		// 10% of target read; the pod without a reading taken at 100%
		// makes it 56%: 3 pods rather than 1.
		{name: "scale-down with a pod missing a reading", current: 4,
			pods:     []corev1.Pod{running("a"), running("b"), running("c"), running("d")},
			readings: []metricsv1beta1.PodMetrics{reading("a", "50m"), reading("b", "50m"), reading("c", "50m")},
			want:     3},
		// Ready 5 s ago, read now over a 15 s window: not yet counted, and
		// taken at 0 on the way up (4 pods rather than 8); counted in 11 s.
		{name: "a pod whose cpu initializes", current: 2,
			pods: []corev1.Pod{running("a"), func() corev1.Pod {
				p := pod("b", corev1.PodRunning, true, 5*time.Second)
				p.Status.StartTime.Time = now.Add(-time.Minute)
				return p
			}()},
			readings: []metricsv1beta1.PodMetrics{reading("a", "2"), reading("b", "2")},
			want:     4, recheck: 11 * time.Second},
		// Unready for cpu, and below target: ignored.
		{name: "scale-down with an unready pod", current: 3,
			pods:     []corev1.Pod{running("a"), running("b"), pod("c", corev1.PodRunning, false, time.Hour)},
			readings: []metricsv1beta1.PodMetrics{reading("a", "100m"), reading("b", "100m"), reading("c", "900m")},
			want:     1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _, _, _, recheck, err := hc.replicasForMetric(metric, tc.pods, tc.readings, nil, tc.current)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want || recheck != tc.recheck {
				t.Errorf("%d replicas, recheck in %v; want %d, %v", got, recheck, tc.want, tc.recheck)
			}
		})
	}
}
