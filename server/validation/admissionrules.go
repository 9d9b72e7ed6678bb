package validation

import (
	"fmt"
	"slices"
	"strings"

	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/internal/jsonmap"
)

// The rules that say which requests an admission webhook or policy sees.

var (
	admissionOperations = []string{"*", "CONNECT", "CREATE", "DELETE", "UPDATE"}
	admissionScopes     = []string{"*", "Cluster", "Namespaced"}
	matchPolicies       = []string{"Equivalent", "Exact"}
	failurePolicies     = []string{"Fail", "Ignore"}
)

// ruleWithOperations checks a rule of a webhook or policy at path: its
// operations, then what it matches.
func ruleWithOperations(r Object, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	ops := jsonmap.Strings(r, "operations")
	if len(ops) == 0 {
		errs = append(errs, field.Required(path.Child("operations"), ""))
	}
	if len(ops) > 1 && slices.Contains(ops, "*") {
		errs = append(errs, field.Invalid(path.Child("operations"), ops, "if '*' is present, must not specify other operations"))
	}
	for i, op := range ops {
		if !slices.Contains(admissionOperations, op) {
			errs = append(errs, field.NotSupported(path.Child("operations").Index(i), op, admissionOperations))
		}
	}
	return append(errs, admissionRule(r, path)...)
}

// admissionRule checks the API groups, versions, resources (with their
// subresources) and scope a rule matches.
func admissionRule(r Object, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, k := range []struct{ field, what string }{{"apiGroups", "API groups"}, {"apiVersions", "API versions"}} {
		list := jsonmap.Strings(r, k.field)
		if len(list) == 0 {
			errs = append(errs, field.Required(path.Child(k.field), ""))
		}
		if len(list) > 1 && slices.Contains(list, "*") {
			errs = append(errs, field.Invalid(path.Child(k.field), list, "if '*' is present, must not specify other "+k.what))
		}
	}
	for i, v := range jsonmap.Strings(r, "apiVersions") {
		if v == "" {
			errs = append(errs, field.Required(path.Child("apiVersions").Index(i), ""))
		}
	}
	errs = append(errs, admissionResources(jsonmap.Strings(r, "resources"), path.Child("resources"))...)
	if scope, ok := r["scope"].(string); ok && !slices.Contains(admissionScopes, scope) {
		errs = append(errs, field.NotSupported(path.Child("scope"), scope, admissionScopes))
	}
	return errs
}

// admissionResources checks a rule's resources ("pods", "pods/log",
// "*/scale", "*"): no wildcard that another entry repeats.
func admissionResources(resources []string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(resources) == 0 {
		errs = append(errs, field.Required(path, ""))
	}
	wildSubresource, wildResource := map[string]bool{}, map[string]bool{}
	doubleWildcard, singleWildcard, plain := false, false, false
	for i, rs := range resources {
		if rs == "" {
			errs = append(errs, field.Required(path.Index(i), ""))
			continue
		}
		doubleWildcard = doubleWildcard || rs == "*/*"
		singleWildcard = singleWildcard || rs == "*"
		res, sub, ok := strings.Cut(rs, "/")
		if !ok {
			plain = rs != "*"
			continue
		}
		if wildSubresource[res] {
			errs = append(errs, field.Invalid(path.Index(i), rs, fmt.Sprintf("if '%s/*' is present, must not specify %s", res, rs)))
		}
		if wildResource[sub] {
			errs = append(errs, field.Invalid(path.Index(i), rs, fmt.Sprintf("if '*/%s' is present, must not specify %s", sub, rs)))
		}
		wildSubresource[res] = wildSubresource[res] || sub == "*"
		wildResource[sub] = wildResource[sub] || res == "*"
	}
	if len(resources) > 1 && doubleWildcard {
		errs = append(errs, field.Invalid(path, resources, "if '*/*' is present, must not specify other resources"))
	}
	if singleWildcard && plain {
		errs = append(errs, field.Invalid(path, resources, "if '*' is present, must not specify other resources without subresources"))
	}
	return errs
}

// namedRuleWithOperations checks a policy's rule, which may name objects.
func namedRuleWithOperations(r Object, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := uniqueNames{}
	for i, name := range jsonmap.Strings(r, "resourceNames") {
		for _, msg := range PathSegmentName(name) {
			errs = append(errs, field.Invalid(path.Child("resourceNames").Index(i), name, msg))
		}
		errs = append(errs, seen.add(path.Child("resourceNames").Index(i), name)...)
	}
	return append(errs, ruleWithOperations(r, path)...)
}

// PathSegmentName says why name cannot be one segment of a URL path.
func PathSegmentName(name string) []string {
	if name == "." || name == ".." {
		return []string{fmt.Sprintf("may not be '%s'", name)}
	}
	var msgs []string
	for _, c := range []string{"/", "%"} {
		if strings.Contains(name, c) {
			msgs = append(msgs, fmt.Sprintf("may not contain '%s'", c))
		}
	}
	return msgs
}

// matchResources checks which requests a policy (or its binding) matches:
// a match policy, namespace and object selectors, and its rules.
func matchResources(mc Object, path *field.Path) field.ErrorList {
	if mc == nil {
		return nil
	}
	var errs field.ErrorList
	switch policy, ok := mc["matchPolicy"].(string); {
	case !ok:
		errs = append(errs, field.Required(path.Child("matchPolicy"), ""))
	case !slices.Contains(matchPolicies, policy):
		errs = append(errs, field.NotSupported(path.Child("matchPolicy"), policy, matchPolicies))
	}
	for _, k := range []string{"namespaceSelector", "objectSelector"} {
		ls, present := labelSelectorOf(mc[k])
		if !present {
			errs = append(errs, field.Required(path.Child(k), ""))
			continue
		}
		errs = append(errs, metav1validation.ValidateLabelSelector(ls, metav1validation.LabelSelectorValidationOptions{}, path.Child(k))...)
	}
	for _, k := range []string{"resourceRules", "excludeResourceRules"} {
		for i, r := range jsonmap.Items(mc[k]) {
			errs = append(errs, namedRuleWithOperations(r, path.Child(k).Index(i))...)
		}
	}
	return errs
}
