package validation

import (
	"reflect"

	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	netutils "k8s.io/utils/net"

	"kubeplay/internal/jsonmap"
)

// The service IP ranges (ServiceCIDR) and the addresses allocated in them
// (IPAddress).

var cidrsPath = specPath.Child("cidrs")

// serviceCIDR checks a ServiceCIDR: one or two CIDRs, one of each IP
// family.
func serviceCIDR(spec Object) field.ErrorList {
	cidrs := jsonmap.Strings(spec, "cidrs")
	if len(cidrs) == 0 {
		return field.ErrorList{field.Required(cidrsPath, "at least one CIDR required")}
	}
	var errs field.ErrorList
	for i, c := range cidrs {
		errs = append(errs, utilvalidation.IsValidCIDR(cidrsPath.Index(i), c)...)
	}
	if len(errs) == 0 {
		errs = append(errs, cidrFamilies(cidrs)...)
	}
	return errs
}

// cidrFamilies checks that two CIDRs are of two IP families.
func cidrFamilies(cidrs []string) field.ErrorList {
	if len(cidrs) < 2 {
		return nil
	}
	if dual, _ := netutils.IsDualStackCIDRStrings(cidrs); len(cidrs) > 2 || !dual {
		return field.ErrorList{field.Invalid(cidrsPath, cidrs, "may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64")}
	}
	return nil
}

// serviceCIDRUpdate checks a ServiceCIDR's update: its CIDRs unchanged,
// but that a single-stack range may gain one of the other family.
func serviceCIDRUpdate(spec, oldSpec Object) field.ErrorList {
	cidrs, old := jsonmap.Strings(spec, "cidrs"), jsonmap.Strings(oldSpec, "cidrs")
	if len(cidrs) < len(old) {
		return field.ErrorList{field.Invalid(cidrsPath, spec["cidrs"], "field is immutable")}
	}
	var errs field.ErrorList
	for i := range old {
		if cidrs[i] != old[i] {
			errs = append(errs, field.Invalid(cidrsPath.Index(i), cidrs[i], "field is immutable"))
		}
	}
	switch {
	case len(errs) > 0 || len(cidrs) == len(old):
	case len(old) == 1 && len(cidrs) == 2:
		errs = append(errs, utilvalidation.IsValidCIDR(cidrsPath.Index(1), cidrs[1])...)
		if len(errs) == 0 {
			errs = append(errs, cidrFamilies(cidrs)...)
		}
	default:
		errs = append(errs, field.Invalid(cidrsPath, cidrs, "field is immutable"))
	}
	return errs
}

// parentReference is an IPAddress's parentRef as kube-apiserver prints it
// (its internal type, without JSON tags).
type parentReference struct{ Group, Resource, Namespace, Name string }

var parentRefPath = specPath.Child("parentRef")

// ipAddress checks an IPAddress's reference to the object it is
// allocated to.
func ipAddress(spec Object) field.ErrorList {
	ref := jsonmap.Child(spec, "parentRef")
	if ref == nil {
		return field.ErrorList{field.Required(parentRefPath, "")}
	}
	var errs field.ErrorList
	if g := str(ref, "group"); g != "" {
		for _, msg := range utilvalidation.IsDNS1123Subdomain(g) {
			errs = append(errs, field.Invalid(parentRefPath.Child("group"), g, msg))
		}
	}
	for _, f := range []string{"resource", "name"} {
		if str(ref, f) == "" {
			errs = append(errs, field.Required(parentRefPath.Child(f), ""))
		}
	}
	return errs
}

// ipAddressUpdate checks an IPAddress's update: as new, and its parentRef
// unchanged.
func ipAddressUpdate(spec, oldSpec Object) field.ErrorList {
	ref, old := parentRefOf(spec), parentRefOf(oldSpec)
	var errs field.ErrorList
	if !reflect.DeepEqual(ref, old) {
		var value any = ref
		if ref == nil {
			value = nil // printed null, not a nil pointer's type
		}
		errs = append(errs, field.Invalid(parentRefPath, value, "field is immutable"))
	}
	return append(errs, ipAddress(spec)...)
}

func parentRefOf(spec Object) *parentReference {
	ref := jsonmap.Child(spec, "parentRef")
	if ref == nil {
		return nil
	}
	s := func(k string) string { v, _ := ref[k].(string); return v }
	return &parentReference{Group: s("group"), Resource: s("resource"), Namespace: s("namespace"), Name: s("name")}
}
