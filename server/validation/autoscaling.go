package validation

import (
	"k8s.io/apimachinery/pkg/api/validation/path"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/internal/jsonmap"
)

// metricSources are the metric source types an HPA knows, each with the
// field that describes it.
var metricSources = map[string]string{
	"ContainerResource": "containerResource", "External": "external", "Object": "object", "Pods": "pods", "Resource": "resource",
}

var metricSourceTypes = []string{"ContainerResource", "External", "Object", "Pods", "Resource"}

// horizontalPodAutoscaler checks an HPA's bounds, target and (in the
// autoscaling/v2 shape, withMetrics) its metrics.
func horizontalPodAutoscaler(spec Object, withMetrics bool) field.ErrorList {
	var errs field.ErrorList
	min, hasMin := jsonmap.IntOf(spec["minReplicas"])
	if hasMin && min < 1 {
		errs = append(errs, field.Invalid(specPath.Child("minReplicas"), min, "must be greater than or equal to 1"))
	}
	max := intOf(spec["maxReplicas"])
	if max < 1 {
		errs = append(errs, field.Invalid(specPath.Child("maxReplicas"), max, "must be greater than 0"))
	}
	if hasMin && max < min {
		errs = append(errs, field.Invalid(specPath.Child("maxReplicas"), max, "must be greater than or equal to `minReplicas`"))
	}
	errs = append(errs, scaleTargetRef(jsonmap.Child(spec, "scaleTargetRef"), specPath.Child("scaleTargetRef"))...)
	if !withMetrics {
		return errs
	}
	scalesToZero := true
	for i, m := range jsonmap.Items(spec["metrics"]) {
		errs = append(errs, metric(m, specPath.Child("metrics").Index(i))...)
		if t := str(m, "type"); t == "Object" || t == "External" {
			scalesToZero = false
		}
	}
	if hasMin && min == 0 && scalesToZero {
		errs = append(errs, field.Forbidden(specPath.Child("metrics"), "must specify at least one Object or External metric to support scaling to zero replicas"))
	}
	return errs
}

// scaleTargetRef checks what an HPA scales: a kind and name that are path
// segments, an apiVersion with a group.
func scaleTargetRef(ref Object, at *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, k := range []string{"kind", "name"} {
		v := str(ref, k)
		if v == "" {
			errs = append(errs, field.Required(at.Child(k), ""))
			continue
		}
		for _, msg := range path.IsValidPathSegmentName(v) {
			errs = append(errs, field.Invalid(at.Child(k), v, msg))
		}
	}
	apiVersion, _ := ref["apiVersion"].(string)
	if gv, err := schema.ParseGroupVersion(apiVersion); err != nil {
		errs = append(errs, field.Invalid(at.Child("apiVersion"), apiVersion, err.Error()))
	} else if gv.Group == "" {
		errs = append(errs, field.Invalid(at.Child("apiVersion"), apiVersion, "apiVersion must specify API group"))
	}
	return errs
}

// metric checks one of an HPA's metrics: a known type, described by its
// field alone (a resource metric: its name and target).
func metric(m Object, at *field.Path) field.ErrorList {
	var errs field.ErrorList
	typ := str(m, "type")
	if typ == "" {
		errs = append(errs, field.Required(at.Child("type"), "must specify a metric source type"))
	}
	if _, known := metricSources[typ]; !known {
		errs = append(errs, field.NotSupported(at.Child("type"), typ, metricSourceTypes))
	}
	var present []string
	for _, t := range metricSourceTypes {
		if src, ok := m[metricSources[t]].(map[string]any); ok {
			present = append(present, metricSources[t])
			if len(present) == 1 && t == "Resource" {
				errs = append(errs, resourceMetric(src, at.Child("resource"))...)
			}
		}
	}
	expected, known := metricSources[typ]
	switch {
	case !known:
		errs = append(errs, field.NotSupported(at.Child("type"), typ, metricSourceTypes))
	case m[expected] == nil:
		errs = append(errs, field.Required(at.Child(expected), "must populate information for the given metric source"))
	}
	if len(present) > 1 {
		for _, p := range present {
			if p != expected {
				errs = append(errs, field.Forbidden(at.Child(p), "must populate the given metric source only"))
			}
		}
	}
	return errs
}

// resourceMetric checks a resource metric: a resource name and a target.
func resourceMetric(src Object, at *field.Path) field.ErrorList {
	var errs field.ErrorList
	if str(src, "name") == "" {
		errs = append(errs, field.Required(at.Child("name"), "must specify a resource name"))
	}
	target := jsonmap.Child(src, "target")
	tp := at.Child("target")
	typ := str(target, "type")
	if typ == "" {
		errs = append(errs, field.Required(tp.Child("type"), "must specify a metric target type"))
	}
	if typ != "Utilization" && typ != "Value" && typ != "AverageValue" {
		errs = append(errs, field.Invalid(tp.Child("type"), typ, "must be either Utilization, Value, or AverageValue"))
	}
	for _, k := range []string{"value", "averageValue"} {
		if q, ok := jsonmap.Quantity(target[k]); ok && q.Sign() != 1 {
			errs = append(errs, field.Invalid(tp.Child(k), q.String(), "must be positive"))
		}
	}
	utilization, hasUtilization := jsonmap.IntOf(target["averageUtilization"])
	if hasUtilization && utilization < 1 {
		errs = append(errs, field.Invalid(tp.Child("averageUtilization"), utilization, "must be greater than 0"))
	}
	_, hasAverage := target["averageValue"]
	switch {
	case !hasUtilization && !hasAverage:
		errs = append(errs, field.Required(tp.Child("averageUtilization"), "must set either a target raw value or a target utilization"))
	case hasUtilization && hasAverage:
		errs = append(errs, field.Forbidden(tp.Child("averageValue"), "may not set both a target raw value and a target utilization"))
	}
	return errs
}
