package validation

import (
	"maps"
	"reflect"
	"slices"
	"strings"

	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/internal/jsonmap"
)

// The cluster-wide classes and small objects of several groups, and what
// their updates may not change.

// PriorityClass checks a PriorityClass's preemption policy.
func PriorityClass(obj Object) field.ErrorList {
	if policy, ok := obj["preemptionPolicy"].(string); ok && policy != "PreemptLowerPriority" && policy != "Never" {
		return field.ErrorList{field.NotSupported(field.NewPath("preemptionPolicy"), policy, []string{"PreemptLowerPriority", "Never"})}
	}
	return nil
}

// PriorityClassUpdate checks a PriorityClass's update: its value and
// preemption policy unchanged.
func PriorityClassUpdate(obj, old Object) field.ErrorList {
	var errs field.ErrorList
	if !reflect.DeepEqual(intOf(obj["value"]), intOf(old["value"])) {
		errs = append(errs, field.Forbidden(field.NewPath("value"), "may not be changed in an update."))
	}
	if obj["preemptionPolicy"] != old["preemptionPolicy"] {
		errs = append(errs, field.Invalid(field.NewPath("preemptionPolicy"), obj["preemptionPolicy"], "field is immutable"))
	}
	return errs
}

// IngressClass checks an IngressClass's controller: a domain-prefixed
// path.
func IngressClass(obj Object) field.ErrorList {
	controller := str(jsonmap.Child(obj, "spec"), "controller")
	path := specPath.Child("controller")
	if controller == "" {
		return field.ErrorList{field.Required(path, "")}
	}
	return utilvalidation.IsDomainPrefixedPath(path, controller)
}

// IngressClassUpdate checks an IngressClass's update: the class as new,
// its controller unchanged.
func IngressClassUpdate(obj, old Object) field.ErrorList {
	errs := IngressClass(obj)
	if c := str(jsonmap.Child(obj, "spec"), "controller"); c != str(jsonmap.Child(old, "spec"), "controller") {
		errs = append(errs, field.Invalid(specPath.Child("controller"), c, "field is immutable"))
	}
	return errs
}

// RuntimeClass checks a RuntimeClass's handler: a DNS label.
func RuntimeClass(obj Object) field.ErrorList {
	handler, _ := obj["handler"].(string)
	var errs field.ErrorList
	for _, msg := range utilvalidation.IsDNS1123Label(handler) {
		errs = append(errs, field.Invalid(field.NewPath("handler"), handler, msg))
	}
	return errs
}

// RuntimeClassUpdate checks a RuntimeClass's update: the class as new, its
// handler unchanged.
func RuntimeClassUpdate(obj, old Object) field.ErrorList {
	errs := RuntimeClass(obj)
	if obj["handler"] != old["handler"] {
		handler, _ := obj["handler"].(string)
		errs = append(errs, field.Invalid(field.NewPath("handler"), handler, "field is immutable"))
	}
	return errs
}

// standardQuotaResources are the resources a quota may name without a
// domain.
var standardQuotaResources = []string{
	"cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory", "requests.storage",
	"requests.ephemeral-storage", "limits.cpu", "limits.memory", "limits.ephemeral-storage", "pods",
	"resourcequotas", "services", "replicationcontrollers", "secrets", "persistentvolumeclaims",
	"configmaps", "services.nodeports", "services.loadbalancers",
}

// ResourceQuota checks the resources a ResourceQuota limits: qualified
// names, standard ones unless they have a domain, and their amounts.
func ResourceQuota(obj Object) field.ErrorList {
	var errs field.ErrorList
	hard := jsonmap.Child(jsonmap.Child(obj, "spec"), "hard")
	for _, name := range slices.Sorted(maps.Keys(hard)) {
		path := specPath.Child("hard").Key(name)
		for _, msg := range utilvalidation.IsQualifiedName(name) {
			errs = append(errs, field.Invalid(path, name, msg))
		}
		if !strings.Contains(name, "/") && !slices.Contains(standardQuotaResources, name) &&
			!strings.HasPrefix(name, "hugepages-") && !strings.HasPrefix(name, "requests.hugepages-") {
			errs = append(errs, field.Invalid(path, name, "must be a standard resource for quota"))
		}
		errs = append(errs, resourceQuantity(name, hard[name], path)...)
	}
	return errs
}

// ResourceQuotaUpdate checks a ResourceQuota's update: the quota as new.
func ResourceQuotaUpdate(obj, _ Object) field.ErrorList { return ResourceQuota(obj) }

// ControllerRevision checks a new ControllerRevision: its data, a JSON
// object, and its revision.
func ControllerRevision(obj Object) field.ErrorList {
	var errs field.ErrorList
	switch obj["data"].(type) {
	case nil:
		errs = append(errs, field.Required(field.NewPath("data"), "data is mandatory"))
	case map[string]any:
	default:
		errs = append(errs, field.Required(field.NewPath("data"), "data must be a valid JSON object"))
	}
	return append(errs, nonNegative(obj, nil, "revision")...)
}

// ControllerRevisionUpdate checks a ControllerRevision's update: its
// revision, its data unchanged (whatever it is).
func ControllerRevisionUpdate(obj, old Object) field.ErrorList {
	errs := nonNegative(obj, nil, "revision")
	if !reflect.DeepEqual(obj["data"], old["data"]) {
		errs = append(errs, field.Invalid(field.NewPath("data"), obj["data"], "field is immutable"))
	}
	return errs
}
