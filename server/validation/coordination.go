package validation

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/internal/jsonmap"
)

// Lease checks a Lease's spec: a positive duration, transitions counted
// from 0.
func Lease(obj Object) field.ErrorList {
	spec := jsonmap.Child(obj, "spec")
	var errs field.ErrorList
	if n, ok := jsonmap.IntOf(spec["leaseDurationSeconds"]); ok && n <= 0 {
		errs = append(errs, field.Invalid(specPath.Child("leaseDurationSeconds"), n, "must be greater than 0"))
	}
	return append(errs, nonNegative(spec, specPath, "leaseTransitions")...)
}

// LeaseUpdate checks a Lease's update: the Lease as new.
func LeaseUpdate(obj, _ Object) field.ErrorList { return Lease(obj) }
