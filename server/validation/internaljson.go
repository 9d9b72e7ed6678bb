package validation

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"kubeplay/internal/jsonmap"
)

//go:generate go run ./internal/gen -out zz_generated_internal.go

// kube-apiserver validates its internal Go types, and some messages print
// them: the diff of a Pod's forbidden update, a Job's template that may not
// change. Those types have no JSON tags, so Go's encoder names their fields
// as Go does, writes every field (zero or not) in declaration order, and
// nests what the versioned API flattens. internalJSON writes a versioned
// object that way, from the table of the internal types' fields.

// internalField is a field of an internal struct.
type internalField struct {
	goName string
	// json is the versioned API's name for it ("" if none); hoisted:
	// the versioned API holds it in the enclosing object.
	json    string
	hoisted bool
	typ     string
	// inline: an embedded struct, whose fields Go writes as its
	// enclosing struct's own.
	inline bool
}

// internalType is an internal struct's fields, or what a named type is.
type internalType struct {
	fields []internalField
	is     string
}

var internalTypes = sync.OnceValue(func() map[string]internalType {
	out := map[string]internalType{}
	for line := range strings.Lines(internalTypesTable) {
		cols := strings.Split(strings.TrimSuffix(line, "\n"), "\t")
		if strings.HasPrefix(cols[1], "=") {
			out[cols[0]] = internalType{is: cols[1][1:]}
			continue
		}
		var t internalType
		for _, c := range cols[1:] {
			parts := strings.Split(c, ":")
			f := internalField{goName: parts[0], json: parts[1], typ: parts[2], inline: len(parts) > 3}
			if f.json == "-" {
				f.json = ""
			}
			f.json, f.hoisted = strings.CutPrefix(f.json, "^")
			t.fields = append(t.fields, f)
		}
		out[cols[0]] = t
	}
	return out
})

// internalJSON writes v, a decoded versioned value, as Go's encoder writes
// the internal type typ ("core.PodSpec").
func internalJSON(typ string, v any) json.RawMessage {
	var b bytes.Buffer
	writeInternal(&b, typ, v, true, nil)
	return b.Bytes()
}

// writeInternal writes v (present: the versioned object has it) as type
// typ; parent is the object v is a field of.
func writeInternal(b *bytes.Buffer, typ string, v any, present bool, parent Object) {
	if !present {
		v = nil
	}
	switch {
	case strings.HasPrefix(typ, "*"):
		if v == nil {
			b.WriteString("null")
			return
		}
		writeInternal(b, typ[1:], v, true, parent)
	case typ == "[]byte":
		writeGo(b, v, v != nil)
	case strings.HasPrefix(typ, "[]"):
		list, ok := v.([]any)
		if !ok {
			b.WriteString("null")
			return
		}
		b.WriteByte('[')
		for i, e := range list {
			if i > 0 {
				b.WriteByte(',')
			}
			writeInternal(b, typ[2:], e, true, nil)
		}
		b.WriteByte(']')
	case strings.HasPrefix(typ, "map["):
		m, ok := v.(map[string]any)
		if !ok {
			b.WriteString("null")
			return
		}
		elem := typ[strings.Index(typ, "]")+1:]
		b.WriteByte('{')
		for i, k := range slices.Sorted(maps.Keys(m)) {
			if i > 0 {
				b.WriteByte(',')
			}
			writeGo(b, k, true)
			b.WriteByte(':')
			writeInternal(b, elem, m[k], true, nil)
		}
		b.WriteByte('}')
	default:
		if t, ok := internalTypes()[typ]; ok && t.is != "" {
			writeInternal(b, t.is, v, v != nil, parent)
			return
		}
		if t, ok := internalTypes()[typ]; ok {
			obj, _ := v.(map[string]any)
			b.WriteByte('{')
			writeFields(b, t, obj, parent, false)
			b.WriteByte('}')
			return
		}
		writeScalar(b, typ, v)
	}
}

// writeFields writes the fields of the struct t from obj (parent holding
// the hoisted ones), after a comma if more.
func writeFields(b *bytes.Buffer, t internalType, obj, parent Object, more bool) bool {
	for _, f := range t.fields {
		if f.inline {
			if inner, ok := internalTypes()[strings.TrimPrefix(f.typ, "*")]; ok {
				more = writeFields(b, inner, obj, parent, more)
			} else {
				more = writeInlineGo(b, f.typ, obj, more)
			}
			continue
		}
		if more {
			b.WriteByte(',')
		}
		more = true
		writeGo(b, f.goName, true)
		b.WriteByte(':')
		from := obj
		if f.hoisted {
			from = parent
		}
		v, ok := from[f.json]
		writeInternal(b, f.typ, v, ok && f.json != "", obj)
	}
	return more
}

// writeScalar writes a value of a basic type, or of a type of
// apimachinery's (which has JSON tags and its own encoders).
func writeScalar(b *bytes.Buffer, typ string, v any) {
	switch typ {
	case "string":
		s, _ := v.(string)
		writeGo(b, s, true)
	case "bool":
		writeGo(b, v == true, true)
	case "int", "int32", "int64", "uint", "uint32", "uint64", "float64":
		n, _ := jsonmap.IntOf(v)
		writeGo(b, n, true)
	default:
		out := goValue(typ)
		if out == nil || v == nil {
			writeGo(b, out, true)
			return
		}
		raw, _ := json.Marshal(v)
		if json.Unmarshal(raw, out) != nil {
			writeGo(b, v, true)
			return
		}
		writeGo(b, out, true)
	}
}

// writeInlineGo writes the fields of an embedded apimachinery struct
// (metav1.ObjectMeta), which its JSON tags name, from obj.
func writeInlineGo(b *bytes.Buffer, typ string, obj Object, more bool) bool {
	out := goValue(strings.TrimPrefix(typ, "*"))
	if out == nil {
		return more
	}
	// The versioned API holds the embedded metadata under "metadata".
	raw, _ := json.Marshal(obj["metadata"])
	_ = json.Unmarshal(raw, out)
	enc, _ := json.Marshal(out)
	inner := bytes.TrimSuffix(bytes.TrimPrefix(enc, []byte("{")), []byte("}"))
	if len(inner) == 0 {
		return more
	}
	if more {
		b.WriteByte(',')
	}
	b.Write(inner)
	return true
}

// goValue is a new value of the apimachinery type typ, nil if unknown.
func goValue(typ string) any {
	switch typ {
	case "metav1.ObjectMeta":
		return &metav1.ObjectMeta{}
	case "metav1.LabelSelector":
		return &metav1.LabelSelector{}
	case "metav1.Time":
		return &metav1.Time{}
	case "metav1.Duration":
		return &metav1.Duration{}
	case "resource.Quantity":
		return &resource.Quantity{}
	case "intstr.IntOrString":
		return &intstr.IntOrString{}
	case "types.UID":
		return new(string)
	}
	return nil
}

// writeGo writes v as Go's encoder does (null when absent).
func writeGo(b *bytes.Buffer, v any, present bool) {
	if !present {
		b.WriteString("null")
		return
	}
	enc, err := json.Marshal(v)
	if err != nil {
		b.WriteString("null")
		return
	}
	b.Write(enc)
}
