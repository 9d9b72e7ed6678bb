package validation

import (
	"bytes"
	"fmt"
	"math"
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/internal/jsonmap"
)

// podUpdatable are the fields of a Pod's spec an update may change, as
// kube-apiserver's message names them.
var podUpdatable = []string{
	"`spec.containers[*].image`",
	"`spec.initContainers[*].image`",
	"`spec.activeDeadlineSeconds`",
	"`spec.tolerations` (only additions to existing tolerations)",
	"`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
}

// PodUpdate checks what an update of a Pod may change: as many containers,
// each with an image; an active deadline set, or lowered; tolerations only
// added; and nothing else of its spec (the message shows the difference
// as kube-apiserver does, in its internal types).
func PodUpdate(obj, old Object) field.ErrorList {
	spec, oldSpec := jsonmap.Child(obj, "spec"), jsonmap.Child(old, "spec")
	var errs field.ErrorList
	for _, list := range []string{"containers", "initContainers"} {
		containers := jsonmap.Items(spec[list])
		path := specPath.Child(list)
		if len(containers) != len(jsonmap.Items(oldSpec[list])) {
			return append(errs, field.Forbidden(path, "pod updates may not add or remove containers"))
		}
		for i, c := range containers {
			image, _ := c["image"].(string)
			if image == "" {
				errs = append(errs, field.Required(path.Index(i).Child("image"), ""))
			}
			if strings.TrimSpace(image) != image {
				errs = append(errs, field.Invalid(path.Index(i).Child("image"), image, "must not have leading or trailing whitespace"))
			}
		}
	}
	deadline := specPath.Child("activeDeadlineSeconds")
	if n, ok := jsonmap.IntOf(spec["activeDeadlineSeconds"]); ok {
		if n < 0 || n > math.MaxInt32 {
			return append(errs, field.Invalid(deadline, n, fmt.Sprintf("must be between %d and %d, inclusive", 0, math.MaxInt32)))
		}
		if was, ok := jsonmap.IntOf(oldSpec["activeDeadlineSeconds"]); ok && was < n {
			return append(errs, field.Invalid(deadline, n, "must be less than or equal to previous value"))
		}
	} else if _, was := oldSpec["activeDeadlineSeconds"]; was {
		errs = append(errs, field.Invalid(deadline, nil, "must not update from a positive integer to nil value"))
	}
	errs = append(errs, onlyAddedTolerations(jsonmap.Items(spec["tolerations"]), jsonmap.Items(oldSpec["tolerations"]))...)
	// Compared as kube-apiserver compares them, in its internal types
	// (which lack, say, the deprecated serviceAccount).
	was, now := internalJSON("core.PodSpec", oldSpec), internalJSON("core.PodSpec", mungedPodSpec(spec, oldSpec))
	if !bytes.Equal(was, now) {
		errs = append(errs, field.Forbidden(specPath, "pod updates may not change fields other than "+strings.Join(podUpdatable, ",")+"\n"+diff.Diff(was, now)))
	}
	return errs
}

// mungedPodSpec is spec with what an update may change taken from oldSpec.
func mungedPodSpec(spec, oldSpec Object) Object {
	munged := deepCopy(spec)
	for _, list := range []string{"containers", "initContainers"} {
		old := jsonmap.Items(oldSpec[list])
		for i, c := range jsonmap.Items(munged[list]) {
			setOrDelete(c, "image", old[i])
		}
	}
	for _, k := range []string{"activeDeadlineSeconds", "tolerations", "schedulingGates"} {
		setOrDelete(munged, k, oldSpec)
	}
	if was, _ := jsonmap.IntOf(oldSpec["terminationGracePeriodSeconds"]); was < 0 && intOf(munged["terminationGracePeriodSeconds"]) == 1 {
		munged["terminationGracePeriodSeconds"] = oldSpec["terminationGracePeriodSeconds"]
	}
	return munged
}

// setOrDelete sets obj[k] to from[k], or deletes it if from has none.
func setOrDelete(obj Object, k string, from Object) {
	if v, ok := from[k]; ok {
		obj[k] = v
	} else {
		delete(obj, k)
	}
}

// onlyAddedTolerations checks that an update keeps every toleration the
// pod had (but for its tolerationSeconds), then the tolerations.
func onlyAddedTolerations(tolerations, old []Object) field.ErrorList {
	path := specPath.Child("tolerations")
	for _, o := range old {
		kept := false
		for _, t := range tolerations {
			o := deepCopy(o)
			setOrDelete(o, "tolerationSeconds", t)
			if reflect.DeepEqual(o, t) {
				kept = true
				break
			}
		}
		if !kept {
			return field.ErrorList{field.Forbidden(path, "existing toleration can not be modified except its tolerationSeconds")}
		}
	}
	return validateTolerations(tolerations, path)
}
