package validation

import (
	"fmt"
	"math"
	"slices"
	"strings"

	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/internal/jsonmap"
)

// The limits of a priority level's queues.
const (
	maxQueues   = 10 * 1000 * 1000
	maxHashBits = 60 // of the shuffle sharding that deals queues
)

// PriorityLevelConfiguration checks a priority level: Exempt exactly for
// the one named exempt, else Limited, with shares, a lendable percentage
// and a limit response that may queue.
func PriorityLevelConfiguration(obj Object) field.ErrorList {
	spec := jsonmap.Child(obj, "spec")
	typ := str(spec, "type")
	var errs field.ErrorList
	if (jsonmap.String(obj, "metadata", "name") == "exempt") != (typ == "Exempt") {
		errs = append(errs, field.Invalid(specPath.Child("type"), typ, "must be 'Exempt' if and only if `name` is 'exempt'"))
	}
	switch typ {
	case "Exempt":
		if spec["limited"] != nil {
			errs = append(errs, field.Forbidden(specPath.Child("limited"), "must be nil if the type is not Limited"))
		}
		if exempt := jsonmap.Child(spec, "exempt"); exempt != nil {
			errs = append(errs, sharesAndLending(exempt, specPath.Child("exempt"))...)
		}
	case "Limited":
		if spec["exempt"] != nil {
			errs = append(errs, field.Forbidden(specPath.Child("exempt"), "must be nil if the type is Limited"))
		}
		limited := jsonmap.Child(spec, "limited")
		if limited == nil {
			errs = append(errs, field.Required(specPath.Child("limited"), "must not be empty when type is Limited"))
			break
		}
		path := specPath.Child("limited")
		if n := intOf(limited["nominalConcurrencyShares"]); n < 0 {
			errs = append(errs, field.Invalid(path.Child("nominalConcurrencyShares"), int32(n), "must be a non-negative integer"))
		}
		errs = append(errs, limitResponse(jsonmap.Child(limited, "limitResponse"), path.Child("limitResponse"))...)
		errs = append(errs, lendablePercent(limited, path)...)
		if n, ok := jsonmap.IntOf(limited["borrowingLimitPercent"]); ok && n < 0 {
			errs = append(errs, field.Invalid(path.Child("borrowingLimitPercent"), int32(n), "if specified, must be a non-negative integer"))
		}
	default:
		errs = append(errs, field.NotSupported(specPath.Child("type"), typ, []string{"Exempt", "Limited"}))
	}
	return errs
}

// PriorityLevelConfigurationUpdate checks a priority level's update: the
// level as new.
func PriorityLevelConfigurationUpdate(obj, _ Object) field.ErrorList {
	return PriorityLevelConfiguration(obj)
}

// sharesAndLending checks an exempt level's shares and lendable percentage.
func sharesAndLending(exempt Object, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if n, ok := jsonmap.IntOf(exempt["nominalConcurrencyShares"]); ok && n < 0 {
		errs = append(errs, field.Invalid(path.Child("nominalConcurrencyShares"), int32(n), "must be a non-negative integer"))
	}
	return append(errs, lendablePercent(exempt, path)...)
}

func lendablePercent(level Object, path *field.Path) field.ErrorList {
	if n, ok := jsonmap.IntOf(level["lendablePercent"]); ok && (n < 0 || n > 100) {
		return field.ErrorList{field.Invalid(path.Child("lendablePercent"), int32(n), "must be between 0 and 100, inclusive")}
	}
	return nil
}

// limitResponse checks what a level does with requests beyond its
// concurrency: reject them, or queue them in queues dealt by shuffle
// sharding.
func limitResponse(lr Object, path *field.Path) field.ErrorList {
	queuing := jsonmap.Child(lr, "queuing")
	switch typ := str(lr, "type"); typ {
	case "Reject":
		if queuing != nil {
			return field.ErrorList{field.Forbidden(path.Child("queuing"), "must be nil if limited.limitResponse.type is not Limited")}
		}
	case "Queue":
		if queuing == nil {
			return field.ErrorList{field.Required(path.Child("queuing"), "must not be empty if limited.limitResponse.type is Limited")}
		}
		return queuingConfiguration(queuing, path.Child("queuing"))
	default:
		return field.ErrorList{field.NotSupported(path.Child("type"), typ, []string{"Queue", "Reject"})}
	}
	return nil
}

func queuingConfiguration(q Object, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	queues, hand := int32(intOf(q["queues"])), int32(intOf(q["handSize"]))
	if n := int32(intOf(q["queueLengthLimit"])); n <= 0 {
		errs = append(errs, field.Invalid(path.Child("queueLengthLimit"), n, "must be positive"))
	}
	switch {
	case queues <= 0:
		errs = append(errs, field.Invalid(path.Child("queues"), queues, "must be positive"))
	case queues > maxQueues:
		errs = append(errs, field.Invalid(path.Child("queues"), queues, fmt.Sprintf("must not be greater than %d", maxQueues)))
	}
	switch {
	case hand <= 0:
		errs = append(errs, field.Invalid(path.Child("handSize"), hand, "must be positive"))
	case hand > queues:
		errs = append(errs, field.Invalid(path.Child("handSize"), hand, fmt.Sprintf("should not be greater than queues (%d)", queues)))
	case int(math.Ceil(math.Log2(float64(queues))*float64(hand))) > maxHashBits:
		errs = append(errs, field.Invalid(path.Child("handSize"), hand,
			fmt.Sprintf("required entropy bits of deckSize %d and handSize %d should not be greater than %d", queues, hand, maxHashBits)))
	}
	return errs
}

// flowSchemaVerbs are the verbs a flow schema's rules may name.
var flowSchemaVerbs = []string{"create", "delete", "deletecollection", "get", "list", "patch", "proxy", "update", "watch"}

// FlowSchema checks a FlowSchema: its precedence (1 for the exempt schema
// only), distinguisher, priority level, and rules.
func FlowSchema(obj Object) field.ErrorList {
	spec := jsonmap.Child(obj, "spec")
	var errs field.ErrorList
	precedence := int32(intOf(spec["matchingPrecedence"]))
	path := specPath.Child("matchingPrecedence")
	switch {
	case precedence <= 0:
		errs = append(errs, field.Invalid(path, precedence, "must be a positive value"))
	case precedence > 10000:
		errs = append(errs, field.Invalid(path, precedence, "must not be greater than 10000"))
	}
	if precedence == 1 && jsonmap.String(obj, "metadata", "name") != "exempt" {
		errs = append(errs, field.Invalid(path, precedence, "only the schema named 'exempt' may have matchingPrecedence 1"))
	}
	if method := jsonmap.Child(spec, "distinguisherMethod"); method != nil {
		if t := str(method, "type"); t != "ByNamespace" && t != "ByUser" {
			// kube-apiserver shows the internal struct.
			errs = append(errs, field.NotSupported(specPath.Child("distinguisherMethod", "type"), map[string]string{"Type": t}, []string{"ByNamespace", "ByUser"}))
		}
	}
	levelPath := specPath.Child("priorityLevelConfiguration", "name")
	if level := jsonmap.String(spec, "priorityLevelConfiguration", "name"); level == "" {
		errs = append(errs, field.Required(levelPath, "must reference a priority level"))
	} else {
		for _, msg := range utilvalidation.IsDNS1123Subdomain(level) {
			errs = append(errs, field.Invalid(levelPath, level, msg))
		}
	}
	for i, r := range jsonmap.Items(spec["rules"]) {
		errs = append(errs, flowSchemaRule(r, specPath.Child("rules").Index(i))...)
	}
	return errs
}

// FlowSchemaUpdate checks a FlowSchema's update: the schema as new.
func FlowSchemaUpdate(obj, _ Object) field.ErrorList { return FlowSchema(obj) }

func flowSchemaRule(r Object, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	subjects := jsonmap.Items(r["subjects"])
	for i, s := range subjects {
		errs = append(errs, flowSchemaSubject(s, path.Child("subjects").Index(i))...)
	}
	if len(subjects) == 0 {
		errs = append(errs, field.Required(path.Child("subjects"), "subjects must contain at least one value"))
	}
	resourceRules, nonResourceRules := jsonmap.Items(r["resourceRules"]), jsonmap.Items(r["nonResourceRules"])
	if len(resourceRules) == 0 && len(nonResourceRules) == 0 {
		errs = append(errs, field.Required(path, "at least one of resourceRules and nonResourceRules has to be non-empty"))
	}
	for i, rr := range resourceRules {
		at := path.Child("resourceRules").Index(i)
		errs = append(errs, flowSchemaVerbsOf(rr, at)...)
		errs = append(errs, wildcardList(rr, "apiGroups", "resource rules must supply at least one api group", "api groups", at, nil)...)
		errs = append(errs, wildcardList(rr, "resources", "resource rules must supply at least one resource", "resources", at, nil)...)
		required := "resource rules that are not cluster scoped must supply at least one namespace"
		if rr["clusterScope"] == true {
			required = ""
		}
		errs = append(errs, wildcardList(rr, "namespaces", required, "namespaces", at, func(path *field.Path, namespaces []string) field.ErrorList {
			var errs field.ErrorList
			for j, ns := range namespaces {
				for _, msg := range utilvalidation.IsDNS1123Label(ns) {
					errs = append(errs, field.Invalid(path.Index(j), ns, "each member of this list must be '*' or a DNS-1123 label; "+msg))
				}
			}
			return errs
		})...)
	}
	for i, nr := range nonResourceRules {
		at := path.Child("nonResourceRules").Index(i)
		errs = append(errs, flowSchemaVerbsOf(nr, at)...)
		errs = append(errs, wildcardList(nr, "nonResourceURLs", "nonResourceURLs must contain at least one value", "non-resource URLs", at, func(path *field.Path, urls []string) field.ErrorList {
			var errs field.ErrorList
			for j, u := range urls {
				if msg := nonResourceURLPath(u); msg != "" {
					errs = append(errs, field.Invalid(path.Index(j), u, msg))
				}
			}
			return errs
		})...)
	}
	return errs
}

func flowSchemaVerbsOf(rule Object, path *field.Path) field.ErrorList {
	return wildcardList(rule, "verbs", "verbs must contain at least one value", "verbs", path, func(path *field.Path, verbs []string) field.ErrorList {
		for _, v := range verbs {
			if !slices.Contains(flowSchemaVerbs, v) {
				return field.ErrorList{field.NotSupported(path, verbs, flowSchemaVerbs)}
			}
		}
		return nil
	})
}

// wildcardList checks a rule's list k: not empty (unless required, why it
// must not be, is ""), and "*" alone if there, or else each item as check
// (nil: any) says, given the list's path.
func wildcardList(rule Object, k, required, what string, path *field.Path, check func(*field.Path, []string) field.ErrorList) field.ErrorList {
	list := jsonmap.Strings(rule, k)
	switch {
	case len(list) == 0 && required != "":
		return field.ErrorList{field.Required(path.Child(k), required)}
	case slices.Contains(list, "*"):
		if len(list) > 1 {
			return field.ErrorList{field.Invalid(path.Child(k), list, "if '*' is present, must not specify other "+what)}
		}
	case check != nil:
		return check(path.Child(k), list)
	}
	return nil
}

// nonResourceURLPath says what is wrong with a rule's non-resource URL
// ("" if nothing): a path, with a "*" only as its last segment.
func nonResourceURLPath(p string) string {
	switch {
	case p == "":
		return "must not be empty"
	case p == "/":
		return ""
	case !strings.HasPrefix(p, "/"):
		return "must start with slash"
	case strings.Contains(p, " "):
		return "must not contain white-space"
	case strings.Contains(p, "//"):
		return "must not contain double slash"
	}
	if n := strings.Count(p, "*"); n > 1 || n == 1 && !strings.HasSuffix(p, "/*") {
		return "wildcard can only do suffix matching"
	}
	return ""
}

// flowSchemaSubject checks a rule's subject: of its kind's field alone.
func flowSchemaSubject(s Object, path *field.Path) field.ErrorList {
	kinds := map[string]string{"ServiceAccount": "serviceAccount", "User": "user", "Group": "group"}
	kind := str(s, "kind")
	own, ok := kinds[kind]
	if !ok {
		return field.ErrorList{field.NotSupported(path.Child("kind"), kind, []string{"Group", "ServiceAccount", "User"})}
	}
	var errs field.ErrorList
	subject, present := s[own].(map[string]any)
	switch {
	case !present:
		errs = append(errs, field.Required(path.Child(own), fmt.Sprintf("%s is required when subject kind is '%s'", own, kind)))
	case kind == "ServiceAccount":
		switch name := str(subject, "name"); {
		case name == "":
			errs = append(errs, field.Required(path.Child(own, "name"), ""))
		case name != "*":
			for _, msg := range utilvalidation.IsDNS1123Subdomain(name) {
				errs = append(errs, field.Invalid(path.Child(own, "name"), name, msg))
			}
		}
		if ns := str(subject, "namespace"); ns == "" {
			errs = append(errs, field.Required(path.Child(own, "namespace"), "must specify namespace for service account"))
		} else {
			for _, msg := range utilvalidation.IsDNS1123Label(ns) {
				errs = append(errs, field.Invalid(path.Child(own, "namespace"), ns, msg))
			}
		}
	default:
		if str(subject, "name") == "" {
			errs = append(errs, field.Required(path.Child(own, "name"), ""))
		}
	}
	// The other kinds' fields, in kube-apiserver's order.
	for _, other := range []struct{ field, kind string }{{"serviceAccount", "ServiceAccount"}, {"user", "User"}, {"group", "Group"}} {
		if other.field != own && s[other.field] != nil {
			errs = append(errs, field.Forbidden(path.Child(other.field), fmt.Sprintf("%s is forbidden when subject kind is not '%s'", other.field, other.kind)))
		}
	}
	return errs
}
