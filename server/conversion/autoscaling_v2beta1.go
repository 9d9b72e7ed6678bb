package conversion

import (
	"kubeplay/internal/jsonmap"
)

// HorizontalPodAutoscalers of autoscaling/v2beta1 (served until v1.24) are
// stored as v2 too. Their metrics have the shapes autoscaling/v1 keeps in
// its annotations (metricName, targetAverageValue ...); the behavior,
// which v2beta1 has no field for, goes to v1's behavior annotation.

// hpaToV2beta1 converts a v2 object, in place, to v2beta1.
func hpaToV2beta1(obj Object) {
	if spec := jsonmap.Child(obj, "spec"); spec != nil {
		if _, ok := spec["metrics"]; ok {
			var metrics []any
			for _, m := range jsonmap.Items(spec["metrics"]) {
				metrics = append(metrics, plain(raw(hpaMetricToV1(m))))
			}
			spec["metrics"] = metrics
		}
		if b := jsonmap.Child(spec, "behavior"); b != nil {
			setAnnotation(obj, hpaBehaviorAnnotation, hpaBehavior{ScaleUp: scalingRules(jsonmap.Child(b, "scaleUp")), ScaleDown: scalingRules(jsonmap.Child(b, "scaleDown"))})
			delete(spec, "behavior")
		}
	}
	if status := jsonmap.Child(obj, "status"); status != nil {
		if _, ok := status["currentMetrics"]; ok {
			var current []any
			for _, m := range jsonmap.Items(status["currentMetrics"]) {
				current = append(current, plain(raw(hpaMetricStatusToV1(m))))
			}
			status["currentMetrics"] = current
		}
	}
}

// hpaFromV2beta1 converts a v2beta1 object, in place, to v2.
func hpaFromV2beta1(obj Object) {
	annotations := jsonmap.Child(jsonmap.Ensure(obj, "metadata"), "annotations")
	if spec := jsonmap.Child(obj, "spec"); spec != nil {
		if _, ok := spec["metrics"]; ok {
			var metrics []any
			for _, m := range jsonmap.Items(spec["metrics"]) {
				var v1 hpaV1Metric
				if decodeNumbers(raw(m), &v1) == nil {
					metrics = append(metrics, hpaMetricFromV1(v1))
				}
			}
			spec["metrics"] = metrics
		}
		var b hpaBehavior
		if decodeNumbers([]byte(jsonmap.String(annotations, hpaBehaviorAnnotation)), &b) == nil {
			spec["behavior"] = plainBehavior(b)
		}
	}
	if status := jsonmap.Child(obj, "status"); status != nil {
		if _, ok := status["currentMetrics"]; ok {
			var current []any
			for _, m := range jsonmap.Items(status["currentMetrics"]) {
				var v1 hpaV1MetricStatus
				if decodeNumbers(raw(m), &v1) == nil {
					current = append(current, hpaMetricStatusFromV1(v1))
				}
			}
			status["currentMetrics"] = current
		}
	}
	delete(annotations, hpaBehaviorAnnotation)
	if annotations != nil && len(annotations) == 0 {
		delete(jsonmap.Ensure(obj, "metadata"), "annotations")
	}
}
