package typed

import "k8s.io/kube-openapi/pkg/validation/spec"

// Bytes finds the strings a type holds as bytes (format: byte, base64 in
// JSON), which CBOR, having a type for bytes, encodes apart from other
// strings. It is read-only once made, safe for concurrent use.
type Bytes struct {
	schemas map[string]*spec.Schema
	// holds are the definitions whose values can hold bytes: the others
	// are not walked at all.
	holds map[string]bool
}

// NewBytes finds the bytes of the types in schemas.
func NewBytes(schemas map[string]*spec.Schema) *Bytes {
	b := &Bytes{schemas: schemas, holds: map[string]bool{}}
	// Definitions refer to each other, in cycles too: spread "holds bytes"
	// from the definitions that do to those that refer to them until
	// nothing changes.
	for changed := true; changed; {
		changed = false
		for name, s := range schemas {
			if !b.holds[name] && b.canHold(s) {
				b.holds[name], changed = true, true
			}
		}
	}
	return b
}

// canHold reports whether a value of s can hold bytes, by what holds says
// of the definitions s refers to.
func (b *Bytes) canHold(s *spec.Schema) bool {
	for s != nil && len(s.AllOf) == 1 {
		s = &s.AllOf[0]
	}
	switch {
	case s == nil:
		return false
	case RefersTo(s) != "":
		_, name := resolve(b.schemas, s)
		return b.holds[name]
	case s.Format == "byte":
		return true
	case s.Items != nil && s.Items.Schema != nil && b.canHold(s.Items.Schema):
		return true
	case s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil && b.canHold(s.AdditionalProperties.Schema):
		return true
	}
	for _, p := range s.Properties {
		if b.canHold(&p) {
			return true
		}
	}
	return false
}

// Map replaces each string of v, an object of the definition def, that
// the type holds as bytes with conv of it, and returns v. Values the
// schema does not describe are left alone.
func (b *Bytes) Map(def string, v any, conv func(string) any) any {
	s, ok := b.schemas[def]
	if !ok || !b.holds[def] {
		return v
	}
	return b.walk(s, v, conv)
}

func (b *Bytes) walk(s *spec.Schema, v any, conv func(string) any) any {
	s, name := resolve(b.schemas, s)
	if s == nil || name != "" && !b.holds[name] {
		return v
	}
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if p, ok := s.Properties[k]; ok {
				x[k] = b.walk(&p, e, conv)
			} else if len(s.Properties) == 0 && s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
				x[k] = b.walk(s.AdditionalProperties.Schema, e, conv)
			}
		}
	case []any:
		if s.Items != nil && s.Items.Schema != nil {
			for i, e := range x {
				x[i] = b.walk(s.Items.Schema, e, conv)
			}
		}
	case string:
		if s.Format == "byte" {
			return conv(x)
		}
	}
	return v
}
