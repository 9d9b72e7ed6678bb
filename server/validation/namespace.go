package validation

import (
	"slices"
	"strings"

	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/internal/jsonmap"
	"kubeplay/server/decoded"
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

// NamespaceFinalize checks an update of a Namespace's spec.finalizers
// through /finalize.
func NamespaceFinalize(obj, _ Object) field.ErrorList {
	var errs field.ErrorList
	for i, f := range jsonmap.Strings(obj, "spec", "finalizers") {
		errs = append(errs, finalizerName(f, specPath.Child("finalizers").Index(i))...)
	}
	return errs
}

// NamespaceStatus checks an update of a Namespace's status: Active until
// it is being deleted, Terminating after.
func NamespaceStatus(obj, _ Object) field.ErrorList {
	path := field.NewPath("status", "Phase") // the Go field's name, as kube-apiserver says it
	phase, _ := decoded.Child(obj, "status")["phase"].(string)
	if _, deleting := decoded.Child(obj, "metadata")["deletionTimestamp"]; deleting {
		if phase != "Terminating" {
			return field.ErrorList{field.Invalid(path, phase, "may only be 'Terminating' if `deletionTimestamp` is not empty")}
		}
	} else if phase != "Active" {
		return field.ErrorList{field.Invalid(path, phase, "may only be 'Active' if `deletionTimestamp` is empty")}
	}
	return nil
}

// finalizerName checks the name of a finalizer a built-in object of the
// core group lists in its spec.
func finalizerName(name string, path *field.Path) field.ErrorList {
	errs := apimachineryvalidation.ValidateFinalizerName(name, path)
	if !strings.Contains(name, "/") && !slices.Contains(standardFinalizers, name) {
		errs = append(errs, field.Invalid(path, name, "name is neither a standard finalizer name nor is it fully qualified"))
	}
	return errs
}
