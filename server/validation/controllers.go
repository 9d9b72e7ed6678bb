package validation

import (
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/server/decoded"
)

// ReplicationController checks a ReplicationController: its numbers, a
// selector (a label map, required, not itself validated) and its pod template (required).
func ReplicationController(obj Object) field.ErrorList {
	spec := decoded.Child(obj, "spec")
	errs := nonNegative(spec, specPath, "minReadySeconds")
	selector := decoded.Child(spec, "selector")
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
	template := decoded.Child(obj, "template")
	path := field.NewPath("template")
	return append(objectMeta(decoded.Child(template, "metadata"), path), podSpec(decoded.Child(template, "spec"), path.Child("spec"))...)
}

// PodTemplateUpdate checks a PodTemplate's update: its template as new.
func PodTemplateUpdate(obj, _ Object) field.ErrorList { return PodTemplate(obj) }
