package validation

import (
	"slices"
	"strings"

	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/internal/jsonmap"
)

// integerResources are the standard resources counted in whole units.
var integerResources = []string{
	"pods", "resourcequotas", "services", "replicationcontrollers", "secrets", "configmaps",
	"persistentvolumeclaims", "services.nodeports", "services.loadbalancers",
}

// isExtendedResource reports whether name is an extended resource (a
// domain outside kubernetes.io, and a valid quota name once prefixed with
// "requests."), which is counted in whole units.
func isExtendedResource(name string) bool {
	native := !strings.Contains(name, "/") || strings.Contains(name, "kubernetes.io/")
	if native || strings.HasPrefix(name, "requests.") {
		return false
	}
	return len(utilvalidation.IsQualifiedName("requests."+name)) == 0
}

// resourceQuantity checks the amount v of resource name at path: not
// negative, and whole for the resources counted in units. (The decoder
// has rejected what is not a quantity.)
func resourceQuantity(name string, v any, path *field.Path) field.ErrorList {
	q, ok := jsonmap.Quantity(v)
	if !ok {
		return nil
	}
	var errs field.ErrorList
	if q.Sign() < 0 {
		errs = append(errs, field.Invalid(path, q.String(), "must be greater than or equal to 0"))
	}
	if (slices.Contains(integerResources, name) || isExtendedResource(name)) && q.MilliValue()%1000 != 0 {
		errs = append(errs, field.Invalid(path, q.String(), "must be an integer"))
	}
	return errs
}
