package openapi

import (
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"kubeplay/server/structural"
	"kubeplay/server/typed"
)

// structuralCache holds the schemas Structural made, by kind.
var structuralCache sync.Map // schema.GroupVersionKind -> *structural.Schema

// Structural returns the schema of a built-in kind as a structural schema,
// its references resolved, for typing CEL expressions over its objects;
// ok is false for a kind the embedded documents do not define (a custom
// resource's). Only what typing needs is kept: types, formats, properties,
// items, additionalProperties and the int-or-string and
// preserve-unknown-fields markers. A type that contains itself (a CRD's
// JSONSchemaProps) is untyped where it recurs. The result must not be
// modified.
func Structural(gvk schema.GroupVersionKind) (s *structural.Schema, ok bool, err error) {
	if s, ok := structuralCache.Load(gvk); ok {
		return s.(*structural.Schema), true, nil
	}
	defs, err := Definitions()
	if err != nil {
		return nil, false, err
	}
	name, ok := defs[gvk]
	if !ok {
		return nil, false, nil
	}
	schemas, err := Schemas()
	if err != nil {
		return nil, false, err
	}
	c := converter{schemas: schemas, open: map[string]bool{}}
	s = c.convert(schemas[name])
	structuralCache.Store(gvk, s)
	return s, true, nil
}

type converter struct {
	schemas map[string]*spec.Schema
	open    map[string]bool // definitions being converted, to stop at cycles
}

func (c converter) convert(s *spec.Schema) *structural.Schema {
	if s == nil {
		return &structural.Schema{PreserveUnknownFields: true}
	}
	// A field with a default or a description of its own refers to its
	// type through allOf.
	if typed.RefersTo(s) == "" && len(s.AllOf) == 1 {
		s = &s.AllOf[0]
	}
	if name := typed.RefersTo(s); name != "" {
		if c.open[name] {
			return &structural.Schema{PreserveUnknownFields: true}
		}
		c.open[name] = true
		defer delete(c.open, name)
		return c.convert(c.schemas[name])
	}
	out := &structural.Schema{Format: s.Format, IntOrString: s.Format == "int-or-string"}
	if len(s.Type) == 1 {
		out.Type = s.Type[0]
	}
	if p, _ := s.Extensions["x-kubernetes-preserve-unknown-fields"].(bool); p {
		out.PreserveUnknownFields = true
	}
	if len(s.Properties) > 0 {
		out.Properties = make(map[string]*structural.Schema, len(s.Properties))
		for k, v := range s.Properties {
			out.Properties[k] = c.convert(&v)
		}
	}
	if s.Items != nil && s.Items.Schema != nil {
		out.Items = c.convert(s.Items.Schema)
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		out.AdditionalProperties = c.convert(s.AdditionalProperties.Schema)
	}
	// An object that names none of its fields (a RawExtension, FieldsV1)
	// holds anything.
	if out.Type == "object" && out.Properties == nil && out.AdditionalProperties == nil {
		out.PreserveUnknownFields = true
	}
	return out
}
