package validation

import (
	"slices"
	"strings"

	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/internal/jsonmap"
)

// NamespaceFinalizers checks the spec.finalizers a namespace's /finalize
// writes: each a qualified name, and either a standard one or fully
// qualified (with a "/"), as kube-apiserver checks them.
func NamespaceFinalizers(obj Object) field.ErrorList {
	path := field.NewPath("spec", "finalizers")
	var errs field.ErrorList
	for i, f := range jsonmap.Strings(obj, "spec", "finalizers") {
		for _, msg := range utilvalidation.IsQualifiedName(f) {
			errs = append(errs, field.Invalid(path.Index(i), f, msg))
		}
		if !strings.Contains(f, "/") && !slices.Contains(standardFinalizers, f) {
			errs = append(errs, field.Invalid(path.Index(i), f, "name is neither a standard finalizer name nor is it fully qualified"))
		}
	}
	return errs
}
