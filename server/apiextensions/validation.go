package apiextensions

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/internal/jsonmap"
	"kubeplay/server/celeval"
	"kubeplay/server/conversion"
	"kubeplay/server/structural"
)

// Validate checks a CRD as kube-apiserver does, in its order. Like
// kube-apiserver, what all versions share (schema, subresources, printer
// columns, selectable fields) is checked once and reported at the spec's
// level (spec.validation, spec.subresources, ...). given is the CRD as an
// apiextensions.k8s.io/v1beta1 request gave it (nil for v1), obj then its
// conversion to v1: v1beta1 has checks of its own, and may keep unknown
// fields (spec.preserveUnknownFields), and then needs no schema, nor a
// structural one; so may an update of a CRD that already kept them (old is
// nil for a create).
func Validate(ctx context.Context, obj, old, given map[string]any, nameErrs field.ErrorList) (field.ErrorList, error) {
	beta := given != nil
	spec, _ := obj["spec"].(map[string]any)
	keepUnknown, _ := spec["preserveUnknownFields"].(bool)
	oldSpec, _ := old["spec"].(map[string]any)
	wasKept, _ := oldSpec["preserveUnknownFields"].(bool)
	lenient := keepUnknown && (beta || wasKept)
	names, _ := spec["names"].(map[string]any)
	specPath := field.NewPath("spec")
	name, group, plural := jsonmap.String(obj, "metadata", "name"), jsonmap.String(spec, "group"), jsonmap.String(names, "plural")
	errs := nameErrs
	if old == nil && name != plural+"."+group {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), name, `must be spec.names.plural+"."+spec.group`))
	}
	switch msgs := validation.IsDNS1123Subdomain(group); {
	case group == "":
		errs = append(errs, field.Required(specPath.Child("group"), ""))
	case len(msgs) > 0:
		errs = append(errs, field.Invalid(specPath.Child("group"), group, strings.Join(msgs, ",")))
	case len(strings.Split(group, ".")) < 2:
		errs = append(errs, field.Invalid(specPath.Child("group"), group, "should be a domain with at least one dot"))
	}
	switch scope := jsonmap.String(spec, "scope"); scope {
	case "":
		errs = append(errs, field.Required(specPath.Child("scope"), ""))
	case "Namespaced", "Cluster":
	default:
		errs = append(errs, field.NotSupported(specPath.Child("scope"), scope, []string{"Cluster", "Namespaced"}))
	}
	versions := Versions(spec)
	if lenient && slices.ContainsFunc(versions, func(v map[string]any) bool {
		s, _, _ := structural.ParseNonStructural(rawSchema(v), nil)
		return s.Any(func(n *structural.Schema) bool { return n.HasDefault })
	}) {
		errs = append(errs, field.Invalid(specPath.Child("preserveUnknownFields"), true, "must be false in order to use defaults in the schema"))
	}
	shared := sharedParts(versions)
	storage, unique := 0, true
	seen := map[string]bool{}
	for i, v := range versions {
		p := specPath.Child("versions").Index(i)
		if b, _ := v["storage"].(bool); b {
			storage++
		}
		vname := jsonmap.String(v, "name")
		unique = unique && !seen[vname]
		seen[vname] = true
		for _, msg := range validation.IsDNS1035Label(vname) {
			errs = append(errs, field.Invalid(p.Child("name"), vname, msg))
		}
		if shared["schema"] && i > 0 {
			continue // the rest is shared, checked with the first version
		}
		e, err := validateVersionParts(ctx, v, p, specPath, shared, beta, lenient)
		if err != nil {
			return nil, err
		}
		errs = append(errs, e...)
	}
	givenSpec, _ := given["spec"].(map[string]any)
	if beta {
		errs = append(errs, validateV1beta1Parts(givenSpec)...)
	}
	switch {
	case beta && jsonmap.String(givenSpec, "version") != "":
		v := jsonmap.String(givenSpec, "version")
		for _, msg := range validation.IsDNS1035Label(v) {
			errs = append(errs, field.Invalid(specPath.Child("version"), v, msg))
		}
		if len(versions) > 0 && jsonmap.String(versions[0], "name") != v {
			errs = append(errs, field.Invalid(specPath.Child("version"), v, "must match the first version in spec.versions"))
		}
	case len(versions) > 0 && jsonmap.String(versions[0], "name") != "":
		// kube-apiserver's internal type still has the single spec.version
		// of v1beta1, set to the first version's name, and checks it too
		// when there is one.
		for _, msg := range validation.IsDNS1035Label(jsonmap.String(versions[0], "name")) {
			errs = append(errs, field.Invalid(specPath.Child("version"), jsonmap.String(versions[0], "name"), msg))
		}
	}
	dump := versionsDump(spec, shared)
	if !unique {
		errs = append(errs, field.Invalid(specPath.Child("versions"), dump, "must contain unique version names"))
	}
	if storage != 1 {
		errs = append(errs, field.Invalid(specPath.Child("versions"), dump, "must have exactly one version marked as storage version"))
	}
	errs = append(errs, validateNames(names, specPath.Child("names"))...)
	if s := jsonmap.String(jsonmap.Ensure(spec, "conversion"), "strategy"); keepUnknown && s != "None" {
		errs = append(errs, field.Invalid(specPath.Child("conversion", "strategy"), s, "must be None if spec.preserveUnknownFields is true"))
	}
	errs = append(errs, validateConversion(spec, specPath.Child("conversion"))...)
	if keepUnknown && !beta && !wasKept {
		errs = append(errs, field.Invalid(specPath.Child("preserveUnknownFields"), true, "cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead"))
	}
	// Checked as the update will store them (see AddStoredVersion).
	st, _ := obj["status"].(map[string]any)
	errs = append(errs, storedVersions(withStorageVersions(jsonmap.Strings(st, "storedVersions"), versions), versions)...)
	if old != nil {
		errs = append(errs, immutableParts(spec, oldSpec, old)...)
	}
	return errs, nil
}

// storedVersions checks a CRD's status.storedVersions against its
// versions: the storage version among them, and each still served (until
// a storage migration drops it from the list).
func storedVersions(stored []string, versions []map[string]any) field.ErrorList {
	path := field.NewPath("status", "storedVersions")
	if len(stored) == 0 {
		return field.ErrorList{field.Invalid(path, nil, "must have at least one stored version")}
	}
	var errs field.ErrorList
	unmatched := slices.Clone(stored)
	for _, v := range versions {
		name := jsonmap.String(v, "name")
		i := slices.Index(unmatched, name)
		if storage, _ := v["storage"].(bool); storage && i < 0 {
			errs = append(errs, field.Invalid(path, stored, "must have the storage version "+name))
		}
		if i >= 0 {
			unmatched[i] = "" // matched once
		}
	}
	for i, v := range unmatched {
		if v != "" {
			errs = append(errs, field.Invalid(path.Index(i), v, "missing from spec.versions; "+v+" was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in "+v+" and removes "+v+" from status.storedVersions"))
		}
	}
	return errs
}

// immutableParts checks what an update of a CRD may not change: its group,
// and once it is established, its scope and the names of its objects.
func immutableParts(spec, oldSpec, old map[string]any) field.ErrorList {
	specPath := field.NewPath("spec")
	var errs field.ErrorList
	immutable := func(path *field.Path, v, was string) {
		if v != was {
			errs = append(errs, field.Invalid(path, v, "field is immutable"))
		}
	}
	immutable(specPath.Child("group"), jsonmap.String(spec, "group"), jsonmap.String(oldSpec, "group"))
	if !Established(jsonmap.Child(old, "status")) {
		return errs
	}
	immutable(specPath.Child("scope"), jsonmap.String(spec, "scope"), jsonmap.String(oldSpec, "scope"))
	names, oldNames := jsonmap.Child(spec, "names"), jsonmap.Child(oldSpec, "names")
	for _, k := range []string{"kind", "plural"} {
		immutable(specPath.Child("names", k), jsonmap.String(names, k), jsonmap.String(oldNames, k))
	}
	return errs
}

// sharedParts says which parts of a version all versions have in common.
func sharedParts(versions []map[string]any) map[string]bool {
	shared := map[string]bool{}
	for _, part := range []string{"schema", "subresources", "additionalPrinterColumns", "selectableFields"} {
		same := len(versions) > 0
		for _, v := range versions[min(1, len(versions)):] {
			same = same && reflect.DeepEqual(v[part], versions[0][part])
		}
		shared[part] = same
	}
	return shared
}

// validateVersionParts checks a version's schema, subresources, printer
// columns and selectable fields, each at the spec's level if shared. A
// v1beta1 CRD (beta) needs a schema only for the versions it serves
// without keeping unknown fields; lenient allows a non-structural one
// that uses no x-kubernetes- extension.
func validateVersionParts(ctx context.Context, v map[string]any, p, specPath *field.Path, shared map[string]bool, beta, lenient bool) (field.ErrorList, error) {
	var errs field.ErrorList
	at := func(part string) *field.Path {
		if shared[part] {
			return specPath.Child(part)
		}
		return p.Child(part)
	}
	schemaPath := p.Child("schema", "openAPIV3Schema")
	if shared["schema"] {
		schemaPath = specPath.Child("validation", "openAPIV3Schema")
	}
	raw := rawSchema(v)
	var parsed *structural.Schema
	switch served, _ := v["served"].(bool); {
	case raw == nil && !beta:
		errs = append(errs, field.Required(p.Child("schema", "openAPIV3Schema"), ""))
	case raw == nil && !lenient && served:
		errs = append(errs, field.Required(p.Child("schema", "openAPIV3Schema"), "because otherwise all fields are pruned"))
	case raw != nil:
		var e field.ErrorList
		if lenient {
			var violations field.ErrorList
			parsed, violations, e = structural.ParseNonStructural(raw, schemaPath)
			if len(e) == 0 && len(violations) > 0 && parsed.UsesExtensions() {
				e = violations
			}
		} else {
			parsed, e = structural.Parse(raw, schemaPath)
		}
		errs = append(errs, e...)
		if len(e) == 0 {
			ruleErrs, err := celeval.CompileRules(ctx, parsed, schemaPath)
			if err != nil {
				return nil, err
			}
			errs = append(errs, ruleErrs...)
		}
	}
	subs, _ := v["subresources"].(map[string]any)
	if _, status := subs["status"]; status && raw != nil {
		if t, _ := raw["type"].(string); t != "" && t != "object" {
			errs = append(errs, field.Invalid(schemaPath.Child("type"), t, `only "object" is allowed as the type at the root of the schema if the status subresource is enabled`))
		}
	}
	if sc, ok := subs["scale"].(map[string]any); ok {
		errs = append(errs, validateScale(sc, at("subresources").Child("scale"))...)
	}
	errs = append(errs, validatePrinterColumns(v, at("additionalPrinterColumns"))...)
	for i, f := range jsonmap.List(v, "selectableFields") {
		m, _ := f.(map[string]any)
		path := jsonmap.String(m, "jsonPath")
		fp := at("selectableFields").Index(i).Child("jsonPath")
		if parsed != nil && !selectablePath(parsed, path) {
			errs = append(errs, field.Invalid(fp, path, "is an invalid path: does not refer to a valid field"))
		}
	}
	return errs, nil
}

// selectablePath reports whether a selectable field's path (".spec.color")
// names a property of the schema.
func selectablePath(s *structural.Schema, path string) bool {
	if !strings.HasPrefix(path, ".") {
		return false
	}
	for _, p := range strings.Split(path[1:], ".") {
		child, ok := s.Properties[p]
		if !ok {
			return false
		}
		s = child
	}
	return true
}

// rawSchema returns a CRD version's openAPIV3Schema (nil if none).
func rawSchema(v map[string]any) map[string]any {
	sch, _ := v["schema"].(map[string]any)
	raw, _ := sch["openAPIV3Schema"].(map[string]any)
	return raw
}

func validateNames(names map[string]any, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, k := range []string{"plural", "singular"} {
		v := jsonmap.String(names, k)
		if v == "" {
			errs = append(errs, field.Required(path.Child(k), ""))
			continue
		}
		for _, msg := range validation.IsDNS1035Label(v) {
			errs = append(errs, field.Invalid(path.Child(k), v, msg))
		}
	}
	for i, sn := range jsonmap.List(names, "shortNames") {
		s, _ := sn.(string)
		for _, msg := range validation.IsDNS1035Label(s) {
			errs = append(errs, field.Invalid(path.Child("shortNames").Index(i), s, msg))
		}
	}
	for _, k := range []string{"kind", "listKind"} {
		v := jsonmap.String(names, k)
		if v == "" {
			errs = append(errs, field.Required(path.Child(k), ""))
			continue
		}
		for _, msg := range validation.IsDNS1035Label(strings.ToLower(v)) {
			errs = append(errs, field.Invalid(path.Child(k), v, "may have mixed case, but should otherwise match: "+msg))
		}
	}
	if jsonmap.String(names, "kind") != "" && jsonmap.String(names, "kind") == jsonmap.String(names, "listKind") {
		errs = append(errs, field.Invalid(path.Child("listKind"), jsonmap.String(names, "listKind"), "kind and listKind may not be the same"))
	}
	for i, c := range jsonmap.List(names, "categories") {
		s, _ := c.(string)
		for _, msg := range validation.IsDNS1035Label(s) {
			errs = append(errs, field.Invalid(path.Child("categories").Index(i), s, msg))
		}
	}
	return errs
}

// validateConversion checks spec.conversion.
func validateConversion(spec map[string]any, path *field.Path) field.ErrorList {
	conv, _ := spec["conversion"].(map[string]any)
	switch strategy := jsonmap.String(conv, "strategy"); strategy {
	case "None":
		return nil
	case "Webhook":
		var errs field.ErrorList
		webhook, _ := conv["webhook"].(map[string]any)
		if _, ok := webhook["clientConfig"]; !ok {
			errs = append(errs, field.Required(path.Child("webhookClientConfig"), "required when strategy is set to Webhook"))
		}
		if len(jsonmap.List(webhook, "conversionReviewVersions")) == 0 {
			errs = append(errs, field.Required(path.Child("conversionReviewVersions"), ""))
		}
		return errs
	default:
		return field.ErrorList{field.NotSupported(path.Child("strategy"), strategy, []string{"None", "Webhook"})}
	}
}

// validateScale checks the paths of a scale subresource.
func validateScale(sc map[string]any, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	check := func(key string, required bool, under ...string) {
		v := jsonmap.String(sc, key)
		switch {
		case v == "" && required:
			errs = append(errs, field.Required(path.Child(key), ""))
		case v == "":
		case !simpleJSONPath(v):
			errs = append(errs, field.Invalid(path.Child(key), v, "must be a simple json path starting with ."))
		case !slices.ContainsFunc(under, func(u string) bool { return strings.HasPrefix(v, u+".") }):
			where := under[0]
			if len(under) > 1 {
				where = "either " + strings.Join(under, " or ")
			}
			errs = append(errs, field.Invalid(path.Child(key), v, "should be a json path under "+where))
		}
	}
	check("specReplicasPath", true, ".spec")
	check("statusReplicasPath", true, ".status")
	check("labelSelectorPath", false, ".spec", ".status")
	return errs
}

func simpleJSONPath(p string) bool {
	return strings.HasPrefix(p, ".") && !strings.ContainsAny(p, "[]*")
}

var printerColumnTypes = []string{"boolean", "date", "integer", "number", "string"}

func validatePrinterColumns(v map[string]any, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, c := range jsonmap.List(v, "additionalPrinterColumns") {
		col, _ := c.(map[string]any)
		p := path.Index(i)
		if jsonmap.String(col, "name") == "" {
			errs = append(errs, field.Required(p.Child("name"), ""))
		}
		if t := jsonmap.String(col, "type"); t == "" {
			errs = append(errs, field.Required(p.Child("type"), "must be one of "+strings.Join(printerColumnTypes, ",")))
		} else if !slices.Contains(printerColumnTypes, t) {
			errs = append(errs, field.Invalid(p.Child("type"), t, "must be one of "+strings.Join(printerColumnTypes, ",")))
		}
		switch jp := jsonmap.String(col, "jsonPath"); {
		case jp == "":
			errs = append(errs, field.Required(p.Child("JSONPath"), ""))
		case !strings.HasPrefix(jp, "."):
			errs = append(errs, field.Invalid(p.Child("JSONPath"), jp, "must be a simple json path starting with ."))
		}
	}
	return errs
}

// validateV1beta1Parts checks what only the spec of a v1beta1 CRD can get
// wrong: a part of the versions both at the top level and per version, or
// the same in every version rather than at the top level.
func validateV1beta1Parts(spec map[string]any) field.ErrorList {
	specPath := field.NewPath("spec")
	versions := Versions(spec)
	var errs field.ErrorList
	for _, p := range conversion.CRDVersionParts {
		if !conversion.IsEmptyPart(spec[p.Top]) && slices.ContainsFunc(versions, func(v map[string]any) bool { return !conversion.IsEmptyPart(v[p.Version]) }) {
			errs = append(errs, field.Forbidden(specPath.Child(p.Top), "top-level and per-version "+p.What+" are mutually exclusive"))
		}
	}
	// The versions are shown as given, their columns' paths in v1's words
	// as versionsDump reads them.
	given := structural.DeepCopy(spec).(map[string]any)
	for _, v := range Versions(given) {
		for _, c := range jsonmap.Items(v["additionalPrinterColumns"]) {
			if jp, ok := c["JSONPath"]; ok {
				c["jsonPath"] = jp
				delete(c, "JSONPath")
			}
		}
	}
	for _, p := range conversion.CRDVersionParts {
		if conversion.IdenticalPerVersion(versions, p.Version) {
			errs = append(errs, field.Invalid(specPath.Child("versions"), versionsDump(given, nil),
				fmt.Sprintf("per-version %s may not all be set to identical values (top-level %s should be used instead)", p.What, p.Top)))
		}
	}
	return errs
}
