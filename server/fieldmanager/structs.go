package fieldmanager

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"kubeplay/server/typed"
)

//go:generate go run ./internal/gen -out zz_generated_structs.go

// Materialize gives obj, of kind gvk, the shape kube-apiserver's Go types
// give every decoded object: a field held as a struct by value (a
// Deployment's spec, its pod template's metadata) is present, as {} at
// least, a slice, map or pointer field without omitempty is present as
// null, and a scalar one as its zero value; a scalar field with omitempty
// holding its zero value is absent. The field manager then sees such fields as always there, as the
// real server's does, and records no "." entry for them.
func Materialize(gvk schema.GroupVersionKind, obj Object) error {
	schemas, def, err := schemaOf(gvk)
	if err != nil {
		return err
	}
	materialize(schemas, def, obj)
	return nil
}

// The generator reads client-go's scheme, which has no apiextensions types:
// their struct and null fields (k8s.io/apiextensions-apiserver v1) are
// listed here.
const apiextensionsV1 = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1."

var (
	apiextensionsStructFields = map[string][]string{
		apiextensionsV1 + "CustomResourceDefinition":       {"metadata", "spec", "status"},
		apiextensionsV1 + "CustomResourceDefinitionSpec":   {"names"},
		apiextensionsV1 + "CustomResourceDefinitionStatus": {"acceptedNames"},
	}
	apiextensionsNullFields = map[string][]string{
		apiextensionsV1 + "CustomResourceDefinitionSpec":   {"versions"},
		apiextensionsV1 + "CustomResourceDefinitionStatus": {"conditions", "storedVersions"},
	}
)

// The tables of zz_generated_structs.go, read when first needed: as map
// literals they were 0.4 MB of WebAssembly that every start of the engine
// compiled and ran.
var (
	structFields  = sync.OnceValue(func() map[string][]string { return parseTable(structFieldsTable) })
	nullFields    = sync.OnceValue(func() map[string][]string { return parseTable(nullFieldsTable) })
	zeroFields    = sync.OnceValue(func() map[string][]string { return parseTable(zeroFieldsTable) })
	omittedFields = sync.OnceValue(func() map[string][]string { return parseTable(omittedFieldsTable) })
)

// parseTable reads a table of zz_generated_structs.go: one line per schema,
// its name then its fields, separated by tabs.
func parseTable(table string) map[string][]string {
	m := map[string][]string{}
	for line := range strings.Lines(table) {
		f := strings.Split(strings.TrimSuffix(line, "\n"), "\t")
		m[f[0]] = f[1:]
	}
	return m
}

// structFieldsOf lists the fields of schema def held as structs by value.
func structFieldsOf(def string) []string {
	if f, ok := apiextensionsStructFields[def]; ok {
		return f
	}
	return structFields()[def]
}

// nullFieldsOf lists the fields a zero value of schema def holds as null.
func nullFieldsOf(def string) []string {
	if f, ok := apiextensionsNullFields[def]; ok {
		return f
	}
	return nullFields()[def]
}

func materialize(schemas map[string]*spec.Schema, def string, obj map[string]any) {
	walkTyped(schemas, def, obj, func(def string, obj map[string]any) (map[string]any, bool) {
		for _, f := range structFieldsOf(def) {
			if _, ok := obj[f]; !ok {
				obj[f] = map[string]any{}
			}
		}
		for _, f := range nullFieldsOf(def) {
			if _, ok := obj[f]; !ok {
				obj[f] = nil
			}
		}
		for _, fk := range zeroFields()[def] {
			f, kind, _ := strings.Cut(fk, "=")
			if _, ok := obj[f]; !ok {
				obj[f] = zeroOf(kind)
			}
		}
		// A scalar field with omitempty holds its zero value as if unset
		// (its defaults apply), so it is unset; an empty list or map stays
		// until the object is encoded (see OmitEmpty).
		for _, fk := range omittedFields()[def] {
			f, kind, _ := strings.Cut(fk, "=")
			if v, ok := obj[f]; ok && kind != "slice" && kind != "map" && isEmpty(kind, v) {
				delete(obj, f)
			}
		}
		return obj, false
	})
}

// OmitEmpty removes from obj, of kind gvk, the fields with omitempty that
// are empty ("", 0, false, [], {}), as kube-apiserver's Go types leave them
// out when they are encoded: for storage, and for its field manager, which
// sees objects so converted. (Its validation sees them still.) An empty
// metadata.managedFields stays: it asks the field manager to reset them.
func OmitEmpty(gvk schema.GroupVersionKind, obj Object) error {
	schemas, def, err := schemaOf(gvk)
	if err != nil {
		return err
	}
	walkTyped(schemas, def, obj, omitEmpty(false))
	return nil
}

// omitEmptyCopy is obj as OmitEmpty leaves it, but obj itself unchanged:
// what changes is copied, the rest shared.
func omitEmptyCopy(gvk schema.GroupVersionKind, obj Object) Object {
	schemas, def, err := schemaOf(gvk)
	if err != nil {
		return obj // as OmitEmpty leaves it
	}
	out, _ := walkTyped(schemas, def, obj, omitEmpty(true))
	return out
}

// omitEmpty is OmitEmpty's visit of an object, which it changes in place,
// or, with copy, in a copy.
func omitEmpty(copy bool) func(def string, obj map[string]any) (map[string]any, bool) {
	return func(def string, obj map[string]any) (map[string]any, bool) {
		copied := false
		for _, fk := range omittedFields()[def] {
			f, kind, _ := strings.Cut(fk, "=")
			if v, ok := obj[f]; ok && f != "managedFields" && isEmpty(kind, v) {
				if copy && !copied {
					obj, copied = maps.Clone(obj), true
				}
				delete(obj, f)
			}
		}
		return obj, copied
	}
}

// schemaOf is the schemas and the name of kind gvk's among them.
func schemaOf(gvk schema.GroupVersionKind) (map[string]*spec.Schema, string, error) {
	schemas, err := Schemas()
	if err != nil {
		return nil, "", err
	}
	defs, err := Definitions()
	if err != nil {
		return nil, "", err
	}
	return schemas, defs[gvk], nil
}

// walkTyped calls visit with obj, of schema def, then with each object in
// it that has a schema of its own, depth first, and returns obj. visit
// returns the object it was given, changed in place or not, or a changed
// copy (copied) that leaves it as it was: then what holds the copy, up to
// obj, is copied too, and walkTyped returns obj's copy (copied).
func walkTyped(schemas map[string]*spec.Schema, def string, obj map[string]any, visit func(def string, obj map[string]any) (map[string]any, bool)) (map[string]any, bool) {
	obj, copied := visit(def, obj)
	s := schemas[def]
	if s == nil {
		return obj, copied
	}
	// keep puts a copy of the value of k in obj, itself copied first.
	keep := func(k string, v any) {
		if !copied {
			obj, copied = maps.Clone(obj), true
		}
		obj[k] = v
	}
	for k, v := range obj {
		p, ok := s.Properties[k]
		if !ok {
			continue
		}
		switch x := v.(type) {
		case map[string]any:
			if ref := refName(&p); ref != "" {
				if m, c := walkTyped(schemas, ref, x, visit); c {
					keep(k, m)
				}
			} else if p.AdditionalProperties != nil && p.AdditionalProperties.Schema != nil {
				if ref := refName(p.AdditionalProperties.Schema); ref != "" {
					var out map[string]any // x's copy, once an entry is
					for ek, e := range x {
						if m, ok := e.(map[string]any); ok {
							if m, c := walkTyped(schemas, ref, m, visit); c {
								if out == nil {
									out = maps.Clone(x)
								}
								out[ek] = m
							}
						}
					}
					if out != nil {
						keep(k, out)
					}
				}
			}
		case []any:
			if p.Items == nil || p.Items.Schema == nil {
				continue
			}
			if ref := refName(p.Items.Schema); ref != "" {
				var out []any // x's copy, once an item is
				for i, e := range x {
					if m, ok := e.(map[string]any); ok {
						if m, c := walkTyped(schemas, ref, m, visit); c {
							if out == nil {
								out = slices.Clone(x)
							}
							out[i] = m
						}
					}
				}
				if out != nil {
					keep(k, out)
				}
			}
		}
	}
	return obj, copied
}

// zeroOf is the JSON zero value of a Go kind of zeroFieldsTable.
func zeroOf(kind string) any {
	switch kind {
	case "string":
		return ""
	case "bool":
		return false
	case "float64":
		return float64(0)
	}
	return int64(0)
}

// refName is the schema name a property refers to, directly or through a
// single allOf, as the v3 documents write references.
func refName(s *spec.Schema) string {
	ref := typed.RefersTo(s)
	if ref == "" && len(s.AllOf) == 1 {
		ref = typed.RefersTo(&s.AllOf[0])
	}
	return ref
}

// isEmpty reports whether v is the empty value omitempty leaves out, for
// a field of kind (see omittedFieldsTable).
func isEmpty(kind string, v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == "" && kind == "string"
	case bool:
		return !x && kind == "bool"
	case json.Number:
		f, err := x.Float64()
		return err == nil && f == 0 && (kind == "int" || kind == "float64")
	case int64:
		return x == 0 && (kind == "int" || kind == "float64")
	case float64:
		return x == 0 && (kind == "int" || kind == "float64")
	case []any:
		return len(x) == 0 && kind == "slice"
	case map[string]any:
		return len(x) == 0 && kind == "map"
	}
	return false
}
