package conversion

import (
	"bytes"
	"encoding/json"

	"kubeplay/internal/jsonmap"
)

// HorizontalPodAutoscalers are stored as autoscaling/v2 and served as v1 too.
// As kube-apiserver's conversion, v1 keeps the CPU utilization target in
// targetCPUUtilizationPercentage and carries what it has no field for in
// annotations, so that an object read and written back through v1 keeps it.
const (
	hpaMetricsAnnotation        = "autoscaling.alpha.kubernetes.io/metrics"
	hpaBehaviorAnnotation       = "autoscaling.alpha.kubernetes.io/behavior"
	hpaConditionsAnnotation     = "autoscaling.alpha.kubernetes.io/conditions"
	hpaCurrentMetricsAnnotation = "autoscaling.alpha.kubernetes.io/current-metrics"
)

// HPASpecAnnotations are the annotations in which autoscaling/v1 carries
// the v2 spec fields it has no field for: they change with the spec, not
// with the status.
var HPASpecAnnotations = []string{hpaMetricsAnnotation, hpaBehaviorAnnotation}

// The annotations hold autoscaling/v1's own metric types, in their JSON
// field order (learners read the annotations as text); the quantities
// without omitempty there are "0" when unset.
type hpaV1Metric struct {
	Type              string               `json:"type"`
	Object            *hpaV1ObjectMetric   `json:"object,omitempty"`
	Pods              *hpaV1PodsMetric     `json:"pods,omitempty"`
	Resource          *hpaV1Resource       `json:"resource,omitempty"`
	ContainerResource *hpaV1Container      `json:"containerResource,omitempty"`
	External          *hpaV1ExternalMetric `json:"external,omitempty"`
}

type hpaV1Ref struct {
	Kind       string `json:"kind"`
	Name       string `json:"name"`
	APIVersion string `json:"apiVersion,omitempty"`
}

type hpaV1ObjectMetric struct {
	Target       hpaV1Ref        `json:"target"`
	MetricName   string          `json:"metricName"`
	TargetValue  any             `json:"targetValue"`
	Selector     json.RawMessage `json:"selector,omitempty"`
	AverageValue any             `json:"averageValue,omitempty"`
}

type hpaV1PodsMetric struct {
	MetricName         string          `json:"metricName"`
	TargetAverageValue any             `json:"targetAverageValue"`
	Selector           json.RawMessage `json:"selector,omitempty"`
}

type hpaV1Resource struct {
	Name                     string `json:"name"`
	TargetAverageUtilization any    `json:"targetAverageUtilization,omitempty"`
	TargetAverageValue       any    `json:"targetAverageValue,omitempty"`
}

type hpaV1Container struct {
	Name                     string `json:"name"`
	TargetAverageUtilization any    `json:"targetAverageUtilization,omitempty"`
	TargetAverageValue       any    `json:"targetAverageValue,omitempty"`
	Container                string `json:"container"`
}

type hpaV1ExternalMetric struct {
	MetricName         string          `json:"metricName"`
	MetricSelector     json.RawMessage `json:"metricSelector,omitempty"`
	TargetValue        any             `json:"targetValue,omitempty"`
	TargetAverageValue any             `json:"targetAverageValue,omitempty"`
}

type hpaV1MetricStatus struct {
	Type              string                `json:"type"`
	Object            *hpaV1ObjectStatus    `json:"object,omitempty"`
	Pods              *hpaV1PodsStatus      `json:"pods,omitempty"`
	Resource          *hpaV1ResourceStatus  `json:"resource,omitempty"`
	ContainerResource *hpaV1ContainerStatus `json:"containerResource,omitempty"`
	External          *hpaV1ExternalStatus  `json:"external,omitempty"`
}

type hpaV1ObjectStatus struct {
	Target       hpaV1Ref        `json:"target"`
	MetricName   string          `json:"metricName"`
	CurrentValue any             `json:"currentValue"`
	Selector     json.RawMessage `json:"selector,omitempty"`
	AverageValue any             `json:"averageValue,omitempty"`
}

type hpaV1PodsStatus struct {
	MetricName          string          `json:"metricName"`
	CurrentAverageValue any             `json:"currentAverageValue"`
	Selector            json.RawMessage `json:"selector,omitempty"`
}

type hpaV1ResourceStatus struct {
	Name                      string `json:"name"`
	CurrentAverageUtilization any    `json:"currentAverageUtilization,omitempty"`
	CurrentAverageValue       any    `json:"currentAverageValue"`
}

type hpaV1ContainerStatus struct {
	Name                      string `json:"name"`
	CurrentAverageUtilization any    `json:"currentAverageUtilization,omitempty"`
	CurrentAverageValue       any    `json:"currentAverageValue"`
	Container                 string `json:"container"`
}

type hpaV1ExternalStatus struct {
	MetricName          string          `json:"metricName"`
	MetricSelector      json.RawMessage `json:"metricSelector,omitempty"`
	CurrentValue        any             `json:"currentValue"`
	CurrentAverageValue any             `json:"currentAverageValue,omitempty"`
}

type hpaV1Condition struct {
	Type               any `json:"type"`
	Status             any `json:"status"`
	LastTransitionTime any `json:"lastTransitionTime,omitempty"`
	Reason             any `json:"reason,omitempty"`
	Message            any `json:"message,omitempty"`
}

// The behavior annotation is kube-apiserver's internal type, which has no
// JSON tags: Go field names, every field present.
type hpaBehavior struct {
	ScaleUp   *hpaScalingRules
	ScaleDown *hpaScalingRules
}

type hpaScalingRules struct {
	StabilizationWindowSeconds any
	SelectPolicy               any
	Policies                   []hpaScalingPolicy
	Tolerance                  any
}

type hpaScalingPolicy struct {
	Type          string
	Value         json.Number
	PeriodSeconds json.Number
}

// raw is v as JSON, or nil when v is absent.
func raw(v any) json.RawMessage {
	if v == nil {
		return nil
	}
	b, _ := json.Marshal(v)
	return b
}

// plain decodes JSON into the values the engine holds objects in (maps,
// json.Number numbers); nil for absent or invalid.
func plain(b json.RawMessage) any {
	var v any
	if len(b) == 0 || decodeNumbers(b, &v) != nil {
		return nil
	}
	return v
}

func decodeNumbers(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	return d.Decode(v)
}

// zeroQuantity stands for a quantity v1 always serializes; unzero undoes
// it, where v2 leaves the quantity out.
func zeroQuantity(v any) any {
	if v == nil {
		return "0"
	}
	return v
}

func unzero(v any) any {
	if v == "0" {
		return nil
	}
	return v
}

func refToV1(v map[string]any) hpaV1Ref {
	return hpaV1Ref{Kind: jsonmap.String(v, "kind"), Name: jsonmap.String(v, "name"), APIVersion: jsonmap.String(v, "apiVersion")}
}

func refFromV1(r hpaV1Ref) map[string]any {
	out := map[string]any{"kind": r.Kind, "name": r.Name}
	if r.APIVersion != "" {
		out["apiVersion"] = r.APIVersion
	}
	return out
}

// nonNil returns the map of kv's pairs whose values are not nil.
func nonNil(kv ...any) map[string]any {
	out := map[string]any{}
	for i := 0; i < len(kv); i += 2 {
		if kv[i+1] != nil {
			out[kv[i].(string)] = kv[i+1]
		}
	}
	return out
}

func metricIdentifier(name string, selector json.RawMessage) map[string]any {
	return nonNil("name", name, "selector", plain(selector))
}

// hpaToV1 converts a stored (v2) Object, in place, to v1, moving what v1
// cannot express into annotations.
func hpaToV1(obj Object) {
	if spec := jsonmap.Child(obj, "spec"); spec != nil {
		var others []hpaV1Metric
		for _, m := range jsonmap.Items(spec["metrics"]) {
			res := jsonmap.Child(m, "resource")
			target := jsonmap.Child(res, "target")
			if m["type"] == "Resource" && res["name"] == "cpu" && target["type"] == "Utilization" && spec["targetCPUUtilizationPercentage"] == nil {
				spec["targetCPUUtilizationPercentage"] = target["averageUtilization"]
				continue
			}
			others = append(others, hpaMetricToV1(m))
		}
		delete(spec, "metrics")
		if len(others) > 0 {
			setAnnotation(obj, hpaMetricsAnnotation, others)
		}
		if b := jsonmap.Child(spec, "behavior"); b != nil {
			setAnnotation(obj, hpaBehaviorAnnotation, hpaBehavior{ScaleUp: scalingRules(jsonmap.Child(b, "scaleUp")), ScaleDown: scalingRules(jsonmap.Child(b, "scaleDown"))})
			delete(spec, "behavior")
		}
	}
	status := jsonmap.Child(obj, "status")
	if status == nil {
		return
	}
	var current []hpaV1MetricStatus
	for _, m := range jsonmap.Items(status["currentMetrics"]) {
		res := jsonmap.Child(m, "resource")
		if u := jsonmap.Child(res, "current")["averageUtilization"]; m["type"] == "Resource" && res["name"] == "cpu" && u != nil {
			status["currentCPUUtilizationPercentage"] = u
		}
		current = append(current, hpaMetricStatusToV1(m))
	}
	delete(status, "currentMetrics")
	if len(current) > 0 {
		setAnnotation(obj, hpaCurrentMetricsAnnotation, current)
	}
	var conditions []hpaV1Condition
	for _, c := range jsonmap.Items(status["conditions"]) {
		conditions = append(conditions, hpaV1Condition{Type: c["type"], Status: c["status"], LastTransitionTime: c["lastTransitionTime"], Reason: c["reason"], Message: c["message"]})
	}
	delete(status, "conditions")
	if len(conditions) > 0 {
		setAnnotation(obj, hpaConditionsAnnotation, conditions)
	}
	// v1's currentReplicas is always serialized.
	if status["currentReplicas"] == nil {
		status["currentReplicas"] = json.Number("0")
	}
}

func scalingRules(r map[string]any) *hpaScalingRules {
	if r == nil {
		return nil
	}
	out := &hpaScalingRules{StabilizationWindowSeconds: r["stabilizationWindowSeconds"], SelectPolicy: r["selectPolicy"], Tolerance: r["tolerance"]}
	for _, p := range jsonmap.Items(r["policies"]) {
		out.Policies = append(out.Policies, hpaScalingPolicy{Type: jsonmap.String(p, "type"), Value: number(p["value"]), PeriodSeconds: number(p["periodSeconds"])})
	}
	return out
}

func hpaMetricToV1(m map[string]any) hpaV1Metric {
	out := hpaV1Metric{Type: jsonmap.String(m, "type")}
	switch out.Type {
	case "Resource":
		src := jsonmap.Child(m, "resource")
		t := jsonmap.Child(src, "target")
		out.Resource = &hpaV1Resource{Name: jsonmap.String(src, "name"), TargetAverageUtilization: t["averageUtilization"], TargetAverageValue: t["averageValue"]}
	case "ContainerResource":
		src := jsonmap.Child(m, "containerResource")
		t := jsonmap.Child(src, "target")
		out.ContainerResource = &hpaV1Container{Name: jsonmap.String(src, "name"), TargetAverageUtilization: t["averageUtilization"], TargetAverageValue: t["averageValue"], Container: jsonmap.String(src, "container")}
	case "Pods":
		src := jsonmap.Child(m, "pods")
		metric := jsonmap.Child(src, "metric")
		out.Pods = &hpaV1PodsMetric{MetricName: jsonmap.String(metric, "name"), TargetAverageValue: zeroQuantity(jsonmap.Child(src, "target")["averageValue"]), Selector: raw(metric["selector"])}
	case "Object":
		src := jsonmap.Child(m, "object")
		metric, t := jsonmap.Child(src, "metric"), jsonmap.Child(src, "target")
		out.Object = &hpaV1ObjectMetric{Target: refToV1(jsonmap.Child(src, "describedObject")), MetricName: jsonmap.String(metric, "name"), TargetValue: zeroQuantity(t["value"]), Selector: raw(metric["selector"]), AverageValue: t["averageValue"]}
	case "External":
		src := jsonmap.Child(m, "external")
		metric, t := jsonmap.Child(src, "metric"), jsonmap.Child(src, "target")
		out.External = &hpaV1ExternalMetric{MetricName: jsonmap.String(metric, "name"), MetricSelector: raw(metric["selector"]), TargetValue: t["value"], TargetAverageValue: t["averageValue"]}
	}
	return out
}

func hpaMetricStatusToV1(m map[string]any) hpaV1MetricStatus {
	out := hpaV1MetricStatus{Type: jsonmap.String(m, "type")}
	switch out.Type {
	case "Resource":
		src := jsonmap.Child(m, "resource")
		c := jsonmap.Child(src, "current")
		out.Resource = &hpaV1ResourceStatus{Name: jsonmap.String(src, "name"), CurrentAverageUtilization: c["averageUtilization"], CurrentAverageValue: zeroQuantity(c["averageValue"])}
	case "ContainerResource":
		src := jsonmap.Child(m, "containerResource")
		c := jsonmap.Child(src, "current")
		out.ContainerResource = &hpaV1ContainerStatus{Name: jsonmap.String(src, "name"), CurrentAverageUtilization: c["averageUtilization"], CurrentAverageValue: zeroQuantity(c["averageValue"]), Container: jsonmap.String(src, "container")}
	case "Pods":
		src := jsonmap.Child(m, "pods")
		metric := jsonmap.Child(src, "metric")
		out.Pods = &hpaV1PodsStatus{MetricName: jsonmap.String(metric, "name"), CurrentAverageValue: zeroQuantity(jsonmap.Child(src, "current")["averageValue"]), Selector: raw(metric["selector"])}
	case "Object":
		src := jsonmap.Child(m, "object")
		metric, c := jsonmap.Child(src, "metric"), jsonmap.Child(src, "current")
		out.Object = &hpaV1ObjectStatus{Target: refToV1(jsonmap.Child(src, "describedObject")), MetricName: jsonmap.String(metric, "name"), CurrentValue: zeroQuantity(c["value"]), Selector: raw(metric["selector"]), AverageValue: c["averageValue"]}
	case "External":
		src := jsonmap.Child(m, "external")
		metric, c := jsonmap.Child(src, "metric"), jsonmap.Child(src, "current")
		out.External = &hpaV1ExternalStatus{MetricName: jsonmap.String(metric, "name"), MetricSelector: raw(metric["selector"]), CurrentValue: zeroQuantity(c["value"]), CurrentAverageValue: c["averageValue"]}
	}
	return out
}

// hpaFromV1 converts a v1 object, in place, to v2, taking back from the
// annotations what v1 could not hold.
func hpaFromV1(obj Object) {
	annotations := jsonmap.Child(jsonmap.Ensure(obj, "metadata"), "annotations")
	if spec := jsonmap.Child(obj, "spec"); spec != nil {
		var metrics []any
		var others []hpaV1Metric
		if decodeNumbers([]byte(jsonmap.String(annotations, hpaMetricsAnnotation)), &others) == nil {
			for _, m := range others {
				metrics = append(metrics, hpaMetricFromV1(m))
			}
		}
		// As kube-apiserver's conversion: the CPU target comes last.
		if cpu := spec["targetCPUUtilizationPercentage"]; cpu != nil {
			metrics = append(metrics, cpuMetric(cpu))
		}
		delete(spec, "targetCPUUtilizationPercentage")
		if metrics != nil {
			spec["metrics"] = metrics
		}
		var b hpaBehavior
		if decodeNumbers([]byte(jsonmap.String(annotations, hpaBehaviorAnnotation)), &b) == nil {
			spec["behavior"] = plainBehavior(b)
		}
	}
	if status := jsonmap.Child(obj, "status"); status != nil {
		var current []any
		var fromAnnotation []hpaV1MetricStatus
		hasCPU := false
		if decodeNumbers([]byte(jsonmap.String(annotations, hpaCurrentMetricsAnnotation)), &fromAnnotation) == nil {
			for _, m := range fromAnnotation {
				hasCPU = hasCPU || m.Resource != nil && m.Resource.Name == "cpu"
				current = append(current, hpaMetricStatusFromV1(m))
			}
		}
		if cpu := status["currentCPUUtilizationPercentage"]; cpu != nil && !hasCPU {
			current = append(current, map[string]any{"type": "Resource", "resource": map[string]any{"name": "cpu", "current": map[string]any{"averageUtilization": cpu}}})
		}
		delete(status, "currentCPUUtilizationPercentage")
		// v2 serializes currentMetrics always (null when there are none)
		// and currentReplicas only when not 0.
		status["currentMetrics"] = current
		if n, _ := jsonmap.IntOf(status["currentReplicas"]); n == 0 {
			delete(status, "currentReplicas")
		}
		var conditions []hpaV1Condition
		if decodeNumbers([]byte(jsonmap.String(annotations, hpaConditionsAnnotation)), &conditions) == nil {
			var list []any
			for _, c := range conditions {
				list = append(list, nonNil("type", c.Type, "status", c.Status, "lastTransitionTime", c.LastTransitionTime, "reason", c.Reason, "message", c.Message))
			}
			status["conditions"] = list
		}
	}
	for _, k := range []string{hpaMetricsAnnotation, hpaBehaviorAnnotation, hpaConditionsAnnotation, hpaCurrentMetricsAnnotation} {
		delete(annotations, k)
	}
	if annotations != nil && len(annotations) == 0 {
		delete(jsonmap.Ensure(obj, "metadata"), "annotations")
	}
}

func cpuMetric(utilization any) map[string]any {
	return map[string]any{"type": "Resource", "resource": map[string]any{"name": "cpu", "target": map[string]any{"type": "Utilization", "averageUtilization": utilization}}}
}

// valueTarget is the v2 target of a v1 metric with a value and an average
// value: the average when set.
func valueTarget(value, average any) map[string]any {
	if average != nil {
		return nonNil("type", "AverageValue", "averageValue", average)
	}
	return nonNil("type", "Value", "value", value)
}

func utilizationTarget(utilization, average any) map[string]any {
	if utilization != nil {
		return nonNil("type", "Utilization", "averageUtilization", utilization)
	}
	return nonNil("type", "AverageValue", "averageValue", average)
}

func hpaMetricFromV1(m hpaV1Metric) map[string]any {
	out := map[string]any{"type": m.Type}
	switch {
	case m.Resource != nil:
		out["resource"] = map[string]any{"name": m.Resource.Name, "target": utilizationTarget(m.Resource.TargetAverageUtilization, m.Resource.TargetAverageValue)}
	case m.ContainerResource != nil:
		c := m.ContainerResource
		out["containerResource"] = map[string]any{"name": c.Name, "container": c.Container, "target": utilizationTarget(c.TargetAverageUtilization, c.TargetAverageValue)}
	case m.Pods != nil:
		out["pods"] = map[string]any{"metric": metricIdentifier(m.Pods.MetricName, m.Pods.Selector), "target": nonNil("type", "AverageValue", "averageValue", m.Pods.TargetAverageValue)}
	case m.Object != nil:
		out["object"] = map[string]any{"describedObject": refFromV1(m.Object.Target), "metric": metricIdentifier(m.Object.MetricName, m.Object.Selector), "target": valueTarget(unzero(m.Object.TargetValue), m.Object.AverageValue)}
	case m.External != nil:
		out["external"] = map[string]any{"metric": metricIdentifier(m.External.MetricName, m.External.MetricSelector), "target": valueTarget(m.External.TargetValue, m.External.TargetAverageValue)}
	}
	return out
}

func hpaMetricStatusFromV1(m hpaV1MetricStatus) map[string]any {
	out := map[string]any{"type": m.Type}
	switch {
	case m.Resource != nil:
		out["resource"] = map[string]any{"name": m.Resource.Name, "current": nonNil("averageUtilization", m.Resource.CurrentAverageUtilization, "averageValue", unzero(m.Resource.CurrentAverageValue))}
	case m.ContainerResource != nil:
		c := m.ContainerResource
		out["containerResource"] = map[string]any{"name": c.Name, "container": c.Container, "current": nonNil("averageUtilization", c.CurrentAverageUtilization, "averageValue", unzero(c.CurrentAverageValue))}
	case m.Pods != nil:
		out["pods"] = map[string]any{"metric": metricIdentifier(m.Pods.MetricName, m.Pods.Selector), "current": nonNil("averageValue", m.Pods.CurrentAverageValue)}
	case m.Object != nil:
		out["object"] = map[string]any{"describedObject": refFromV1(m.Object.Target), "metric": metricIdentifier(m.Object.MetricName, m.Object.Selector), "current": nonNil("value", unzero(m.Object.CurrentValue), "averageValue", m.Object.AverageValue)}
	case m.External != nil:
		out["external"] = map[string]any{"metric": metricIdentifier(m.External.MetricName, m.External.MetricSelector), "current": nonNil("value", unzero(m.External.CurrentValue), "averageValue", m.External.CurrentAverageValue)}
	}
	return out
}

func plainBehavior(b hpaBehavior) map[string]any {
	out := map[string]any{}
	for k, r := range map[string]*hpaScalingRules{"scaleUp": b.ScaleUp, "scaleDown": b.ScaleDown} {
		if r == nil {
			continue
		}
		rules := nonNil("stabilizationWindowSeconds", r.StabilizationWindowSeconds, "selectPolicy", r.SelectPolicy, "tolerance", r.Tolerance)
		var policies []any
		for _, p := range r.Policies {
			policies = append(policies, map[string]any{"type": p.Type, "value": p.Value, "periodSeconds": p.PeriodSeconds})
		}
		if policies != nil {
			rules["policies"] = policies
		}
		out[k] = rules
	}
	return out
}

func setAnnotation(obj Object, key string, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	md := jsonmap.Ensure(obj, "metadata")
	a, _ := md["annotations"].(map[string]any)
	if a == nil {
		a = map[string]any{}
		md["annotations"] = a
	}
	a[key] = string(b)
}

func number(v any) json.Number {
	n, _ := v.(json.Number)
	return n
}
