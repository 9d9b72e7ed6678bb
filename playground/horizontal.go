package playground

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"

	"kubeplay/server/inproc"
	"kubeplay/store"
)

// horizontalController is kube-controller-manager's horizontal pod
// autoscaler: it sets the replicas of an HPA's target, through its /scale,
// to what the target's pods' resource usage (read from the resource
// metrics API, which the simulated metrics-server serves: see metrics.go)
// asks for, within the HPA's bounds, a scale-down
// held back by the stabilization window; it writes the HPA's status,
// conditions and SuccessfulRescale events. Its keys are "<namespace>/<name>"
// of HorizontalPodAutoscalers. Unlike kube-controller-manager's, it does not
// look every 15 seconds: a change of a pod of the namespace (its usage is an
// annotation) or of the HPA is what makes it look, and the end of a
// stabilization window.
type horizontalController struct {
	c      *inproc.Client
	events *eventRecorder
	now    func() time.Time
	served func() bool
	// byNamespace names the HPAs of each namespace, for the event goroutine.
	byNamespace map[string]map[string]bool
	// recommendations remembers each HPA's recent recommendations, for its
	// stabilization windows; only the worker uses it.
	recommendations map[string][]recommendation
}

type recommendation struct {
	replicas int32
	at       time.Time
}

func init() {
	registerController(controllerDef{name: "horizontalPodAutoscaler", title: "horizontal pod autoscaler", serviceAccount: "horizontal-pod-autoscaler",
		start: func(sb *Sandbox) reconciler {
			c := inproc.New(sb.handler, controllerAgent("horizontal-pod-autoscaler"))
			return &horizontalController{c: c, events: newEventRecorder(c, "horizontal-pod-autoscaler", "", sb.clock.Now), now: sb.clock.Now,
				served: servedIn(sb, hpaGVR), recommendations: map[string][]recommendation{}}
		}})
}

const (
	// hpaTolerance is how far from its target a metric may be before the
	// autoscaler acts (--horizontal-pod-autoscaler-tolerance).
	hpaTolerance = 0.1
	// defaultDownscaleWindow is how long the autoscaler remembers the
	// recommendations a scale-down must all be under.
	defaultDownscaleWindow = 5 * time.Minute
)

var (
	hpaGVR       = schema.GroupVersionResource{Group: "autoscaling", Version: "v2", Resource: "horizontalpodautoscalers"}
	hpaKeyPrefix = builtinKeyPrefix(hpaGVR)
)

func (hc *horizontalController) resync(ctx context.Context, _ int64) ([]string, error) {
	hc.byNamespace = map[string]map[string]bool{}
	if !hc.served() {
		return nil, nil
	}
	var l autoscalingv2.HorizontalPodAutoscalerList
	if err := hc.c.Get(ctx, allPath(hpaGVR), &l); err != nil {
		return nil, err
	}
	var keys []string
	for _, h := range l.Items {
		hc.note(h.Namespace, h.Name, true)
		keys = append(keys, h.Namespace+"/"+h.Name)
	}
	return keys, nil
}

func (hc *horizontalController) note(ns, name string, present bool) {
	if !present {
		delete(hc.byNamespace[ns], name)
		return
	}
	if hc.byNamespace[ns] == nil {
		hc.byNamespace[ns] = map[string]bool{}
	}
	hc.byNamespace[ns][name] = true
}

// keysOf names an HPA that changed, and every HPA of the namespace of a
// pod that changed (its usage or readiness may have).
func (hc *horizontalController) keysOf(ev store.Event, q queue) {
	if rest, ok := strings.CutPrefix(ev.KV.Key, hpaKeyPrefix); ok {
		ns, name, _ := strings.Cut(rest, "/")
		hc.note(ns, name, ev.Type != store.Deleted)
		if ev.Type != store.Deleted {
			q.Add(rest)
		}
		return
	}
	if rest, ok := strings.CutPrefix(ev.KV.Key, podKeyPrefix); ok {
		ns, _, _ := strings.Cut(rest, "/")
		for name := range hc.byNamespace[ns] {
			q.Add(ns + "/" + name)
		}
	}
}

func (hc *horizontalController) reconcile(ctx context.Context, key string) (time.Duration, error) {
	ns, name, _ := strings.Cut(key, "/")
	var hpa autoscalingv2.HorizontalPodAutoscaler
	if err := hc.c.Get(ctx, namedPath("autoscaling/v2", "horizontalpodautoscalers", ns, name), &hpa); err != nil {
		if apierrors.IsNotFound(err) {
			delete(hc.recommendations, key)
			return 0, nil
		}
		return 0, err
	}
	before := hpa.Status.DeepCopy()
	after, err := hc.sync(ctx, key, &hpa)
	if werr := hc.putStatus(ctx, &hpa, before); werr != nil {
		return 0, werr
	}
	if errors.Is(err, errUntilChange) {
		// Said in the status and events; it fails again until the HPA,
		// its target or their pods change, which queues it anyway.
		return 0, nil
	}
	return after, err
}

// errUntilChange marks a failure that retrying cannot mend.
var errUntilChange = errors.New("fails until something changes")

func (hc *horizontalController) putStatus(ctx context.Context, hpa *autoscalingv2.HorizontalPodAutoscaler, before *autoscalingv2.HorizontalPodAutoscalerStatus) error {
	if reflect.DeepEqual(before, &hpa.Status) {
		return nil
	}
	hpa.APIVersion, hpa.Kind = "autoscaling/v2", "HorizontalPodAutoscaler"
	return hc.c.Do(ctx, "PUT", namedPath("autoscaling/v2", "horizontalpodautoscalers", hpa.Namespace, hpa.Name)+"/status", hpa, nil)
}

// sync scales hpa's target and sets hpa's status (written by the caller).
func (hc *horizontalController) sync(ctx context.Context, key string, hpa *autoscalingv2.HorizontalPodAutoscaler) (time.Duration, error) {
	ref := metaRef("autoscaling/v2", "HorizontalPodAutoscaler", hpa.ObjectMeta)
	target := hpa.Spec.ScaleTargetRef
	gvr, err := resourceFor(ctx, hc.c, target.APIVersion, target.Kind)
	if err != nil {
		hc.events.event(ctx, ref, "Warning", "FailedGetScale", err.Error())
		hc.setCondition(hpa, autoscalingv2.AbleToScale, corev1.ConditionFalse, "FailedGetScale", "the HPA controller was unable to get the target's current scale: %v", err)
		return 0, errors.Join(err, errUntilChange)
	}
	scale, err := getScale(ctx, hc.c, gvr, hpa.Namespace, target.Name)
	if err != nil {
		hc.events.event(ctx, ref, "Warning", "FailedGetScale", err.Error())
		hc.setCondition(hpa, autoscalingv2.AbleToScale, corev1.ConditionFalse, "FailedGetScale", "the HPA controller was unable to get the target's current scale: %v", err)
		if apierrors.IsNotFound(err) {
			err = errors.Join(err, errUntilChange)
		}
		return 0, err
	}
	hc.setCondition(hpa, autoscalingv2.AbleToScale, corev1.ConditionTrue, "SucceededGetScale", "the HPA controller was able to get the target's current scale")
	current := scale.Spec.Replicas
	minReplicas := int32(1)
	if hpa.Spec.MinReplicas != nil {
		minReplicas = *hpa.Spec.MinReplicas
	}
	var desired int32
	var reason string
	var recheck time.Duration
	rescale := true
	switch {
	case current == 0 && minReplicas != 0:
		rescale = false
		hc.setCondition(hpa, autoscalingv2.ScalingActive, corev1.ConditionFalse, "ScalingDisabled", "scaling is disabled since the replica count of the target is zero")
	case current > hpa.Spec.MaxReplicas:
		desired, reason = hpa.Spec.MaxReplicas, "Current number of replicas above Spec.MaxReplicas"
	case current < minReplicas:
		desired, reason = minReplicas, "Current number of replicas below Spec.MinReplicas"
	default:
		proposed, metric, statuses, err := hc.replicasForMetrics(ctx, hpa, scale.Status.Selector, current)
		hpa.Status.CurrentMetrics = statuses
		if err != nil {
			hpa.Status.CurrentReplicas = current
			hc.events.event(ctx, ref, "Warning", "FailedComputeMetricsReplicas", err.Error())
			return 0, fmt.Errorf("failed to compute desired number of replicas based on listed metrics for %s/%s/%s: %v: %w", target.Kind, hpa.Namespace, target.Name, err, errUntilChange)
		}
		desired = proposed
		switch {
		case desired > current:
			reason = metric + " above target"
		case desired < current:
			reason = "All metrics below target"
		}
		desired, recheck = hc.normalize(key, hpa, current, desired, minReplicas)
		rescale = desired != current
	}
	if !rescale {
		hpa.Status.CurrentReplicas, hpa.Status.DesiredReplicas = current, current
		return recheck, nil
	}
	scale.Spec.Replicas = desired
	if err := hc.c.Do(ctx, "PUT", scalePath(gvr, hpa.Namespace, target.Name), scale, nil); err != nil {
		hc.events.event(ctx, ref, "Warning", "FailedRescale", fmt.Sprintf("New size: %d; reason: %s; error: %v", desired, reason, err))
		hc.setCondition(hpa, autoscalingv2.AbleToScale, corev1.ConditionFalse, "FailedUpdateScale", "the HPA controller was unable to update the target scale: %v", err)
		hpa.Status.CurrentReplicas = current
		return 0, err
	}
	hc.setCondition(hpa, autoscalingv2.AbleToScale, corev1.ConditionTrue, "SucceededRescale", "the HPA controller was able to update the target scale to %d", desired)
	hc.events.event(ctx, ref, "Normal", "SuccessfulRescale", fmt.Sprintf("New size: %d; reason: %s", desired, reason))
	now := metav1.NewTime(hc.now().Truncate(time.Second))
	hpa.Status.CurrentReplicas, hpa.Status.DesiredReplicas, hpa.Status.LastScaleTime = current, desired, &now
	return recheck, nil
}

// normalize holds a scale-down back to the highest recommendation of the
// downscale stabilization window (and a scale-up to the lowest of the
// upscale one, when the HPA's behavior sets one), then keeps the result
// within the HPA's bounds and, without a behavior, within the default
// scale-up rate. recheck is when a recommendation holding a scale-down
// back leaves its window.
func (hc *horizontalController) normalize(key string, hpa *autoscalingv2.HorizontalPodAutoscaler, current, proposed, minReplicas int32) (desired int32, recheck time.Duration) {
	now := hc.now()
	downWindow, upWindow := defaultDownscaleWindow, time.Duration(0)
	if b := hpa.Spec.Behavior; b != nil {
		if b.ScaleDown != nil && b.ScaleDown.StabilizationWindowSeconds != nil {
			downWindow = time.Duration(*b.ScaleDown.StabilizationWindowSeconds) * time.Second
		}
		if b.ScaleUp != nil && b.ScaleUp.StabilizationWindowSeconds != nil {
			upWindow = time.Duration(*b.ScaleUp.StabilizationWindowSeconds) * time.Second
		}
	}
	up, down := proposed, proposed
	var kept []recommendation
	for _, r := range hc.recommendations[key] {
		inUp, inDown := now.Sub(r.at) < upWindow, now.Sub(r.at) < downWindow
		if inUp {
			up = min(up, r.replicas)
		}
		if inDown {
			down = max(down, r.replicas)
			if r.replicas > proposed {
				if wait := r.at.Add(downWindow).Sub(now); recheck == 0 || wait < recheck {
					recheck = wait
				}
			}
		}
		if inUp || inDown {
			kept = append(kept, r)
		}
	}
	hc.recommendations[key] = append(kept, recommendation{replicas: proposed, at: now})
	stabilized := min(max(current, up), down)
	switch {
	case stabilized == proposed:
		hc.setCondition(hpa, autoscalingv2.AbleToScale, corev1.ConditionTrue, "ReadyForNewScale", "recommended size matches current size")
	case proposed >= current:
		hc.setCondition(hpa, autoscalingv2.AbleToScale, corev1.ConditionTrue, "ScaleUpStabilized", "recent recommendations were lower than current one, applying the lowest recent recommendation")
	default:
		hc.setCondition(hpa, autoscalingv2.AbleToScale, corev1.ConditionTrue, "ScaleDownStabilized", "recent recommendations were higher than current one, applying the highest recent recommendation")
	}
	if stabilized == proposed {
		recheck = 0
	}
	desired = stabilized
	limitReason, limitMessage := "DesiredWithinRange", "the desired count is within the acceptable range"
	maxReplicas := hpa.Spec.MaxReplicas
	maxReason, maxMessage := "TooManyReplicas", "the desired replica count is more than the maximum replica count"
	if upLimit := max(2*current, 4); hpa.Spec.Behavior == nil && maxReplicas > upLimit {
		maxReplicas, maxReason, maxMessage = upLimit, "ScaleUpLimit", "the desired replica count is increasing faster than the maximum scale rate"
	}
	switch {
	case desired < minReplicas:
		desired, limitReason, limitMessage = minReplicas, "TooFewReplicas", "the desired replica count is less than the minimum replica count"
	case desired > maxReplicas:
		desired, limitReason, limitMessage = maxReplicas, maxReason, maxMessage
	}
	status := corev1.ConditionFalse
	if desired != stabilized {
		status = corev1.ConditionTrue
	}
	hc.setCondition(hpa, autoscalingv2.ScalingLimited, status, limitReason, "%s", limitMessage)
	return desired, recheck
}

// replicasForMetrics proposes, of hpa's metrics, the most replicas any
// asks for, and names that metric.
func (hc *horizontalController) replicasForMetrics(ctx context.Context, hpa *autoscalingv2.HorizontalPodAutoscaler, selector string, current int32) (int32, string, []autoscalingv2.MetricStatus, error) {
	sel, err := labels.Parse(selector)
	if selector == "" || err != nil {
		msg := "the HPA target's scale is missing a selector"
		if err != nil {
			msg = fmt.Sprintf("couldn't convert selector into a corresponding internal selector object: %v", err)
		}
		hc.events.event(ctx, metaRef("autoscaling/v2", "HorizontalPodAutoscaler", hpa.ObjectMeta), "Warning", "SelectorRequired", msg)
		hc.setCondition(hpa, autoscalingv2.ScalingActive, corev1.ConditionFalse, "InvalidSelector", "%s", msg)
		return 0, "", nil, fmt.Errorf("%s", msg)
	}
	var pods corev1.PodList
	if err := hc.c.Get(ctx, workloadCollection("", "pods", hpa.Namespace)+labelSelectorQuery(sel.String()), &pods); err != nil {
		return 0, "", nil, err
	}
	// Read once for all the HPA's resource metrics, as the real one lists
	// them for each.
	var readings metricsv1beta1.PodMetricsList
	readErr := hc.c.Get(ctx, workloadCollection("metrics.k8s.io/v1beta1", "pods", hpa.Namespace)+labelSelectorQuery(sel.String()), &readings)
	metrics := hpa.Spec.Metrics
	if len(metrics) == 0 {
		utilization := int32(80)
		metrics = []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
			Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: &utilization}}}}
	}
	var (
		best     int32 = -1
		bestName string
		statuses []autoscalingv2.MetricStatus
		firstErr error
	)
	for _, m := range metrics {
		replicas, name, status, reason, err := hc.replicasForMetric(m, pods.Items, readings.Items, readErr, current)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			hc.events.event(ctx, metaRef("autoscaling/v2", "HorizontalPodAutoscaler", hpa.ObjectMeta), "Warning", reason, err.Error())
			hc.setCondition(hpa, autoscalingv2.ScalingActive, corev1.ConditionFalse, reason, "the HPA was unable to compute the replica count: %v", err)
			continue
		}
		statuses = append(statuses, status)
		if replicas > best {
			best, bestName = replicas, name
		}
	}
	if best == -1 {
		return 0, "", statuses, firstErr
	}
	if firstErr == nil {
		hc.setCondition(hpa, autoscalingv2.ScalingActive, corev1.ConditionTrue, "ValidMetricFound", "the HPA was able to successfully calculate a replica count from %s", bestName)
	}
	return best, bestName, statuses, nil
}

// replicasForMetric proposes a replica count for one metric: the count of
// the ready pods with readings scaled by how far their usage is from the
// target, unless it is within the tolerance. readings are the pods'
// resource metrics, or readErr why there are none.
func (hc *horizontalController) replicasForMetric(m autoscalingv2.MetricSpec, pods []corev1.Pod, readings []metricsv1beta1.PodMetrics, readErr error, current int32) (int32, string, autoscalingv2.MetricStatus, string, error) {
	if m.Type != autoscalingv2.ResourceMetricSourceType || m.Resource == nil {
		reason := "FailedGet" + string(m.Type) + "Metric"
		return 0, "", autoscalingv2.MetricStatus{}, reason, fmt.Errorf("unable to get %s metric: the simulated metrics-server serves resource metrics only", strings.ToLower(string(m.Type)))
	}
	res := m.Resource.Name
	const reason = "FailedGetResourceMetric"
	switch {
	case readErr != nil:
		return 0, "", autoscalingv2.MetricStatus{}, reason, fmt.Errorf("failed to get %s utilization: unable to get metrics for resource %s: unable to fetch metrics from resource metrics API: %v", res, res, readErr)
	case len(readings) == 0:
		return 0, "", autoscalingv2.MetricStatus{}, reason, fmt.Errorf("failed to get %s utilization: unable to get metrics for resource %s: no metrics returned from resource metrics API", res, res)
	}
	used := map[string]int64{} // by pod name, in milli-units
	for _, r := range readings {
		for _, c := range r.Containers {
			q := c.Usage[res]
			used[r.Name] += q.MilliValue()
		}
	}
	var usage, request int64
	ready := 0
	for i := range pods {
		pod := &pods[i]
		u, read := used[pod.Name]
		if !read || pod.DeletionTimestamp != nil || pod.Status.Phase != corev1.PodRunning || !isPodReady(pod) {
			continue
		}
		ready++
		usage += u
		for _, c := range pod.Spec.Containers {
			r, ok := c.Resources.Requests[res]
			if !ok && m.Resource.Target.Type == autoscalingv2.UtilizationMetricType {
				return 0, "", autoscalingv2.MetricStatus{}, reason, fmt.Errorf("failed to get %s utilization: missing request for %s in container %s of Pod %s", res, res, c.Name, pod.Name)
			}
			request += r.MilliValue()
		}
	}
	if ready == 0 {
		return 0, "", autoscalingv2.MetricStatus{}, reason, fmt.Errorf("failed to get %s utilization: did not receive metrics for targeted pods (pods might be unready)", res)
	}
	average := resource.NewMilliQuantity(usage/int64(ready), resource.DecimalSI)
	if res == corev1.ResourceMemory {
		average = resource.NewQuantity(usage/int64(ready)/1000, resource.BinarySI)
	}
	status := autoscalingv2.MetricStatus{Type: autoscalingv2.ResourceMetricSourceType,
		Resource: &autoscalingv2.ResourceMetricStatus{Name: res, Current: autoscalingv2.MetricValueStatus{AverageValue: average}}}
	var ratio float64
	var name string
	switch t := m.Resource.Target; {
	case t.Type == autoscalingv2.UtilizationMetricType && t.AverageUtilization != nil && request > 0:
		utilization := int32(usage * 100 / request)
		status.Resource.Current.AverageUtilization = &utilization
		ratio = float64(utilization) / float64(*t.AverageUtilization)
		name = fmt.Sprintf("%s resource utilization (percentage of request)", res)
	case t.Type == autoscalingv2.AverageValueMetricType && t.AverageValue != nil && t.AverageValue.MilliValue() > 0:
		ratio = float64(usage) / float64(ready) / float64(t.AverageValue.MilliValue())
		name = fmt.Sprintf("%s resource", res)
	default:
		return 0, "", autoscalingv2.MetricStatus{}, reason, fmt.Errorf("failed to get %s utilization: invalid target for resource metric %s", res, res)
	}
	if math.Abs(1-ratio) <= hpaTolerance {
		return current, name, status, "", nil
	}
	return int32(math.Ceil(ratio * float64(ready))), name, status, "", nil
}

// setCondition sets hpa's condition of type t; its lastTransitionTime
// changes with its status only.
func (hc *horizontalController) setCondition(hpa *autoscalingv2.HorizontalPodAutoscaler, t autoscalingv2.HorizontalPodAutoscalerConditionType, status corev1.ConditionStatus, reason, format string, args ...any) {
	c := autoscalingv2.HorizontalPodAutoscalerCondition{Type: t, Status: status, Reason: reason, Message: fmt.Sprintf(format, args...),
		LastTransitionTime: metav1.NewTime(hc.now().Truncate(time.Second))}
	for i, old := range hpa.Status.Conditions {
		if old.Type != t {
			continue
		}
		if old.Status == status {
			c.LastTransitionTime = old.LastTransitionTime
		}
		hpa.Status.Conditions[i] = c
		return
	}
	hpa.Status.Conditions = append(hpa.Status.Conditions, c)
}
