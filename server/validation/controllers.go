package validation

import (
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/internal/jsonmap"
)

// ReplicationController checks a ReplicationController: its numbers, a
// selector (a label map, required, not itself validated) and its pod template (required).
func ReplicationController(obj Object) field.ErrorList {
	spec := jsonmap.Child(obj, "spec")
	errs := nonNegative(spec, specPath, "minReadySeconds")
	selector := jsonmap.Child(spec, "selector")
	if len(selector) == 0 {
		errs = append(errs, field.Required(selectorPath, ""))
	}
	if _, ok := spec["replicas"]; !ok {
		errs = append(errs, field.Required(specPath.Child("replicas"), ""))
	} else {
		errs = append(errs, nonNegative(spec, specPath, "replicas")...)
	}
	template, ok := spec["template"].(map[string]any)
	if !ok {
		return append(errs, field.Required(templatePath, ""))
	}
	if sel := labels.SelectorFromSet(stringMap(selector)); !sel.Empty() {
		errs = append(errs, templateMatches(template, sel)...)
	}
	return append(errs, alwaysRestarting(template, "ReplicationController")...)
}

// ReplicationControllerUpdate checks a ReplicationController's update: its
// spec as new.
func ReplicationControllerUpdate(obj, _ Object) field.ErrorList {
	return ReplicationController(obj)
}

// PodTemplate checks a PodTemplate's template: its metadata and pod spec.
func PodTemplate(obj Object) field.ErrorList {
	template := jsonmap.Child(obj, "template")
	path := field.NewPath("template")
	return append(objectMeta(jsonmap.Child(template, "metadata"), path), podSpec(jsonmap.Child(template, "spec"), path.Child("spec"))...)
}

// PodTemplateUpdate checks a PodTemplate's update: its template as new.
func PodTemplateUpdate(obj, _ Object) field.ErrorList { return PodTemplate(obj) }

// PodDisruptionBudget checks a PodDisruptionBudget: one of minAvailable and
// maxUnavailable, each a count or a percentage, and a valid selector.
func PodDisruptionBudget(obj Object) field.ErrorList {
	spec := jsonmap.Child(obj, "spec")
	var errs field.ErrorList
	_, hasMin := spec["minAvailable"]
	_, hasMax := spec["maxUnavailable"]
	if hasMin && hasMax {
		errs = append(errs, field.Invalid(specPath, internalPDBSpec(spec), "minAvailable and maxUnavailable cannot be both set"))
	}
	for _, k := range []string{"minAvailable", "maxUnavailable"} {
		if v, ok := spec[k]; ok {
			errs = append(errs, intOrPercent(v, specPath.Child(k))...)
			errs = append(errs, notOver100Percent(v, specPath.Child(k))...)
		}
	}
	if ls, ok := labelSelectorOf(spec["selector"]); ok {
		errs = append(errs, metav1validation.ValidateLabelSelector(ls, metav1validation.LabelSelectorValidationOptions{}, selectorPath)...)
	}
	switch policy, ok := spec["unhealthyPodEvictionPolicy"].(string); {
	case !ok, policy == "IfHealthyBudget", policy == "AlwaysAllow":
	default:
		errs = append(errs, field.NotSupported(specPath.Child("unhealthyPodEvictionPolicy"), policy, []string{"AlwaysAllow", "IfHealthyBudget"}))
	}
	return errs
}

// PodDisruptionBudgetUpdate checks a PodDisruptionBudget's update: its spec
// as new.
func PodDisruptionBudgetUpdate(obj, _ Object) field.ErrorList { return PodDisruptionBudget(obj) }

// internalPDBSpec is a PodDisruptionBudget's spec as kube-apiserver prints
// it (its Go type's fields).
func internalPDBSpec(spec Object) any {
	return struct {
		MinAvailable, Selector, MaxUnavailable, UnhealthyPodEvictionPolicy any
	}{spec["minAvailable"], spec["selector"], spec["maxUnavailable"], spec["unhealthyPodEvictionPolicy"]}
}
