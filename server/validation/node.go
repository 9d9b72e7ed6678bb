package validation

import (
	"slices"
	"strings"

	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	netutils "k8s.io/utils/net"

	"kubeplay/internal/jsonmap"
)

// taintEffects are the effects of a node's taint, in kube-apiserver's
// order.
var taintEffects = []string{"NoSchedule", "PreferNoSchedule", "NoExecute"}

// Node checks a Node: its taints (reported under metadata, as
// kube-apiserver does) and its pod CIDRs, one per IP family.
func Node(obj Object) field.ErrorList {
	spec := jsonmap.Child(obj, "spec")
	errs := nodeTaints(jsonmap.Items(spec["taints"]))
	cidrs := jsonmap.Strings(spec, "podCIDRs")
	path := specPath.Child("podCIDRs")
	valid := true
	for i, c := range cidrs {
		if _, _, err := netutils.ParseCIDRSloppy(c); err != nil {
			valid = false
			errs = append(errs, field.Invalid(path.Index(i), c, "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"))
		}
	}
	if len(cidrs) > 1 {
		dualStack, _ := netutils.IsDualStackCIDRStrings(cidrs)
		if !valid || !dualStack || len(cidrs) > 2 {
			errs = append(errs, field.Invalid(path, cidrs, "may specify no more than one CIDR for each IP family"))
		}
	}
	return errs
}

// NodeUpdate checks a Node's update as kube-apiserver does: the node as
// new, then its taints again, and pod CIDRs and provider ID unchanged once
// set.
func NodeUpdate(obj, old Object) field.ErrorList {
	errs := Node(obj)
	spec, oldSpec := jsonmap.Child(obj, "spec"), jsonmap.Child(old, "spec")
	cidrs, oldCIDRs := jsonmap.Strings(spec, "podCIDRs"), jsonmap.Strings(oldSpec, "podCIDRs")
	changed := field.Forbidden(specPath.Child("podCIDRs"), `node updates may not change podCIDR except from "" to valid`)
	if len(oldCIDRs) > 0 && len(oldCIDRs) != len(cidrs) {
		errs = append(errs, changed)
	} else if len(oldCIDRs) > 0 {
		for i, c := range oldCIDRs {
			if cidrs[i] != c {
				errs = append(errs, changed)
			}
		}
	}
	if was := str(oldSpec, "providerID"); was != "" && was != str(spec, "providerID") {
		errs = append(errs, field.Forbidden(specPath.Child("providerID"), `node updates may not change providerID except from "" to valid`))
	}
	errs = append(errs, nodeTaints(jsonmap.Items(spec["taints"]))...)
	if str(spec, "externalID") != str(oldSpec, "externalID") {
		errs = append(errs, field.Forbidden(specPath.Child("externalID"), "may not be updated"))
	}
	return errs
}

// nodeTaints checks a node's taints: a label name for a key, a label value,
// an effect, each key and effect once.
func nodeTaints(taints []Object) field.ErrorList {
	var errs field.ErrorList
	path := metadataPath.Child("taints")
	seen := map[[2]string]bool{}
	for i, t := range taints {
		at := path.Index(i)
		key, value, effect := str(t, "key"), str(t, "value"), str(t, "effect")
		for _, msg := range utilvalidation.IsQualifiedName(key) {
			errs = append(errs, field.Invalid(at.Child("key"), key, msg))
		}
		if msgs := utilvalidation.IsValidLabelValue(value); len(msgs) > 0 {
			errs = append(errs, field.Invalid(at.Child("value"), value, strings.Join(msgs, ";")))
		}
		switch {
		case effect == "":
			errs = append(errs, field.Required(at.Child("effect"), ""))
		case !slices.Contains(taintEffects, effect):
			errs = append(errs, field.NotSupported(at.Child("effect"), effect, taintEffects))
		}
		if seen[[2]string{effect, key}] {
			dup := field.Duplicate(at, internalJSON("core.Taint", t))
			dup.Detail = "taints must be unique by key and effect pair"
			errs = append(errs, dup)
			continue
		}
		seen[[2]string{effect, key}] = true
	}
	return errs
}
