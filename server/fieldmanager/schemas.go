package fieldmanager

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"kubeplay/internal/jsonmap"
)

// schemasJSON holds the components.schemas of the embedded OpenAPI v3
// documents (server/openapi), each once and without descriptions: decoding
// the documents themselves takes seconds in the browser.
//
//go:embed zz_generated_schemas.json
var schemasJSON []byte

// Schemas returns the schemas of the built-in types, keyed by definition
// name ("io.k8s.api.apps.v1.Deployment"); references between them
// ("#/components/schemas/<name>") resolve within the map. It is decoded
// once per process and must not be modified.
var Schemas = sync.OnceValues(func() (map[string]*spec.Schema, error) {
	// kube-openapi's own decoding of spec.Schema takes seconds in the
	// browser; decoding to maps and building the schemas is ten times
	// faster.
	var raw map[string]map[string]any
	if err := json.Unmarshal(schemasJSON, &raw); err != nil {
		return nil, err
	}
	out := make(map[string]*spec.Schema, len(raw))
	for name, m := range raw {
		s, err := toSchema(m)
		if err != nil {
			return nil, fmt.Errorf("schema %s: %w", name, err)
		}
		out[name] = s
	}
	return out, nil
})

// toSchema builds a schema from its decoded JSON: the keywords the
// generated documents use (type, format, $ref, allOf, oneOf, properties,
// additionalProperties, items, default, required, enum) and the x-
// extensions.
func toSchema(m map[string]any) (*spec.Schema, error) {
	s := &spec.Schema{}
	for k, v := range m {
		var err error
		switch k {
		case "type":
			t, ok := v.(string)
			if !ok {
				return nil, fmt.Errorf("type %v is not a string", v)
			}
			s.Type = spec.StringOrArray{t}
		case "format":
			s.Format, _ = v.(string)
		case "$ref":
			ref, _ := v.(string)
			s.Ref, err = spec.NewRef(ref)
		case "default":
			s.Default = v
		case "required":
			s.Required = jsonmap.StringsOf(v)
		case "enum":
			s.Enum, _ = v.([]any)
		case "allOf":
			s.AllOf, err = toSchemas(v)
		case "oneOf":
			s.OneOf, err = toSchemas(v)
		case "properties":
			props, _ := v.(map[string]any)
			s.Properties = make(map[string]spec.Schema, len(props))
			for name, e := range props {
				sub, err := toSchemaAny(e)
				if err != nil {
					return nil, err
				}
				s.Properties[name] = *sub
			}
		case "additionalProperties":
			if allows, ok := v.(bool); ok {
				s.AdditionalProperties = &spec.SchemaOrBool{Allows: allows}
				break
			}
			sub, err := toSchemaAny(v)
			if err != nil {
				return nil, err
			}
			s.AdditionalProperties = &spec.SchemaOrBool{Allows: true, Schema: sub}
		case "items":
			sub, err := toSchemaAny(v)
			if err != nil {
				return nil, err
			}
			s.Items = &spec.SchemaOrArray{Schema: sub}
		default:
			if len(k) > 2 && k[:2] == "x-" {
				s.AddExtension(k, v)
				break
			}
			return nil, fmt.Errorf("keyword %q is not supported", k)
		}
		if err != nil {
			return nil, err
		}
	}
	return s, nil
}

func toSchemas(v any) ([]spec.Schema, error) {
	list, _ := v.([]any)
	out := make([]spec.Schema, 0, len(list))
	for _, e := range list {
		sub, err := toSchemaAny(e)
		if err != nil {
			return nil, err
		}
		out = append(out, *sub)
	}
	return out, nil
}

func toSchemaAny(v any) (*spec.Schema, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("schema %v is not an object", v)
	}
	return toSchema(m)
}

// Definitions maps each kind to the name of its schema in Schemas, from the
// schemas' x-kubernetes-group-version-kind extensions.
var Definitions = sync.OnceValues(func() (map[schema.GroupVersionKind]string, error) {
	schemas, err := Schemas()
	if err != nil {
		return nil, err
	}
	out := map[schema.GroupVersionKind]string{}
	for name, s := range schemas {
		list, _ := s.Extensions["x-kubernetes-group-version-kind"].([]any)
		for _, e := range list {
			m, _ := e.(map[string]any)
			g, _ := m["group"].(string)
			v, _ := m["version"].(string)
			k, _ := m["kind"].(string)
			out[schema.GroupVersionKind{Group: g, Version: v, Kind: k}] = name
		}
	}
	return out, nil
})
