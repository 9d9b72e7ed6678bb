package validation

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/server/decoded"
)

// horizontalPodAutoscaler checks an HPA's bounds and target.
func horizontalPodAutoscaler(spec Object) field.ErrorList {
	var errs field.ErrorList
	ref := decoded.Child(spec, "scaleTargetRef")
	refPath := specPath.Child("scaleTargetRef")
	if str(ref, "kind") == "" {
		errs = append(errs, field.Required(refPath.Child("kind"), ""))
	}
	if str(ref, "name") == "" {
		errs = append(errs, field.Required(refPath.Child("name"), ""))
	}
	if str(ref, "apiVersion") == "" {
		errs = append(errs, field.Invalid(refPath.Child("apiVersion"), "", "apiVersion must specify API group"))
	}
	if min, max := intOf(spec["minReplicas"]), intOf(spec["maxReplicas"]); max < min {
		errs = append(errs, field.Invalid(specPath.Child("maxReplicas"), max, "must be greater than or equal to `minReplicas`"))
	}
	return errs
}
