package celrules

import (
	"encoding/base64"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"

	"kubeplay/server/celtypes"
	"kubeplay/server/structural"
)

// provider declares the object types of a schema to cel-go's checker. At
// run time objects are plain maps, so a missing field is the map's "no such
// key" error, as with kube-apiserver's unstructured values.
type provider struct {
	*types.Registry
	structs map[string]map[string]*types.Type // type name -> field -> type
}

func newProvider() (*provider, error) {
	reg, err := types.NewRegistry()
	if err != nil {
		return nil, err
	}
	return &provider{Registry: reg, structs: map[string]map[string]*types.Type{}}, nil
}

func (p *provider) FindStructType(name string) (*types.Type, bool) {
	if _, ok := p.structs[name]; ok {
		return types.NewTypeTypeWithParam(types.NewObjectType(name, traits.FieldTesterType|traits.IndexerType)), true
	}
	return p.Registry.FindStructType(name)
}

func (p *provider) FindStructFieldNames(name string) ([]string, bool) {
	if fields, ok := p.structs[name]; ok {
		names := make([]string, 0, len(fields))
		for f := range fields {
			names = append(names, f)
		}
		slices.Sort(names)
		return names, true
	}
	return p.Registry.FindStructFieldNames(name)
}

func (p *provider) FindStructFieldType(name, field string) (*types.FieldType, bool) {
	if fields, ok := p.structs[name]; ok {
		t, ok := fields[field]
		if !ok {
			return nil, false
		}
		return &types.FieldType{Type: t}, true
	}
	return p.Registry.FindStructFieldType(name, field)
}

// fieldName is how a rule names a property ("" if it cannot): names are
// CEL identifiers, with kube-apiserver's escapes for "_", ".", "-", "/" and
// reserved words.
func fieldName(name string) string {
	if slices.Contains(celtypes.ReservedWords, name) {
		return "__" + name + "__"
	}
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '_' && i+1 < len(name) && name[i+1] == '_':
			b.WriteString("__underscores__")
			i++
		case c == '.':
			b.WriteString("__dot__")
		case c == '-':
			b.WriteString("__dash__")
		case c == '/':
			b.WriteString("__slash__")
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9':
			b.WriteByte(c)
		default:
			return ""
		}
	}
	return b.String()
}

// declare returns the CEL type of values of schema s, registering the
// object types it needs under names derived from name.
func (p *provider) declare(s *structural.Schema, name string, resource bool) *types.Type {
	switch {
	case s.IntOrString:
		return types.DynType
	case s.Type == "array":
		if s.Items == nil {
			return types.NewListType(types.DynType)
		}
		return types.NewListType(p.declare(s.Items, name+".@idx", false))
	case s.Type == "object" && s.AdditionalProperties != nil:
		return types.NewMapType(types.StringType, p.declare(s.AdditionalProperties, name+".@elem", false))
	case s.Type == "object" && s.Properties == nil && s.PreserveUnknownFields && !resource && !s.EmbeddedResource:
		return types.DynType
	case s.Type == "object":
		fields := map[string]*types.Type{}
		for prop, child := range s.Properties {
			if f := fieldName(prop); f != "" {
				fields[f] = p.declare(child, name+"."+prop, false)
				if slices.Contains(celtypes.ReservedWords, prop) {
					fields[prop] = fields[f] // kube-apiserver accepts both
				}
			}
		}
		if resource || s.EmbeddedResource {
			fields["apiVersion"], fields["kind"] = types.StringType, types.StringType
			md := name + ".metadata"
			p.structs[md] = map[string]*types.Type{"name": types.StringType, "generateName": types.StringType}
			fields["metadata"] = types.NewObjectType(md, traits.FieldTesterType|traits.IndexerType)
		}
		p.structs[name] = fields
		return types.NewObjectType(name, traits.FieldTesterType|traits.IndexerType)
	case s.Type == "string" && (s.Format == "date-time" || s.Format == "date"):
		return types.TimestampType
	case s.Type == "string" && s.Format == "duration":
		return types.DurationType
	case s.Type == "string" && s.Format == "byte":
		return types.BytesType
	case s.Type == "string":
		return types.StringType
	case s.Type == "integer":
		return types.IntType
	case s.Type == "number":
		return types.DoubleType
	case s.Type == "boolean":
		return types.BoolType
	}
	return types.DynType
}

// value converts a decoded JSON value of schema s (nil: unknown) to what
// rules see: integers as int64, numbers as float64, and only the name and
// generateName of a resource's metadata.
func value(s *structural.Schema, v any, resource bool) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			var child *structural.Schema
			if s != nil {
				if c, ok := s.Properties[k]; ok {
					child = c
				} else {
					child = s.AdditionalProperties
				}
			}
			if (resource || s != nil && s.EmbeddedResource) && k == "metadata" {
				md, _ := e.(map[string]any)
				kept := map[string]any{}
				for _, f := range []string{"name", "generateName"} {
					if n, ok := md[f]; ok {
						kept[f] = n
					}
				}
				out[k] = kept
				continue
			}
			key := k
			if s != nil && s.Properties != nil {
				if key = fieldName(k); key == "" {
					continue
				}
			}
			out[key] = value(child, e, false)
			if key != k && slices.Contains(celtypes.ReservedWords, k) {
				out[k] = out[key]
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		var items *structural.Schema
		if s != nil {
			items = s.Items
		}
		for i, e := range x {
			out[i] = value(items, e, false)
		}
		if s != nil && (s.ListType == "set" || s.ListType == "map") {
			return unorderedList{Lister: types.DefaultTypeAdapter.NativeToValue(out).(traits.Lister), keys: s.ListMapKeys}
		}
		return out
	case string:
		if s != nil {
			return formatted(s.Format, x)
		}
		return x
	case json.Number:
		if s != nil && s.Type == "number" {
			f, _ := x.Float64()
			return f
		}
		if n, err := x.Int64(); err == nil {
			return n
		}
		f, _ := x.Float64()
		return f
	case float64:
		if (s == nil || s.Type != "number") && x == math.Trunc(x) {
			return int64(x)
		}
		return x
	case int:
		if s != nil && s.Type == "number" {
			return float64(x)
		}
		return int64(x)
	case int64:
		if s != nil && s.Type == "number" {
			return float64(x)
		}
		return x
	}
	return v
}

// unorderedList is a list of type set or map: as in kube-apiserver, two
// such lists are equal when they hold the same elements (for a map list,
// the same elements under the same keys) in any order.
type unorderedList struct {
	traits.Lister
	keys []string // of a map list
}

func (l unorderedList) Equal(other ref.Val) ref.Val {
	o, ok := other.(traits.Lister)
	if !ok || l.Size().Equal(o.Size()) != types.True {
		return types.False
	}
	for it := l.Iterator(); it.HasNext() == types.True; {
		e := it.Next()
		found := false
		for jt := o.Iterator(); jt.HasNext() == types.True && !found; {
			f := jt.Next()
			if len(l.keys) == 0 {
				found = e.Equal(f) == types.True
				continue
			}
			same := true
			em, _ := e.(traits.Mapper)
			fm, _ := f.(traits.Mapper)
			for _, k := range l.keys {
				if em == nil || fm == nil {
					same = false
					break
				}
				same = same && em.Get(types.String(k)).Equal(fm.Get(types.String(k))) == types.True
			}
			if same {
				if e.Equal(f) != types.True {
					return types.False
				}
				found = true
			}
		}
		if !found {
			return types.False
		}
	}
	return types.True
}

// formatted is a string of a format rules see as another type: date-time
// and date as timestamps, duration as a duration, byte as bytes. Values
// were validated against their format before rules run.
func formatted(format, s string) any {
	switch format {
	case "date-time":
		if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
			return t
		}
	case "date":
		if t, err := time.Parse(time.DateOnly, s); err == nil {
			return t
		}
	case "duration":
		if d, err := structural.ParseDuration(s); err == nil {
			return d
		}
	case "byte":
		if b, err := base64.StdEncoding.DecodeString(s); err == nil {
			return b
		}
	}
	return s
}
