package defaults

import (
	"fmt"
	"maps"
	"reflect"
	"slices"

	"k8s.io/apimachinery/pkg/api/resource"

	"kubeplay/internal/jsonmap"
)

// The RuntimeClass admission plugin: a pod naming a RuntimeClass gets the
// class's overhead and the scheduling it asks for.

// AdmitRuntimeClass does to a new Pod's spec what the plugin's mutating
// phase does with class, the RuntimeClass it names (nil when it names
// none): set spec.overhead from the class's, add the class's node selector
// and tolerations. It returns why the pod is forbidden, "" if it is not.
func AdmitRuntimeClass(spec, class Object) string {
	if spec == nil || class == nil {
		return ""
	}
	if fixed, ok := jsonmap.Child(class, "overhead")["podFixed"].(map[string]any); ok {
		if own, _ := spec["overhead"].(map[string]any); len(own) > 0 && !sameResources(own, fixed) {
			return "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead"
		}
		spec["overhead"] = maps.Clone(fixed)
	}
	scheduling := jsonmap.Child(class, "scheduling")
	if scheduling == nil {
		return ""
	}
	if wanted, _ := scheduling["nodeSelector"].(map[string]any); len(wanted) > 0 {
		selector, _ := spec["nodeSelector"].(map[string]any)
		if selector == nil {
			selector = map[string]any{}
		}
		for _, key := range slices.Sorted(maps.Keys(wanted)) {
			if own, ok := selector[key]; ok && own != wanted[key] {
				return fmt.Sprintf("conflict: runtimeClass.scheduling.nodeSelector[%s] = %s; pod.spec.nodeSelector[%s] = %s", key, wanted[key], key, own)
			}
			selector[key] = wanted[key]
		}
		spec["nodeSelector"] = selector
	}
	if tolerations := mergeTolerations(jsonmap.Items(spec["tolerations"]), jsonmap.Items(scheduling["tolerations"])); len(tolerations) > 0 {
		spec["tolerations"] = tolerations
	}
	return ""
}

// RuntimeClassOverheadMismatch is why the plugin's validating phase
// refuses a Pod whose spec.overhead is not its RuntimeClass's (class, nil
// when it names none), "" if it does not.
func RuntimeClassOverheadMismatch(spec, class Object) string {
	own, set := spec["overhead"].(map[string]any)
	if fixed, ok := jsonmap.Child(class, "overhead")["podFixed"].(map[string]any); ok {
		if !sameResources(own, fixed) {
			return "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead"
		}
		return ""
	}
	if set {
		return "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead"
	}
	return ""
}

// sameResources reports whether two resource lists name the same
// resources in the same quantities.
func sameResources(a, b map[string]any) bool {
	if len(a) != len(b) {
		return false
	}
	for name, v := range a {
		w, ok := b[name]
		if !ok || !sameQuantity(v, w) {
			return false
		}
	}
	return true
}

func sameQuantity(a, b any) bool {
	qa, errA := resource.ParseQuantity(fmt.Sprint(a))
	qb, errB := resource.ParseQuantity(fmt.Sprint(b))
	if errA != nil || errB != nil {
		return reflect.DeepEqual(a, b)
	}
	return qa.Cmp(qb) == 0
}

// mergeTolerations is first and then second without the tolerations that
// another one already tolerates (of equal ones, the first is kept).
func mergeTolerations(first, second []map[string]any) []any {
	all := append(first, second...)
	var merged []any
next:
	for i, t := range all {
		for _, m := range merged {
			if tolerationCovers(m.(map[string]any), t) {
				continue next
			}
		}
		for _, later := range all[i+1:] {
			if !sameToleration(t, later) && tolerationCovers(later, t) {
				continue next
			}
		}
		merged = append(merged, map[string]any(t))
	}
	return merged
}

// sameToleration compares two tolerations field by field.
func sameToleration(a, b map[string]any) bool {
	for _, k := range []string{"key", "operator", "value", "effect"} {
		if tolerationField(a, k) != tolerationField(b, k) {
			return false
		}
	}
	sa, okA := jsonmap.IntOf(a["tolerationSeconds"])
	sb, okB := jsonmap.IntOf(b["tolerationSeconds"])
	return okA == okB && sa == sb
}

func tolerationField(o map[string]any, k string) string {
	s, _ := o[k].(string)
	return s
}

// tolerationCovers reports whether toleration ss tolerates every taint t
// tolerates.
func tolerationCovers(ss, t map[string]any) bool {
	if sameToleration(ss, t) {
		return true
	}
	if tolerationField(t, "key") != tolerationField(ss, "key") && (tolerationField(ss, "key") != "" || tolerationField(ss, "operator") != "Exists") {
		return false
	}
	if tolerationField(t, "effect") != tolerationField(ss, "effect") && tolerationField(ss, "effect") != "" {
		return false
	}
	if tolerationField(ss, "effect") == "NoExecute" {
		if limit, ok := jsonmap.IntOf(ss["tolerationSeconds"]); ok {
			if own, ok := jsonmap.IntOf(t["tolerationSeconds"]); !ok || own > limit {
				return false
			}
		}
	}
	switch tolerationField(ss, "operator") {
	case "Equal", "":
		return tolerationField(t, "operator") == "Equal" && tolerationField(t, "value") == tolerationField(ss, "value")
	case "Exists":
		return true
	}
	return false
}
