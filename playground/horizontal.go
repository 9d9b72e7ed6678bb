package playground

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
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

var horizontalPodAutoscalerDef = controllerDef{name: "horizontalPodAutoscaler", title: "horizontal pod autoscaler", serviceAccount: "horizontal-pod-autoscaler",
	start: func(sb *Sandbox) reconciler {
		c := inproc.New(sb.handler, controllerAgent("horizontal-pod-autoscaler"))
		return &horizontalController{c: c, events: newEventRecorder(c, "horizontal-pod-autoscaler", "", sb.clock.Now), now: sb.clock.Now,
			served: servedIn(sb, hpaGVR), recommendations: map[string][]recommendation{}}
	}}

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
		// its target or their pods change, which queues it anyway, or
		// until pods not counted yet count (after).
		return after, nil
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
		proposed, metric, statuses, pending, err := hc.replicasForMetrics(ctx, hpa, scale.Status.Selector, current)
		hpa.Status.CurrentMetrics = statuses
		if err != nil {
			hpa.Status.CurrentReplicas = current
			hc.events.event(ctx, ref, "Warning", "FailedComputeMetricsReplicas", err.Error())
			return pending, fmt.Errorf("failed to compute desired number of replicas based on listed metrics for %s/%s/%s: %v: %w", target.Kind, hpa.Namespace, target.Name, err, errUntilChange)
		}
		desired = proposed
		switch {
		case desired > current:
			reason = metric + " above target"
		case desired < current:
			reason = "All metrics below target"
		}
		desired, recheck = hc.normalize(key, hpa, current, desired, minReplicas)
		if pending > 0 && (recheck == 0 || pending < recheck) {
			recheck = pending
		}
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
// asks for, and names that metric; recheck is when pods not counted yet
// will be.
func (hc *horizontalController) replicasForMetrics(ctx context.Context, hpa *autoscalingv2.HorizontalPodAutoscaler, selector string, current int32) (int32, string, []autoscalingv2.MetricStatus, time.Duration, error) {
	sel, err := labels.Parse(selector)
	if selector == "" || err != nil {
		msg := "the HPA target's scale is missing a selector"
		if err != nil {
			msg = fmt.Sprintf("couldn't convert selector into a corresponding internal selector object: %v", err)
		}
		hc.events.event(ctx, metaRef("autoscaling/v2", "HorizontalPodAutoscaler", hpa.ObjectMeta), "Warning", "SelectorRequired", msg)
		hc.setCondition(hpa, autoscalingv2.ScalingActive, corev1.ConditionFalse, "InvalidSelector", "%s", msg)
		return 0, "", nil, 0, fmt.Errorf("%s", msg)
	}
	var pods corev1.PodList
	if err := hc.c.Get(ctx, workloadCollection("", "pods", hpa.Namespace)+labelSelectorQuery(sel.String()), &pods); err != nil {
		return 0, "", nil, 0, err
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
		recheck  time.Duration
	)
	for _, m := range metrics {
		replicas, name, status, reason, after, err := hc.replicasForMetric(m, pods.Items, readings.Items, readErr, current)
		if after > 0 && (recheck == 0 || after < recheck) {
			recheck = after
		}
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
		return 0, "", statuses, recheck, firstErr
	}
	if firstErr == nil {
		hc.setCondition(hpa, autoscalingv2.ScalingActive, corev1.ConditionTrue, "ValidMetricFound", "the HPA was able to successfully calculate a replica count from %s", bestName)
	}
	return best, bestName, statuses, recheck, nil
}

// replicasForMetric proposes a replica count for one metric, as
// kube-controller-manager's replica calculator: from the usage of the pods
// with readings that count as ready, scaled by how far it is from the
// target, unless it is within the tolerance; then, if some pods have no
// reading, or some are unready while the usage is over target, again with
// those counted at the target's usage or nothing, whichever holds the
// change back, the change kept only if it still goes the same way.
// readings are the pods' resource metrics, or readErr why there are none;
// recheck is when a pod that does not count yet for its cpu's
// initialization will.
func (hc *horizontalController) replicasForMetric(m autoscalingv2.MetricSpec, pods []corev1.Pod, readings []metricsv1beta1.PodMetrics, readErr error, current int32) (replicas int32, name string, status autoscalingv2.MetricStatus, reason string, recheck time.Duration, err error) {
	if m.Type != autoscalingv2.ResourceMetricSourceType || m.Resource == nil {
		reason := "FailedGet" + string(m.Type) + "Metric"
		return 0, "", status, reason, 0, fmt.Errorf("unable to get %s metric: the simulated metrics-server serves resource metrics only", strings.ToLower(string(m.Type)))
	}
	res := m.Resource.Name
	reason = "FailedGetResourceMetric"
	fail := func(format string, args ...any) (int32, string, autoscalingv2.MetricStatus, string, time.Duration, error) {
		return 0, "", autoscalingv2.MetricStatus{}, reason, recheck, fmt.Errorf("failed to get %s utilization: "+format, append([]any{res}, args...)...)
	}
	switch {
	case readErr != nil:
		return fail("unable to get metrics for resource %s: unable to fetch metrics from resource metrics API: %v", res, readErr)
	case len(readings) == 0:
		return fail("unable to get metrics for resource %s: no metrics returned from resource metrics API", res)
	}
	if len(pods) == 0 {
		return fail("no pods returned by selector while calculating replica count")
	}
	g := hc.groupPods(pods, readings, res)
	recheck = g.recheck
	if len(g.metrics) == 0 {
		return fail("did not receive metrics for targeted pods (pods might be unready)")
	}
	utilizationTarget := m.Resource.Target.Type == autoscalingv2.UtilizationMetricType
	requests := map[string]int64{}
	if utilizationTarget {
		for i := range pods {
			r, err := podRequest(&pods[i], res)
			if err != nil {
				return fail("%v", err)
			}
			requests[pods[i].Name] = r
		}
	}
	status = autoscalingv2.MetricStatus{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricStatus{Name: res}}
	// ratioOf is how far metrics are from the target, with the usage
	// status reports.
	var ratioOf func(metrics map[string]int64) (ratio float64, utilization int32, average int64)
	var target int64 // what a missing pod is taken to use, below target
	switch t := m.Resource.Target; {
	case utilizationTarget && t.AverageUtilization != nil:
		ratioOf = func(metrics map[string]int64) (float64, int32, int64) {
			var total, requested int64
			for pod, v := range metrics {
				total += v
				requested += requests[pod]
			}
			if requested == 0 {
				return 0, 0, 0
			}
			utilization := int32(total * 100 / requested)
			return float64(utilization) / float64(*t.AverageUtilization), utilization, total / int64(len(metrics))
		}
		name = fmt.Sprintf("%s resource utilization (percentage of request)", res)
	case t.Type == autoscalingv2.AverageValueMetricType && t.AverageValue != nil && t.AverageValue.MilliValue() > 0:
		target = t.AverageValue.MilliValue()
		ratioOf = func(metrics map[string]int64) (float64, int32, int64) {
			var total int64
			for _, v := range metrics {
				total += v
			}
			average := total / int64(len(metrics))
			return float64(average) / float64(target), 0, average
		}
		name = fmt.Sprintf("%s resource", res)
	default:
		return fail("invalid target for resource metric %s", res)
	}
	if utilizationTarget {
		var requested int64
		for pod := range g.metrics {
			requested += requests[pod]
		}
		if requested == 0 {
			return fail("no metrics returned matched known pods")
		}
	}
	ratio, utilization, average := ratioOf(g.metrics)
	if utilizationTarget {
		status.Resource.Current.AverageUtilization = &utilization
	}
	status.Resource.Current.AverageValue = resource.NewMilliQuantity(average, resource.DecimalSI)
	if res == corev1.ResourceMemory {
		status.Resource.Current.AverageValue = resource.NewQuantity(average/1000, resource.BinarySI)
	}
	within := func(r float64) bool { return math.Abs(1-r) <= hpaTolerance }
	scaleUpWithUnready := len(g.unready) > 0 && ratio > 1
	if !scaleUpWithUnready && len(g.missing) == 0 {
		if within(ratio) {
			return current, name, status, "", recheck, nil
		}
		return int32(math.Ceil(ratio * float64(g.ready))), name, status, "", recheck, nil
	}
	metrics := maps.Clone(g.metrics)
	for _, pod := range g.missing {
		switch {
		case ratio < 1 && utilizationTarget:
			metrics[pod] = requests[pod] * int64(max(100, *m.Resource.Target.AverageUtilization)) / 100
		case ratio < 1:
			metrics[pod] = target
		case ratio > 1:
			metrics[pod] = 0
		}
	}
	if scaleUpWithUnready {
		for _, pod := range g.unready {
			metrics[pod] = 0
		}
	}
	newRatio, _, _ := ratioOf(metrics)
	if within(newRatio) || ratio < 1 && newRatio > 1 || ratio > 1 && newRatio < 1 {
		return current, name, status, "", recheck, nil
	}
	replicas = int32(math.Ceil(newRatio * float64(len(metrics))))
	if newRatio < 1 && replicas > current || newRatio > 1 && replicas < current {
		return current, name, status, "", recheck, nil
	}
	return replicas, name, status, "", recheck, nil
}

// Defaults of kube-controller-manager's
// --horizontal-pod-autoscaler-cpu-initialization-period and
// --horizontal-pod-autoscaler-initial-readiness-delay.
const (
	cpuInitializationPeriod = 5 * time.Minute
	initialReadinessDelay   = 30 * time.Second
)

// podGroups sorts an HPA's pods as the replica calculator does.
type podGroups struct {
	// metrics are the usage readings (milli-units) of the pods that count.
	metrics map[string]int64
	ready   int
	// unready pods are pending, or for cpu not ready yet or too lately
	// ready for their reading; missing ones have no reading.
	unready, missing []string
	// recheck is when the first pod unready only because its reading
	// predates its readiness will count.
	recheck time.Duration
}

// groupPods sorts pods: those deleted or failed are ignored, pending ones
// are unready, those without a reading missing; for cpu, a pod is unready
// too if it has no Ready condition or start time, or, while its cpu
// initializes, is not ready or was read before a whole window of
// readiness, or, later, is not ready and never was since its start.
func (hc *horizontalController) groupPods(pods []corev1.Pod, readings []metricsv1beta1.PodMetrics, res corev1.ResourceName) podGroups {
	type reading struct {
		used   int64
		at     time.Time
		window time.Duration
	}
	read := map[string]reading{}
	for _, r := range readings {
		v := reading{at: r.Timestamp.Time, window: r.Window.Duration}
		for _, c := range r.Containers {
			q := c.Usage[res]
			v.used += q.MilliValue()
		}
		read[r.Name] = v
	}
	now := hc.now()
	g := podGroups{metrics: map[string]int64{}}
	for i := range pods {
		pod := &pods[i]
		if pod.DeletionTimestamp != nil || pod.Status.Phase == corev1.PodFailed {
			continue
		}
		if pod.Status.Phase == corev1.PodPending {
			g.unready = append(g.unready, pod.Name)
			continue
		}
		r, ok := read[pod.Name]
		if !ok {
			g.missing = append(g.missing, pod.Name)
			continue
		}
		if res == corev1.ResourceCPU {
			cond, start := podReadyCondition(pod), pod.Status.StartTime
			var unready bool
			switch {
			case cond == nil || start == nil:
				unready = true
			case start.Add(cpuInitializationPeriod).After(now):
				fresh := cond.LastTransitionTime.Add(r.window)
				unready = cond.Status == corev1.ConditionFalse || r.at.Before(fresh)
				if cond.Status == corev1.ConditionTrue && r.at.Before(fresh) {
					// Read again once a window has passed since it became ready.
					if wait := fresh.Sub(now) + time.Second; g.recheck == 0 || wait < g.recheck {
						g.recheck = max(wait, time.Second)
					}
				}
			default:
				unready = cond.Status == corev1.ConditionFalse && start.Add(initialReadinessDelay).After(cond.LastTransitionTime.Time)
			}
			if unready {
				g.unready = append(g.unready, pod.Name)
				continue
			}
		}
		g.ready++
		g.metrics[pod.Name] = r.used
	}
	return g
}

// podRequest is what pod's containers and sidecars request of res, in
// milli-units.
func podRequest(pod *corev1.Pod, res corev1.ResourceName) (int64, error) {
	containers := slices.Clone(pod.Spec.Containers)
	for _, c := range pod.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			containers = append(containers, c)
		}
	}
	var request int64
	for _, c := range containers {
		r, ok := c.Resources.Requests[res]
		if !ok {
			return 0, fmt.Errorf("missing request for %s in container %s of Pod %s", res, c.Name, pod.Name)
		}
		request += r.MilliValue()
	}
	return request, nil
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
