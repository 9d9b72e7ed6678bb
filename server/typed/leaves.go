package typed

import "k8s.io/kube-openapi/pkg/validation/spec"

// MapLeaves replaces each string and number of v, an object of the schema
// named def in schemas, with leaf(its schema, it), and returns v. Values
// the schema does not describe are left alone. It is how the strings a
// type holds as bytes (format: byte, base64 in JSON) are told apart from
// other strings when transcoding to CBOR, which has a type for bytes.
func MapLeaves(schemas map[string]*spec.Schema, def string, v any, leaf func(*spec.Schema, any) any) any {
	s, ok := schemas[def]
	if !ok {
		return v
	}
	return mapLeaves(schemas, s, v, leaf)
}

func mapLeaves(schemas map[string]*spec.Schema, s *spec.Schema, v any, leaf func(*spec.Schema, any) any) any {
	s, _ = resolve(schemas, s)
	if s == nil {
		return v
	}
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if p, ok := s.Properties[k]; ok {
				x[k] = mapLeaves(schemas, &p, e, leaf)
			} else if len(s.Properties) == 0 && s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
				x[k] = mapLeaves(schemas, s.AdditionalProperties.Schema, e, leaf)
			}
		}
	case []any:
		if s.Items != nil && s.Items.Schema != nil {
			for i, e := range x {
				x[i] = mapLeaves(schemas, s.Items.Schema, e, leaf)
			}
		}
	case nil, bool:
	default:
		return leaf(s, v)
	}
	return v
}
