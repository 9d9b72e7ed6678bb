// Package apiextensions is kube-apiserver's CustomResourceDefinition
// machinery that needs no store: a CRD's defaults and validation, the
// resources it serves, its conditions. The server runs the controllers
// (names, establishing, cleanup) in the CRD's write path.
package apiextensions

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/internal/jsonmap"
	"kubeplay/server/catalog"
	"kubeplay/server/celeval"
	"kubeplay/server/structural"
)

// CleanupFinalizer holds a CRD being deleted until its objects are gone.
const CleanupFinalizer = "customresourcecleanup.apiextensions.k8s.io"

// Default fills in what kube-apiserver defaults in a CRD: the list kind,
// the singular name, the conversion strategy, and the status of a new one.
func Default(obj map[string]any, creating bool) {
	spec := jsonmap.Ensure(obj, "spec")
	names := jsonmap.Ensure(spec, "names")
	if kind := jsonmap.String(names, "kind"); kind != "" {
		if jsonmap.String(names, "listKind") == "" {
			names["listKind"] = kind + "List"
		}
		if jsonmap.String(names, "singular") == "" {
			names["singular"] = strings.ToLower(kind)
		}
	}
	if _, ok := spec["conversion"]; !ok {
		spec["conversion"] = map[string]any{"strategy": "None"}
	}
	if creating {
		var stored []any
		for _, v := range withStorageVersions(nil, Versions(spec)) {
			stored = append(stored, v)
		}
		obj["status"] = map[string]any{
			"acceptedNames":  map[string]any{"plural": "", "kind": ""},
			"conditions":     nil,
			"storedVersions": stored,
		}
	}
}

// Versions are the versions of a CRD's spec.
func Versions(spec map[string]any) []map[string]any {
	list, _ := spec["versions"].([]any)
	out := make([]map[string]any, 0, len(list))
	for _, v := range list {
		if m, ok := v.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// Resources returns the resources a CRD serves: one per served
// version once the CRD is Established (and still while it is deleted, until
// its objects are gone).
func Resources(crd map[string]any) []catalog.Resource {
	spec, _ := crd["spec"].(map[string]any)
	names, _ := spec["names"].(map[string]any)
	st, _ := crd["status"].(map[string]any)
	if !Established(st) {
		return nil
	}
	storageVersion := ""
	var storageSchema *structural.Schema
	keepUnknown, _ := spec["preserveUnknownFields"].(bool)
	for _, v := range Versions(spec) {
		if b, _ := v["storage"].(bool); b {
			storageVersion = jsonmap.String(v, "name")
			storageSchema, _ = versionSchema(v, keepUnknown)
		}
	}
	if storageSchema == nil {
		return nil // validated when written; a corrupt stored CRD is not served
	}
	var out []catalog.Resource
	for _, v := range Versions(spec) {
		if b, _ := v["served"].(bool); !b {
			continue
		}
		parsed, raw := versionSchema(v, keepUnknown)
		if parsed == nil {
			continue // validated when written; a corrupt stored CRD is not served
		}
		custom := &catalog.Custom{PreserveUnknownFields: keepUnknown, Rules: celeval.NewRules(parsed), Terminating: deleting(crd), CRD: jsonmap.String(crd, "metadata", "name"), StorageVersion: storageVersion, StorageSchema: storageSchema, ListKind: jsonmap.String(names, "listKind"), Schema: parsed, RawSchema: raw}
		for _, c := range jsonmap.List(v, "additionalPrinterColumns") {
			m, _ := c.(map[string]any)
			custom.Columns = append(custom.Columns, catalog.PrinterColumn{
				Name: jsonmap.String(m, "name"), Type: jsonmap.String(m, "type"), Format: jsonmap.String(m, "format"),
				Description: jsonmap.String(m, "description"), JSONPath: jsonmap.String(m, "jsonPath"), Priority: int32(priority(m)),
			})
		}
		for _, f := range jsonmap.List(v, "selectableFields") {
			m, _ := f.(map[string]any)
			custom.SelectableFields = append(custom.SelectableFields, strings.TrimPrefix(jsonmap.String(m, "jsonPath"), "."))
		}
		r := catalog.Resource{
			Group: jsonmap.String(spec, "group"), Version: jsonmap.String(v, "name"), Kind: jsonmap.String(names, "kind"),
			Resource: jsonmap.String(names, "plural"), Singular: jsonmap.String(names, "singular"),
			Namespaced: jsonmap.String(spec, "scope") == "Namespaced",
			Verbs:      []string{"delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"},
			ShortNames: jsonmap.Strings(names, "shortNames"), Categories: jsonmap.Strings(names, "categories"),
			Custom: custom,
		}
		subs, _ := v["subresources"].(map[string]any)
		if _, ok := subs["status"]; ok {
			r.Subresources = append(r.Subresources, catalog.Subresource{Name: "status", Group: r.Group, Version: r.Version, Kind: r.Kind, Verbs: []string{"get", "patch", "update"}})
		}
		if sc, ok := subs["scale"].(map[string]any); ok {
			custom.Scale = &catalog.Scale{SpecReplicasPath: jsonmap.String(sc, "specReplicasPath"), StatusReplicasPath: jsonmap.String(sc, "statusReplicasPath"), LabelSelectorPath: jsonmap.String(sc, "labelSelectorPath")}
			r.Subresources = append(r.Subresources, catalog.Subresource{Name: "scale", Group: "autoscaling", Version: "v1", Kind: "Scale", Verbs: []string{"get", "patch", "update"}})
		}
		out = append(out, r)
	}
	return out
}

// versionSchema returns a CRD version's schema, parsed (nil if invalid),
// and the schema it publishes. A version without one (only v1beta1 allows
// it) takes any object; keepUnknown (v1beta1's spec.preserveUnknownFields)
// keeps what the schema does not know, and allows a non-structural schema.
// Neither publishes its fields, as kube-apiserver publishes only an object.
func versionSchema(v map[string]any, keepUnknown bool) (*structural.Schema, map[string]any) {
	anyObject := map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}
	raw := rawSchema(v)
	if raw == nil {
		return &structural.Schema{Type: "object", PreserveUnknownFields: true}, anyObject
	}
	if !keepUnknown {
		parsed, _ := structural.Parse(raw, field.NewPath("schema"))
		return parsed, raw
	}
	parsed, violations, errs := structural.ParseNonStructural(raw, field.NewPath("schema"))
	if len(errs) > 0 {
		return nil, raw
	}
	parsed.KeepUnknownFields()
	if len(violations) > 0 {
		return parsed, anyObject
	}
	return parsed, raw
}

// NonStructuralCondition is kube-apiserver's NonStructuralSchema condition
// of a CRD that keeps unknown fields or has a non-structural schema (only
// v1beta1 allows either), nil for others.
func NonStructuralCondition(spec map[string]any, now string) map[string]any {
	var violations field.ErrorList
	if b, _ := spec["preserveUnknownFields"].(bool); b {
		violations = append(violations, field.Invalid(field.NewPath("spec", "preserveUnknownFields"), true, "must be false"))
	}
	for i, v := range Versions(spec) {
		if raw := rawSchema(v); raw != nil {
			_, vs, _ := structural.ParseNonStructural(raw, field.NewPath("spec", "versions").Index(i).Child("schema", "openAPIV3Schema"))
			violations = append(violations, vs...)
		}
	}
	if len(violations) == 0 {
		return nil
	}
	return Condition("NonStructuralSchema", "True", "Violations", violations.ToAggregate().Error(), now)
}

// Established reports whether a CRD's status says it is served.
func Established(st map[string]any) bool {
	for _, c := range jsonmap.List(st, "conditions") {
		m, _ := c.(map[string]any)
		if jsonmap.String(m, "type") == "Established" && jsonmap.String(m, "status") == "True" {
			return true
		}
	}
	return false
}

// Condition is a CRD condition, set at now.
func Condition(typ, status, reason, message, now string) map[string]any {
	return map[string]any{"type": typ, "status": status, "reason": reason, "message": message, "lastTransitionTime": now}
}

// AddStoredVersion adds a CRD's storage version to its
// status.storedVersions, after an update of its spec. The status is
// copied first: it is shared with the stored object's.
func AddStoredVersion(obj map[string]any) {
	st := structural.DeepCopy(jsonmap.Ensure(obj, "status")).(map[string]any)
	obj["status"] = st
	var stored []any
	for _, v := range withStorageVersions(jsonmap.Strings(st, "storedVersions"), Versions(jsonmap.Ensure(obj, "spec"))) {
		stored = append(stored, v)
	}
	st["storedVersions"] = stored
}

// withStorageVersions is stored with the storage versions of versions it
// lacks.
func withStorageVersions(stored []string, versions []map[string]any) []string {
	for _, v := range versions {
		if b, _ := v["storage"].(bool); b && !slices.Contains(stored, jsonmap.String(v, "name")) {
			stored = append(stored, jsonmap.String(v, "name"))
		}
	}
	return stored
}

func deleting(obj map[string]any) bool {
	return jsonmap.Child(obj, "metadata")["deletionTimestamp"] != nil
}

// priority is a printer column's priority.
func priority(col map[string]any) int64 {
	n, _ := jsonmap.Int(col, "priority")
	return n
}
