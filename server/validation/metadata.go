package validation

import (
	"maps"
	"slices"
	"strings"

	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/server/decoded"
)

// objectMeta checks the labels and annotations of the metadata md, found
// at path: label keys and values, annotation keys. (kube-apiserver walks
// them in map order; they are checked here in key order.)
func objectMeta(md Object, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	labels := decoded.Child(md, "labels")
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		for _, msg := range utilvalidation.IsQualifiedName(k) {
			errs = append(errs, field.Invalid(path.Child("labels"), k, msg))
		}
		v, _ := labels[k].(string)
		for _, msg := range utilvalidation.IsValidLabelValue(v) {
			errs = append(errs, field.Invalid(path.Child("labels"), v, msg))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(decoded.Child(md, "annotations"))) {
		for _, msg := range utilvalidation.IsQualifiedName(strings.ToLower(k)) {
			errs = append(errs, field.Invalid(path.Child("annotations"), k, msg))
		}
	}
	return errs
}
