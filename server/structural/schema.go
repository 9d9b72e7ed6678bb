package structural

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"

	"k8s.io/apimachinery/pkg/util/validation/field"
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
	Pattern                            *regexp.Regexp

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
	s, errs := parse(raw, path, true)
	if len(errs) > 0 {
		return nil, errs
	}
	if s.Type != "object" {
		errs = append(errs, field.Invalid(path.Child("type"), s.Type, "must be object at the root"))
	}
	return s, errs
}

func parse(raw map[string]any, path *field.Path, root bool) (*Schema, field.ErrorList) {
	var errs field.ErrorList
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
	s.ListMapKeys = stringList(raw["x-kubernetes-list-map-keys"])
	s.Required = stringList(raw["required"])
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
	if s.Type == "" && !s.IntOrString && !s.PreserveUnknownFields && !root {
		errs = append(errs, field.Required(path.Child("type"), "must not be empty for specified object fields"))
	}
	if props, ok := raw["properties"].(map[string]any); ok {
		s.Properties = map[string]*Schema{}
		for _, name := range slices.Sorted(maps.Keys(props)) {
			m, _ := props[name].(map[string]any)
			child, e := parse(m, path.Child("properties").Key(name), false)
			errs = append(errs, e...)
			s.Properties[name] = child
		}
		if s.Type != "" && s.Type != "object" {
			errs = append(errs, field.Forbidden(path.Child("properties"), "must not be specified when type is not object"))
		}
	}
	if m, ok := raw["additionalProperties"].(map[string]any); ok {
		child, e := parse(m, path.Child("additionalProperties"), false)
		errs = append(errs, e...)
		s.AdditionalProperties = child
		if s.Properties != nil {
			errs = append(errs, field.Forbidden(path.Child("additionalProperties"), "additionalProperties and properties are mutual exclusive"))
		}
	}
	if m, ok := raw["items"].(map[string]any); ok {
		child, e := parse(m, path.Child("items"), false)
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
	if s.HasDefault && root {
		errs = append(errs, field.Forbidden(path.Child("default"), "must not be set at the root"))
	}
	return s, errs
}

func stringList(v any) []string {
	l, _ := v.([]any)
	var out []string
	for _, e := range l {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
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
