package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"k8s.io/kube-openapi/pkg/validation/spec"
)

// A mutation changes one thing of a valid object.
type mutation struct {
	// Name says what it changes ("spec.replicas: negative").
	Name string
	// createOnly: the mutation means nothing on an update (the name);
	// updateOnly: nothing on a create.
	createOnly, updateOnly bool
	// subresource, if set, is the subresource an update is sent to.
	subresource string
	apply       func(obj map[string]any)
}

// A step is one key (string) or index (int) of a path into an object.
type step = any

// pathString prints a path as kube-apiserver names fields: spec.ports[0].name.
func pathString(path []step) string {
	var b strings.Builder
	for _, s := range path {
		switch s := s.(type) {
		case int:
			fmt.Fprintf(&b, "[%d]", s)
		case string:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s)
		}
	}
	return b.String()
}

// setAt sets (or, with remove, deletes) the value at path in obj; a path
// that does not exist in obj (an update's stored object may lack what
// the corpus object has) is left alone.
func setAt(obj map[string]any, path []step, v any, remove bool) {
	var parent any = obj
	for i, s := range path {
		last := i == len(path)-1
		switch p := parent.(type) {
		case map[string]any:
			k := s.(string)
			if last {
				if remove {
					delete(p, k)
				} else {
					p[k] = v
				}
				return
			}
			parent = p[k]
		case []any:
			j := s.(int)
			if j >= len(p) {
				return
			}
			if last {
				p[j] = v // removing an item is not a mutation made here
				return
			}
			parent = p[j]
		default:
			return
		}
	}
}

func getAt(obj map[string]any, path []step) (any, bool) {
	var cur any = obj
	for _, s := range path {
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[s.(string)]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			j := s.(int)
			if j >= len(c) {
				return nil, false
			}
			cur = c[j]
		default:
			return nil, false
		}
	}
	return cur, true
}

func set(path []step, v any) func(map[string]any) {
	path = slices.Clone(path)
	return func(obj map[string]any) { setAt(obj, path, deepCopy(v), false) }
}

func remove(path []step) func(map[string]any) {
	path = slices.Clone(path)
	return func(obj map[string]any) { setAt(obj, path, nil, true) }
}

// edit changes the value at path with f, when there is one.
func edit(path []step, f func(v any) any) func(map[string]any) {
	path = slices.Clone(path)
	return func(obj map[string]any) {
		if v, ok := getAt(obj, path); ok {
			setAt(obj, path, f(deepCopy(v)), false)
		}
	}
}

func deepCopy(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // decoded JSON always encodes
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		panic(err)
	}
	return out
}

// schemas resolves the references between the OpenAPI definitions.
type schemas map[string]*spec.Schema

// resolve follows s's reference, direct or as its only allOf.
func (d schemas) resolve(s *spec.Schema) *spec.Schema {
	for s != nil {
		ref := s.Ref.String()
		if ref == "" && len(s.AllOf) == 1 {
			ref = s.AllOf[0].Ref.String()
		}
		if ref == "" {
			return s
		}
		s = d[strings.TrimPrefix(ref, "#/components/schemas/")]
	}
	return nil
}

// tooLong is longer than any name kube-apiserver accepts.
var tooLong = strings.Repeat("a", 254)

const (
	invalidString = "Not Valid!"
	invalidEnum   = "NotAValue"
	invalidKey    = "not valid!"
)

// mutations returns, in a fixed order, the single-field mutations of obj
// (of the definition def): of its metadata, then of every field it sets
// but its status, as the schema types them.
func (d schemas) mutations(obj map[string]any, def *spec.Schema) []mutation {
	var out []mutation
	add := func(name string, createOnly bool, f func(map[string]any)) {
		out = append(out, mutation{Name: name, createOnly: createOnly, apply: f})
	}
	add("metadata.name: too long", true, set([]step{"metadata", "name"}, tooLong))
	add("metadata.name: invalid", true, set([]step{"metadata", "name"}, "Not_Valid"))
	add("metadata.labels: invalid key", false, set([]step{"metadata", "labels", invalidKey}, "x"))
	add("metadata.labels: invalid value", false, set([]step{"metadata", "labels", "validationdiff"}, invalidString))
	add("metadata.annotations: invalid key", false, set([]step{"metadata", "annotations", invalidKey}, "x"))
	add("metadata.finalizers: unqualified", false, set([]step{"metadata", "finalizers"}, []any{"unqualified"}))
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		switch k {
		case "apiVersion", "kind", "metadata", "status":
			continue
		}
		out = append(out, d.walk(obj[k], d.property(def, k), isRequired(def, k), []step{k})...)
	}
	return out
}

func isRequired(s *spec.Schema, k string) bool {
	return s != nil && slices.Contains(s.Required, k)
}

// property is the resolved schema of s's property k (nil if unknown).
func (d schemas) property(s *spec.Schema, k string) *spec.Schema {
	if s == nil {
		return nil
	}
	if p, ok := s.Properties[k]; ok {
		return d.resolve(&p)
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		return d.resolve(s.AdditionalProperties.Schema)
	}
	return nil
}

// walk returns the mutations of v, at path, of schema s.
func (d schemas) walk(v any, s *spec.Schema, required bool, path []step) []mutation {
	var out []mutation
	at := pathString(path)
	add := func(what string, f func(map[string]any)) {
		out = append(out, mutation{Name: at + ": " + what, apply: f})
	}
	_, item := path[len(path)-1].(int)
	switch {
	case item: // an item is not removed: its list is emptied instead
	case required:
		add("remove required", remove(path))
	default:
		add("remove", remove(path))
	}
	intOrString := s != nil && s.Extensions["x-kubernetes-int-or-string"] == true
	switch v := v.(type) {
	case string:
		add("wrong type", set(path, 12345))
		if s != nil && len(s.Enum) > 0 {
			add("not in enum", set(path, invalidEnum))
		} else {
			add("invalid", set(path, invalidString))
			add("empty", set(path, ""))
			if strings.HasSuffix(at, "name") || strings.HasSuffix(at, "Name") {
				add("too long", set(path, tooLong))
			}
		}
	case float64:
		if intOrString {
			add("invalid string", set(path, invalidString))
		} else {
			add("wrong type", set(path, strconv.FormatFloat(v, 'f', -1, 64)))
		}
		add("negative", set(path, -1))
		add("zero", set(path, 0))
		if s != nil && s.Format == "int32" {
			add("overflow", set(path, int64(1)<<31))
		}
	case bool:
		add("wrong type", set(path, "yes"))
		add("negated", set(path, !v))
	case []any:
		add("wrong type", set(path, "x"))
		add("empty", set(path, []any{}))
		if len(v) > 0 {
			add("duplicate item", edit(path, func(l any) any { list := l.([]any); return append(list, list[0]) }))
		}
		var items *spec.Schema
		if s != nil && s.Items != nil && s.Items.Schema != nil {
			items = d.resolve(s.Items.Schema)
		}
		for i, e := range v {
			out = append(out, d.walk(e, items, false, append(slices.Clone(path), i))...)
		}
	case map[string]any:
		add("wrong type", set(path, "x"))
		if s != nil && s.AdditionalProperties != nil && len(s.Properties) == 0 {
			// A map: its keys are data, not fields.
			var value any = ""
			if len(v) > 0 {
				value = v[slices.Sorted(maps.Keys(v))[0]]
			}
			add("invalid key", set(append(slices.Clone(path), invalidKey), value))
		}
		for _, k := range slices.Sorted(maps.Keys(v)) {
			out = append(out, d.walk(v[k], d.property(s, k), isRequired(s, k), append(slices.Clone(path), k))...)
		}
	}
	return out
}
