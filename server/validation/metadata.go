package validation

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/internal/jsonmap"
)

var metadataPath = field.NewPath("metadata")

// objectMeta checks the labels and annotations of the metadata md, found
// at path: label keys and values, annotation keys. (kube-apiserver walks
// them in map order; they are checked here in key order.)
func objectMeta(md Object, path *field.Path) field.ErrorList {
	errs := labelMap(jsonmap.Child(md, "labels"), path.Child("labels"))
	for _, k := range slices.Sorted(maps.Keys(jsonmap.Child(md, "annotations"))) {
		for _, msg := range utilvalidation.IsQualifiedName(strings.ToLower(k)) {
			errs = append(errs, field.Invalid(path.Child("annotations"), k, msg))
		}
	}
	return errs
}

// labelMap checks labels (or a selector of labels) at path: qualified
// keys, label values.
func labelMap(labels Object, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		for _, msg := range utilvalidation.IsQualifiedName(k) {
			errs = append(errs, field.Invalid(path, k, msg))
		}
		v, _ := labels[k].(string)
		for _, msg := range utilvalidation.IsValidLabelValue(v) {
			errs = append(errs, field.Invalid(path, v, msg))
		}
	}
	return errs
}

// Finalizers checks an object's finalizers as kube-apiserver's generic
// metadata validation does: each a qualified name, and not both cascade
// finalizers at once.
func Finalizers(obj Object) field.ErrorList {
	path := metadataPath.Child("finalizers")
	list := finalizerNames(obj)
	var errs field.ErrorList
	for _, f := range list {
		for _, msg := range utilvalidation.IsQualifiedName(f) {
			errs = append(errs, field.Invalid(path, f, msg))
		}
	}
	if slices.Contains(list, metav1.FinalizerOrphanDependents) && slices.Contains(list, metav1.FinalizerDeleteDependents) {
		errs = append(errs, field.Invalid(path, list, fmt.Sprintf("finalizer %s and %s cannot be both set", metav1.FinalizerOrphanDependents, metav1.FinalizerDeleteDependents)))
	}
	return errs
}

// standardFinalizers are the finalizer names a built-in object may carry
// without a domain.
var standardFinalizers = []string{"kubernetes", metav1.FinalizerOrphanDependents, metav1.FinalizerDeleteDependents}

// KubeFinalizerNames checks what the core API group's metadata validation
// adds (and most built-in groups use): a finalizer without a "/" must be a
// standard one. Custom resources get a warning instead.
func KubeFinalizerNames(obj Object) field.ErrorList {
	var errs field.ErrorList
	for i, f := range finalizerNames(obj) {
		if !strings.Contains(f, "/") && !slices.Contains(standardFinalizers, f) {
			errs = append(errs, field.Invalid(metadataPath.Child("finalizers").Index(i), f, "name is neither a standard finalizer name nor is it fully qualified"))
		}
	}
	return errs
}

// MetadataOnUpdate is the metadata validation of an update as
// kube-apiserver reports it: its generic registry checks labels and
// annotations twice and finalizers once; then the type's update validation
// checks the metadata's changes (checksChanges: labels and annotations
// once more) and the object as new (revalidates: labels, annotations and
// finalizers once more), each adding KubeFinalizerNames when
// kubeFinalizers.
func MetadataOnUpdate(obj Object, checksChanges, revalidates, kubeFinalizers bool) field.ErrorList {
	md := jsonmap.Child(obj, "metadata")
	generic := objectMeta(md, metadataPath)
	errs := append(append(generic, generic...), Finalizers(obj)...)
	var kube field.ErrorList
	if kubeFinalizers {
		kube = KubeFinalizerNames(obj)
	}
	if checksChanges {
		errs = append(append(errs, objectMeta(md, metadataPath)...), kube...)
	}
	if revalidates {
		errs = append(append(append(errs, objectMeta(md, metadataPath)...), Finalizers(obj)...), kube...)
	}
	return errs
}

func finalizerNames(obj Object) []string {
	return jsonmap.Strings(obj, "metadata", "finalizers")
}
