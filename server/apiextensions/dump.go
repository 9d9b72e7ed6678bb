package apiextensions

import (
	"encoding/json"

	"kubeplay/internal/jsonmap"
	"kubeplay/server/celtypes"
)

// kube-apiserver shows some values in its CRD errors as its internal Go
// types marshalled to JSON (field names, null for unset pointers). These
// types have the same shape, to show the same values.

type versionDump struct {
	Name                     string
	Served, Storage          bool
	Deprecated               bool
	DeprecationWarning       *string
	Schema                   *validationDump
	Subresources             *subresourcesDump
	AdditionalPrinterColumns []columnDump
	SelectableFields         []selectableDump
}

type validationDump struct{ OpenAPIV3Schema *propsDump }

type subresourcesDump struct {
	Status *struct{}
	Scale  *scaleDump
}

type scaleDump struct {
	SpecReplicasPath, StatusReplicasPath string
	LabelSelectorPath                    *string
}

type columnDump struct {
	Name, Type, Format, Description string
	Priority                        int32
	JSONPath                        string
}

type selectableDump struct{ JSONPath string }

type propsDump struct {
	ID, Schema             string
	Ref                    *string
	Description, Type      string
	Nullable               bool
	Format, Title          string
	Default                any
	Maximum                *float64
	ExclusiveMaximum       bool
	Minimum                *float64
	ExclusiveMinimum       bool
	MaxLength, MinLength   *int64
	Pattern                string
	MaxItems, MinItems     *int64
	UniqueItems            bool
	MultipleOf             *float64
	Enum                   []any
	MaxProperties          *int64
	MinProperties          *int64
	Required               []string
	Items                  *itemsDump
	AllOf, OneOf, AnyOf    []propsDump
	Not                    *propsDump
	Properties             map[string]propsDump
	AdditionalProperties   *boolDump
	PatternProperties      map[string]propsDump
	Dependencies           any
	AdditionalItems        *boolDump
	Definitions            map[string]propsDump
	ExternalDocs           any
	Example                any
	XPreserveUnknownFields *bool
	XEmbeddedResource      bool
	XIntOrString           bool
	XListMapKeys           []string
	XListType, XMapType    *string
	XValidations           []celtypes.ValidationRule
}

type itemsDump struct {
	Schema      *propsDump
	JSONSchemas []propsDump
}

type boolDump struct {
	Allows bool
	Schema *propsDump
}

// versionsDump is spec.versions as kube-apiserver shows it: without the
// parts all versions share, which its internal type holds once for all.
func versionsDump(spec map[string]any, shared map[string]bool) any {
	list, ok := spec["versions"].([]any)
	if !ok {
		return nil
	}
	out := []versionDump{}
	for _, e := range list {
		v, _ := e.(map[string]any)
		d := versionDump{Name: jsonmap.String(v, "name")}
		d.Served, _ = v["served"].(bool)
		d.Storage, _ = v["storage"].(bool)
		d.Deprecated, _ = v["deprecated"].(bool)
		d.DeprecationWarning = optString(v, "deprecationWarning")
		if sch, ok := v["schema"].(map[string]any); ok && !shared["schema"] {
			d.Schema = &validationDump{}
			if raw, ok := sch["openAPIV3Schema"].(map[string]any); ok {
				d.Schema.OpenAPIV3Schema = schemaDump(raw)
			}
		}
		if subs, ok := v["subresources"].(map[string]any); ok && !shared["subresources"] {
			d.Subresources = &subresourcesDump{}
			if _, ok := subs["status"]; ok {
				d.Subresources.Status = &struct{}{}
			}
			if sc, ok := subs["scale"].(map[string]any); ok {
				d.Subresources.Scale = &scaleDump{SpecReplicasPath: jsonmap.String(sc, "specReplicasPath"), StatusReplicasPath: jsonmap.String(sc, "statusReplicasPath"),
					LabelSelectorPath: optString(sc, "labelSelectorPath")}
			}
		}
		if !shared["additionalPrinterColumns"] {
			for _, c := range jsonmap.List(v, "additionalPrinterColumns") {
				m, _ := c.(map[string]any)
				d.AdditionalPrinterColumns = append(d.AdditionalPrinterColumns, columnDump{Name: jsonmap.String(m, "name"), Type: jsonmap.String(m, "type"),
					Format: jsonmap.String(m, "format"), Description: jsonmap.String(m, "description"), Priority: int32(priority(m)), JSONPath: jsonmap.String(m, "jsonPath")})
			}
		}
		if !shared["selectableFields"] {
			for _, f := range jsonmap.List(v, "selectableFields") {
				m, _ := f.(map[string]any)
				d.SelectableFields = append(d.SelectableFields, selectableDump{JSONPath: jsonmap.String(m, "jsonPath")})
			}
		}
		out = append(out, d)
	}
	return out
}

func optString(m map[string]any, key string) *string {
	if s, ok := m[key].(string); ok {
		return &s
	}
	return nil
}

// schemaDump is a JSONSchemaProps as kube-apiserver's internal type holds it.
func schemaDump(raw map[string]any) *propsDump {
	if raw == nil {
		return nil
	}
	d := &propsDump{Ref: optString(raw, "$ref"), Description: jsonmap.String(raw, "description"), Type: jsonmap.String(raw, "type"),
		Format: jsonmap.String(raw, "format"), Title: jsonmap.String(raw, "title"), Pattern: jsonmap.String(raw, "pattern"),
		XListType: optString(raw, "x-kubernetes-list-type"), XMapType: optString(raw, "x-kubernetes-map-type"),
		Default: raw["default"], Example: raw["example"]}
	d.ID, _ = raw["id"].(string)
	d.Schema, _ = raw["$schema"].(string)
	d.Nullable, _ = raw["nullable"].(bool)
	d.ExclusiveMaximum, _ = raw["exclusiveMaximum"].(bool)
	d.ExclusiveMinimum, _ = raw["exclusiveMinimum"].(bool)
	d.UniqueItems, _ = raw["uniqueItems"].(bool)
	d.XEmbeddedResource, _ = raw["x-kubernetes-embedded-resource"].(bool)
	d.XIntOrString, _ = raw["x-kubernetes-int-or-string"].(bool)
	if b, ok := raw["x-kubernetes-preserve-unknown-fields"].(bool); ok {
		d.XPreserveUnknownFields = &b
	}
	d.Maximum, d.Minimum, d.MultipleOf = floatOf(raw["maximum"]), floatOf(raw["minimum"]), floatOf(raw["multipleOf"])
	d.MaxLength, d.MinLength = intOf(raw["maxLength"]), intOf(raw["minLength"])
	d.MaxItems, d.MinItems = intOf(raw["maxItems"]), intOf(raw["minItems"])
	d.MaxProperties, d.MinProperties = intOf(raw["maxProperties"]), intOf(raw["minProperties"])
	d.Enum = jsonmap.List(raw, "enum")
	d.Required = jsonmap.Strings(raw, "required")
	d.XListMapKeys = jsonmap.Strings(raw, "x-kubernetes-list-map-keys")
	if items, ok := raw["items"].(map[string]any); ok {
		d.Items = &itemsDump{Schema: schemaDump(items)}
	}
	for _, k := range []string{"allOf", "oneOf", "anyOf"} {
		var list []propsDump
		for _, e := range jsonmap.List(raw, k) {
			m, _ := e.(map[string]any)
			list = append(list, *schemaDump(m))
		}
		switch k {
		case "allOf":
			d.AllOf = list
		case "oneOf":
			d.OneOf = list
		default:
			d.AnyOf = list
		}
	}
	if not, ok := raw["not"].(map[string]any); ok {
		d.Not = schemaDump(not)
	}
	if props, ok := raw["properties"].(map[string]any); ok {
		d.Properties = map[string]propsDump{}
		for k, e := range props {
			m, _ := e.(map[string]any)
			d.Properties[k] = *schemaDump(m)
		}
	}
	switch ap := raw["additionalProperties"].(type) {
	case bool:
		d.AdditionalProperties = &boolDump{Allows: ap}
	case map[string]any:
		d.AdditionalProperties = &boolDump{Allows: true, Schema: schemaDump(ap)}
	}
	for _, r := range jsonmap.List(raw, "x-kubernetes-validations") {
		m, _ := r.(map[string]any)
		rd := celtypes.ValidationRule{Rule: jsonmap.String(m, "rule"), Message: jsonmap.String(m, "message"), MessageExpression: jsonmap.String(m, "messageExpression"),
			Reason: optString(m, "reason"), FieldPath: jsonmap.String(m, "fieldPath")}
		if b, ok := m["optionalOldSelf"].(bool); ok {
			rd.OptionalOldSelf = &b
		}
		d.XValidations = append(d.XValidations, rd)
	}
	return d
}

func floatOf(v any) *float64 {
	if n, ok := v.(json.Number); ok {
		f, err := n.Float64()
		if err == nil {
			return &f
		}
	}
	if f, ok := v.(float64); ok {
		return &f
	}
	return nil
}

func intOf(v any) *int64 {
	if f := floatOf(v); f != nil {
		n := int64(*f)
		return &n
	}
	if n, ok := v.(int64); ok {
		return &n
	}
	return nil
}
