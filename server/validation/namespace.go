package validation

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/internal/jsonmap"
)

// Namespace checks a new Namespace's spec.finalizers (reported without
// their index, as kube-apiserver does on create).
func Namespace(obj Object) field.ErrorList {
	var errs field.ErrorList
	for _, f := range jsonmap.Strings(obj, "spec", "finalizers") {
		errs = append(errs, finalizerName(f, specPath.Child("finalizers"))...)
	}
	return errs
}

// NamespaceStatus checks a Namespace updated through /status: Active
// until it is being deleted, Terminating after.
func NamespaceStatus(obj Object) field.ErrorList {
	path := field.NewPath("status", "Phase") // the Go field's name, as kube-apiserver says it
	phase, _ := jsonmap.Child(obj, "status")["phase"].(string)
	if _, deleting := jsonmap.Child(obj, "metadata")["deletionTimestamp"]; deleting {
		if phase != "Terminating" {
			return field.ErrorList{field.Invalid(path, phase, "may only be 'Terminating' if `deletionTimestamp` is not empty")}
		}
	} else if phase != "Active" {
		return field.ErrorList{field.Invalid(path, phase, "may only be 'Active' if `deletionTimestamp` is empty")}
	}
	return nil
}
