package structural

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/internal/jsonmap"
)

// Schema is one node of a structural schema.
type Schema struct {
	Type, Format, Description string
	Properties                map[string]*Schema
	Items                     *Schema
	// AdditionalProperties is the schema of a map's values.
	AdditionalProperties *Schema
	Required             []string
	Enum                 []any
	Default              any
	HasDefault           bool
	Nullable             bool

	Minimum, Maximum                   *float64
	ExclusiveMinimum, ExclusiveMaximum bool
	MultipleOf                         *float64
	MinLength, MaxLength               *int64
	MinItems, MaxItems                 *int64
	MinProperties, MaxProperties       *int64
	Pattern                            *regexp.Regexp `json:"-"` // CEL does not read it

	PreserveUnknownFields bool
	EmbeddedResource      bool
	IntOrString           bool
	ListType              string
	ListMapKeys           []string
	MapType               string

	// Rules are the x-kubernetes-validations (CEL) of this node.
	Rules []Rule
}

// Rule is one x-kubernetes-validations entry.
type Rule struct {
	Rule, Message, MessageExpression, Reason, FieldPath string
	OptionalOldSelf                                     bool
}

// Parse reads a CRD's openAPIV3Schema (decoded JSON) into a Schema,
// returning kube-apiserver's errors for what is not a valid structural
// schema, reported under path.
func Parse(raw map[string]any, path *field.Path) (*Schema, field.ErrorList) {
	s, errs := parse(raw, path, true, nil)
	if len(errs) > 0 {
		// The root's type is checked apart, as kube-apiserver checks it.
		typ, _ := raw["type"].(string)
		return nil, append(errs, rootType(typ, path)...)
	}
	if errs := checkDefaults(s, path, true); len(errs) > 0 {
		return nil, errs
	}
	return s, rootType(s.Type, path)
}

// rootType checks the type of a schema's root: an object.
func rootType(typ string, path *field.Path) field.ErrorList {
	switch typ {
	case "object":
		return nil
	case "":
		return field.ErrorList{field.Required(path.Child("type"), "must not be empty at the root")}
	}
	return field.ErrorList{field.Invalid(path.Child("type"), typ, "must be object at the root")}
}

// ParseNonStructural reads a schema as apiextensions.k8s.io/v1beta1 accepts
// it from a CRD that keeps unknown fields: what makes it non-structural (a
// field without a type, at the root too, or metadata said more of) is
// returned as violations, not errors, and a field without a type takes
// any value.
func ParseNonStructural(raw map[string]any, path *field.Path) (s *Schema, violations, errs field.ErrorList) {
	violations = field.ErrorList{}
	s, errs = parse(raw, path, true, &violations)
	if len(errs) > 0 {
		return nil, violations, errs
	}
	if errs := checkDefaults(s, path, true); len(errs) > 0 {
		return nil, violations, errs
	}
	switch s.Type {
	case "object":
	case "":
		violations = append(violations, field.Required(path.Child("type"), "must not be empty at the root"))
	default:
		errs = append(errs, field.Invalid(path.Child("type"), s.Type, "must be object at the root"))
	}
	return s, violations, errs
}

// parse reads one node of a schema. A non-nil violations collects what
// makes it non-structural instead of errors.
func parse(raw map[string]any, path *field.Path, root bool, violations *field.ErrorList) (*Schema, field.ErrorList) {
	var errs field.ErrorList
	nonStructural := func(e ...*field.Error) {
		if violations != nil {
			*violations = append(*violations, e...)
		} else {
			errs = append(errs, e...)
		}
	}
	s := &Schema{}
	s.Type, _ = raw["type"].(string)
	s.Format, _ = raw["format"].(string)
	s.Description, _ = raw["description"].(string)
	s.Nullable, _ = raw["nullable"].(bool)
	s.PreserveUnknownFields, _ = raw["x-kubernetes-preserve-unknown-fields"].(bool)
	s.EmbeddedResource, _ = raw["x-kubernetes-embedded-resource"].(bool)
	s.IntOrString, _ = raw["x-kubernetes-int-or-string"].(bool)
	s.ListType, _ = raw["x-kubernetes-list-type"].(string)
	s.MapType, _ = raw["x-kubernetes-map-type"].(string)
	if u, _ := raw["uniqueItems"].(bool); u {
		errs = append(errs, field.Forbidden(path.Child("uniqueItems"), "uniqueItems cannot be set to true since the runtime complexity becomes quadratic"))
	}
	s.ExclusiveMinimum, _ = raw["exclusiveMinimum"].(bool)
	s.ExclusiveMaximum, _ = raw["exclusiveMaximum"].(bool)
	s.ListMapKeys = jsonmap.Strings(raw, "x-kubernetes-list-map-keys")
	s.Required = jsonmap.Strings(raw, "required")
	s.Minimum, s.Maximum, s.MultipleOf = number(raw["minimum"]), number(raw["maximum"]), number(raw["multipleOf"])
	s.MinLength, s.MaxLength = integer(raw["minLength"]), integer(raw["maxLength"])
	s.MinItems, s.MaxItems = integer(raw["minItems"]), integer(raw["maxItems"])
	s.MinProperties, s.MaxProperties = integer(raw["minProperties"]), integer(raw["maxProperties"])
	if e, ok := raw["enum"].([]any); ok {
		s.Enum = e
	}
	if d, ok := raw["default"]; ok {
		s.Default, s.HasDefault = d, true
	}
	if p, ok := raw["pattern"].(string); ok {
		re, err := regexp.Compile(p)
		if err != nil {
			errs = append(errs, field.Invalid(path.Child("pattern"), p, fmt.Sprintf("must be a valid regular expression, but isn't: %v", err)))
		}
		s.Pattern = re
	}
	switch s.Type {
	case "", "object", "array", "string", "integer", "number", "boolean":
	default:
		errs = append(errs, field.NotSupported(path.Child("type"), s.Type, []string{"array", "boolean", "integer", "number", "object", "string"}))
	}
	_, ref := raw["$ref"]
	if ref {
		errs = append(errs, field.Forbidden(path.Child("$ref"), "$ref is not supported"))
	}
	if s.Type == "" && !s.IntOrString && !s.PreserveUnknownFields && !root && !ref {
		nonStructural(field.Required(path.Child("type"), "must not be empty for specified object fields"))
	}
	if props, ok := raw["properties"].(map[string]any); ok {
		s.Properties = map[string]*Schema{}
		for _, name := range slices.Sorted(maps.Keys(props)) {
			m, _ := props[name].(map[string]any)
			child, e := parse(m, path.Child("properties").Key(name), false, violations)
			errs = append(errs, e...)
			s.Properties[name] = child
		}
		// A type not in the list has its own error alone.
		if slices.Contains([]string{"array", "string", "integer", "number", "boolean"}, s.Type) {
			errs = append(errs, field.Forbidden(path.Child("properties"), "must not be specified when type is not object"))
		}
	}
	if m, ok := raw["additionalProperties"].(map[string]any); ok {
		child, e := parse(m, path.Child("additionalProperties"), false, violations)
		errs = append(errs, e...)
		s.AdditionalProperties = child
		if s.Properties != nil {
			errs = append(errs, field.Forbidden(path.Child("additionalProperties"), "additionalProperties and properties are mutual exclusive"))
		}
	}
	if m, ok := raw["items"].(map[string]any); ok {
		child, e := parse(m, path.Child("items"), false, violations)
		errs = append(errs, e...)
		s.Items = child
	} else if s.Type == "array" {
		errs = append(errs, field.Required(path.Child("items"), "must be specified"))
	}
	if rules, ok := raw["x-kubernetes-validations"].([]any); ok {
		for _, r := range rules {
			m, _ := r.(map[string]any)
			rule := Rule{}
			rule.Rule, _ = m["rule"].(string)
			rule.Message, _ = m["message"].(string)
			rule.MessageExpression, _ = m["messageExpression"].(string)
			rule.Reason, _ = m["reason"].(string)
			rule.FieldPath, _ = m["fieldPath"].(string)
			rule.OptionalOldSelf, _ = m["optionalOldSelf"].(bool)
			s.Rules = append(s.Rules, rule)
		}
	}
	if root {
		nonStructural(checkMetadata(raw, path)...)
	}
	if s.EmbeddedResource && s.Properties == nil && !s.PreserveUnknownFields {
		errs = append(errs, field.Required(path.Child("properties"), "must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields"))
	}
	errs = append(errs, checkListType(s, path)...)
	return s, errs
}

// checkMetadata allows the root schema to say only that metadata is an
// object, with restrictions on its name and generateName.
func checkMetadata(raw map[string]any, path *field.Path) field.ErrorList {
	props, _ := raw["properties"].(map[string]any)
	md, ok := props["metadata"].(map[string]any)
	if !ok {
		return nil
	}
	props, _ = md["properties"].(map[string]any)
	for k := range md {
		if k != "type" && k != "properties" {
			props = map[string]any{k: nil} // anything else is not allowed either
		}
	}
	for k := range props {
		if k != "name" && k != "generateName" {
			return field.ErrorList{field.Forbidden(path.Child("properties").Key("metadata"),
				"must not specify anything other than name and generateName, but metadata is implicitly specified")}
		}
	}
	return nil
}

// checkListType checks what x-kubernetes-list-type requires of a list's
// items: list-map keys required or defaulted, set items atomic.
func checkListType(s *Schema, path *field.Path) field.ErrorList {
	if s.Items == nil {
		return nil
	}
	var errs field.ErrorList
	switch s.ListType {
	case "map":
		for _, k := range s.ListMapKeys {
			if p, ok := s.Items.Properties[k]; ok && !p.HasDefault && !slices.Contains(s.Items.Required, k) {
				errs = append(errs, field.Required(path.Child("items", "properties").Key(k).Child("default"),
					"this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property"))
			}
		}
	case "set":
		if s.Items.Type == "object" && s.Items.MapType != "atomic" {
			var mapType any
			if s.Items.MapType != "" {
				mapType = s.Items.MapType
			}
			errs = append(errs, field.Invalid(path.Child("items", "x-kubernetes-map-type"), mapType, "must be atomic as item of a list with x-kubernetes-list-type=set"))
		}
	}
	return errs
}

// checkDefaults validates every default against its own schema, as
// kube-apiserver does when the CRD is written.
func checkDefaults(s *Schema, path *field.Path, root bool) field.ErrorList {
	var errs field.ErrorList
	if s.HasDefault {
		at := path.Child("default")
		var unknown []string
		if prune(s, DeepCopy(s.Default), nil, &unknown); len(unknown) > 0 {
			return field.ErrorList{field.Invalid(at, s.Default, "must not have unknown fields")}
		}
		for _, e := range validate(s, DeepCopy(s.Default), nil, false, prior{}) {
			if e.Field != "<nil>" && e.Field != "" {
				e.Field = at.String() + "." + e.Field
			} else {
				e.Field = at.String()
			}
			errs = append(errs, e)
		}
		if m, ok := s.Default.(map[string]any); ok && root {
			// A default for the whole object is a resource.
			for _, k := range []string{"apiVersion", "kind"} {
				if v, _ := m[k].(string); v == "" {
					errs = append(errs, field.Required(at.Child(k), ""))
				}
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(s.Properties)) {
		errs = append(errs, checkDefaults(s.Properties[k], path.Child("properties").Key(k), false)...)
	}
	if s.Items != nil {
		errs = append(errs, checkDefaults(s.Items, path.Child("items"), false)...)
	}
	if s.AdditionalProperties != nil {
		errs = append(errs, checkDefaults(s.AdditionalProperties, path.Child("additionalProperties"), false)...)
	}
	return errs
}

func number(v any) *float64 {
	if f, ok := toFloat(v); ok {
		return &f
	}
	return nil
}

func integer(v any) *int64 {
	if f, ok := toFloat(v); ok {
		n := int64(f)
		return &n
	}
	return nil
}

// toFloat returns the value of a JSON number in any of the forms a decoded
// object holds it.
func toFloat(v any) (float64, bool) {
	switch n := v.(type) {
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	case float64:
		return n, true
	case int64:
		return float64(n), true
	case int:
		return float64(n), true
	}
	return 0, false
}

// isInteger reports whether v is a JSON number without a fraction.
func isInteger(v any) bool {
	switch n := v.(type) {
	case json.Number:
		if _, err := n.Int64(); err == nil {
			return true
		}
		f, err := n.Float64()
		return err == nil && f == math.Trunc(f) && !slices.Contains([]byte(n.String()), '.')
	case int64, int:
		return true
	case float64:
		return n == math.Trunc(n)
	}
	return false
}

// KeepUnknownFields marks every node of s as keeping the fields it does not
// know, as x-kubernetes-preserve-unknown-fields would: what a CRD with
// spec.preserveUnknownFields (apiextensions.k8s.io/v1beta1's default) asks
// for, whose objects are never pruned.
func (s *Schema) KeepUnknownFields() {
	if s == nil {
		return
	}
	s.PreserveUnknownFields = true
	for _, p := range s.Properties {
		p.KeepUnknownFields()
	}
	s.Items.KeepUnknownFields()
	s.AdditionalProperties.KeepUnknownFields()
}

// Any reports whether fn holds for a node of s.
func (s *Schema) Any(fn func(*Schema) bool) bool {
	if s == nil {
		return false
	}
	if fn(s) || s.Items.Any(fn) || s.AdditionalProperties.Any(fn) {
		return true
	}
	for _, p := range s.Properties {
		if p.Any(fn) {
			return true
		}
	}
	return false
}

// UsesExtensions reports whether a node of s says one of the
// x-kubernetes- extensions that only structural schemas may use.
func (s *Schema) UsesExtensions() bool {
	return s.Any(func(n *Schema) bool {
		return n.EmbeddedResource || n.PreserveUnknownFields || n.IntOrString || n.ListMapKeys != nil || n.ListType != "" || n.MapType != "" || n.Rules != nil
	})
}
