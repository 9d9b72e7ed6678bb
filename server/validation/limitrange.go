package validation

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/internal/jsonmap"
)

// limitBounds are the fields of a LimitRange item that bound a resource,
// in the order kube-apiserver reads them.
var limitBounds = []string{"max", "min", "default", "defaultRequest", "maxLimitRequestRatio"}

// LimitRange checks a LimitRange's items: one of each type, standard
// types and resource names, and bounds that agree with each other (min ≤
// default request ≤ default ≤ max, a ratio of limit to request of at
// least 1 and at most max/min).
func LimitRange(obj Object) field.ErrorList {
	var errs field.ErrorList
	types := uniqueNames{}
	for i, item := range jsonmap.Items(jsonmap.Child(obj, "spec")["limits"]) {
		path := specPath.Child("limits").Index(i)
		typ := str(item, "type")
		errs = append(errs, limitType(typ, path.Child("type"))...)
		errs = append(errs, types.add(path.Child("type"), typ)...)
		bounds := map[string]map[string]resource.Quantity{}
		keys := map[string]bool{}
		for _, b := range limitBounds {
			if typ == "Pod" && (b == "default" || b == "defaultRequest") {
				if len(jsonmap.Child(item, b)) > 0 {
					errs = append(errs, field.Forbidden(path.Child(b), "may not be specified when `type` is 'Pod'"))
				}
				continue
			}
			if b == "maxLimitRequestRatio" && typ == "PersistentVolumeClaim" {
				_, hasMin := jsonmap.Child(item, "min")["storage"]
				_, hasMax := jsonmap.Child(item, "max")["storage"]
				if !hasMin && !hasMax {
					errs = append(errs, field.Required(path.Child("limits"), "either minimum or maximum storage value is required, but neither was provided"))
				}
			}
			bounds[b] = map[string]resource.Quantity{}
			for _, name := range slices.Sorted(maps.Keys(jsonmap.Child(item, b))) {
				errs = append(errs, limitResourceName(typ, name, path.Child(b).Key(name))...)
				keys[name] = true
				if q, ok := jsonmap.Quantity(jsonmap.Child(item, b)[name]); ok {
					bounds[b][name] = q
				}
			}
		}
		for _, name := range slices.Sorted(maps.Keys(keys)) {
			errs = append(errs, limitBoundErrors(name, bounds, path)...)
		}
	}
	return errs
}

// LimitRangeUpdate checks a LimitRange's update: the range as new.
func LimitRangeUpdate(obj, _ Object) field.ErrorList { return LimitRange(obj) }

// limitBoundErrors says where the bounds of one resource of an item (at
// path) disagree.
func limitBoundErrors(name string, bounds map[string]map[string]resource.Quantity, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	min, hasMin := bounds["min"][name]
	max, hasMax := bounds["max"][name]
	def, hasDef := bounds["default"][name]
	req, hasReq := bounds["defaultRequest"][name]
	ratio, hasRatio := bounds["maxLimitRequestRatio"][name]
	invalid := func(field_ string, value resource.Quantity, format string, args ...any) {
		errs = append(errs, field.Invalid(path.Child(field_).Key(name), value.String(), fmt.Sprintf(format, args...)))
	}
	if hasMin && hasMax && min.Cmp(max) > 0 {
		invalid("min", min, "min value %s is greater than max value %s", min.String(), max.String())
	}
	if hasReq && hasMin && min.Cmp(req) > 0 {
		invalid("defaultRequest", req, "min value %s is greater than default request value %s", min.String(), req.String())
	}
	if hasReq && hasMax && req.Cmp(max) > 0 {
		invalid("defaultRequest", req, "default request value %s is greater than max value %s", req.String(), max.String())
	}
	if hasReq && hasDef && req.Cmp(def) > 0 {
		invalid("defaultRequest", req, "default request value %s is greater than default limit value %s", req.String(), def.String())
	}
	// kube-apiserver quotes the bound rather than the default in these two.
	if hasDef && hasMin && min.Cmp(def) > 0 {
		invalid("default", min, "min value %s is greater than default value %s", min.String(), def.String())
	}
	if hasDef && hasMax && def.Cmp(max) > 0 {
		invalid("default", max, "default value %s is greater than max value %s", def.String(), max.String())
	}
	if hasRatio && ratio.Cmp(*resource.NewQuantity(1, resource.DecimalSI)) < 0 {
		invalid("maxLimitRequestRatio", ratio, "ratio %s is less than 1", ratio.String())
	}
	if hasRatio && hasMin && hasMax {
		ratioValue, minValue, maxValue := float64(ratio.Value()), min.Value(), max.Value()
		if ratio.Value() < resource.MaxMilliValue && minValue < resource.MaxMilliValue && maxValue < resource.MaxMilliValue {
			ratioValue, minValue, maxValue = float64(ratio.MilliValue())/1000, min.MilliValue(), max.MilliValue()
		}
		if limit := float64(maxValue) / float64(minValue); ratioValue > limit {
			invalid("maxLimitRequestRatio", ratio, "ratio %s is greater than max/min = %f", ratio.String(), limit)
		}
	}
	// What cannot be overcommitted (hugepages, extended resources) must be
	// requested as much as limited.
	overcommits := !strings.Contains(name, "/") || strings.Contains(name, "kubernetes.io/")
	if (!overcommits || strings.HasPrefix(name, "hugepages-")) && hasDef && hasReq && def.Cmp(req) != 0 {
		invalid("defaultRequest", req, "default value %s must equal to defaultRequest value %s in %s", def.String(), req.String(), name)
	}
	return errs
}

// standardLimitTypes are the LimitRange item types without a domain.
var standardLimitTypes = []string{"Pod", "Container", "PersistentVolumeClaim"}

// limitType checks an item's type: a qualified name, a standard one
// unless it has a domain.
func limitType(typ string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range utilvalidation.IsQualifiedName(typ) {
		errs = append(errs, field.Invalid(path, typ, msg))
	}
	if len(errs) == 0 && !strings.Contains(typ, "/") && !slices.Contains(standardLimitTypes, typ) {
		errs = append(errs, field.Invalid(path, typ, "must be a standard limit type or fully qualified"))
	}
	return errs
}

// standardResources are the resources an object may name without a
// domain.
var standardResources = []string{"cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory",
	"requests.ephemeral-storage", "limits.cpu", "limits.memory", "limits.ephemeral-storage", "pods", "resourcequotas",
	"services", "replicationcontrollers", "secrets", "configmaps", "persistentvolumeclaims", "storage",
	"requests.storage", "services.nodeports", "services.loadbalancers"}

// limitResourceName checks a resource an item of type typ bounds: for
// pods and containers, one they can request.
func limitResourceName(typ, name string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range utilvalidation.IsQualifiedName(name) {
		errs = append(errs, field.Invalid(path, name, msg))
	}
	single := !strings.Contains(name, "/")
	if len(errs) == 0 && single && !slices.Contains(standardResources, name) &&
		!strings.HasPrefix(name, "hugepages-") && !strings.HasPrefix(name, "requests.hugepages-") {
		errs = append(errs, field.Invalid(path, name, "must be a standard resource type or fully qualified"))
	}
	if typ != "Pod" && typ != "Container" {
		return errs
	}
	switch {
	case single && name != "cpu" && name != "memory" && name != "ephemeral-storage" && !strings.HasPrefix(name, "hugepages-"):
		errs = append(errs, field.Invalid(path, name, "must be a standard resource for containers"))
	case !single && !strings.Contains(name, "kubernetes.io/") && (strings.HasPrefix(name, "requests.") || len(utilvalidation.IsQualifiedName("requests."+name)) > 0):
		errs = append(errs, field.Invalid(path, name, "doesn't follow extended resource name standard"))
	}
	return errs
}
