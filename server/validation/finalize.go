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
		errs = append(errs, finalizerName(f, path.Index(i))...)
	}
	return errs
}

// finalizerName checks the name of a finalizer a built-in object of the
// core group lists in its spec: a qualified name, and either a standard
// one or fully qualified.
func finalizerName(name string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range utilvalidation.IsQualifiedName(name) {
		errs = append(errs, field.Invalid(path, name, msg))
	}
	if !strings.Contains(name, "/") && !slices.Contains(standardFinalizers, name) {
		errs = append(errs, field.Invalid(path, name, "name is neither a standard finalizer name nor is it fully qualified"))
	}
	return errs
}
