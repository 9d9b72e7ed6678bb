package typed

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// Result is a decoded object and what decoding it noticed.
type Result struct {
	Object map[string]any
	// FieldErrors report, in document order, the fields the type does not
	// have (`unknown field "spec.containers[0].foo"`) and the fields given
	// more than once (`duplicate field "data"`).
	FieldErrors []string
	// Unknown are the paths of the unknown fields, as FieldErrors quote
	// them.
	Unknown []string
}

// Error is a body that does not fit the type; its message is the one
// kube-apiserver's decoder gives.
type Error struct{ msg string }

func (e *Error) Error() string { return e.msg }

// Decode decodes body, a JSON object, as an object of the schema named def
// in schemas. It returns an *Error for a body of the wrong shape, and any
// other error for text that is not JSON.
func Decode(schemas map[string]*spec.Schema, def string, body []byte) (Result, error) {
	if _, ok := schemas[def]; !ok {
		return Result{}, fmt.Errorf("typed: no schema %q", def)
	}
	d := &decoder{schemas: schemas, dec: json.NewDecoder(bytes.NewReader(body))}
	d.dec.UseNumber()
	// A reference to def, so that the object is known by its schema's name.
	ref := &spec.Schema{SchemaProps: spec.SchemaProps{Ref: spec.MustCreateRef("#/components/schemas/" + def)}}
	v, err := d.value(ref, field{}, structName(def))
	if err != nil {
		return Result{}, err
	}
	if d.typeErr != nil {
		return Result{}, d.typeErr
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return Result{}, errors.New("typed: the body is not a JSON object")
	}
	return Result{Object: obj, FieldErrors: d.fieldErrors, Unknown: d.unknown}, nil
}

type decoder struct {
	schemas     map[string]*spec.Schema
	dec         *json.Decoder
	fieldErrors []string
	unknown     []string
	// typeErr is the first value of the wrong type; as Go's decoder,
	// decoding goes on after it so that the text is still checked.
	typeErr *Error
}

// field is where a value sits: the Go struct that holds the nearest field
// and the path to it by field names only ("spec.containers.image"), as Go's
// type errors say, and the path with indices ("spec.containers[0].image"),
// as the unknown and duplicate field reports say.
type field struct {
	structName string
	goPath     string
	path       string
	// goType, when set, is the name Go's decoder gives the value's type
	// where the schema does not tell it (see goTypes).
	goType string
}

// child is the field name of the struct structName, of the schema def.
func (f field) child(structName, def, name string) field {
	t := goTypes()[def+"\t"+name]
	goPath := name
	if t.via != "" {
		goPath = t.via + "." + name
	}
	return field{structName: structName, goPath: join(f.goPath, goPath), path: join(f.path, name), goType: t.goType}
}

func (f field) index(i int) field {
	f.path += "[" + strconv.Itoa(i) + "]"
	f.goType = elemType(f.goType, "[]")
	return f
}

// elemType is the type of the elements of a slice or map type named
// container ("" if it is not one).
func elemType(container, prefix string) string {
	if !strings.HasPrefix(container, prefix) {
		return ""
	}
	if prefix == "map[" {
		_, elem, _ := strings.Cut(container, "]")
		return elem
	}
	return container[len(prefix):]
}

// goType is a field's type as Go's decoder names it, and the embedded
// structs Go names on the way to it.
type goType struct{ goType, via string }

//go:generate go run ./internal/gen -out zz_generated_gotypes.go

// goTypes reads goTypesTable, by schema name and JSON name.
var goTypes = sync.OnceValue(func() map[string]goType {
	out := map[string]goType{}
	for line := range strings.Lines(goTypesTable) {
		cols := strings.Split(strings.TrimSuffix(line, "\n"), "\t")
		out[cols[0]+"\t"+cols[1]] = goType{goType: cols[2], via: cols[3]}
	}
	return out
})

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// resolve follows $ref and the single-element allOf that the v3 documents
// wrap references in.
func (d *decoder) resolve(s *spec.Schema) (*spec.Schema, string) {
	return resolve(d.schemas, s)
}

// resolve follows s's reference or single allOf to the schema that says
// what a value is, with its definition's name if it has one.
func resolve(schemas map[string]*spec.Schema, s *spec.Schema) (*spec.Schema, string) {
	for s != nil {
		switch {
		case len(s.AllOf) == 1:
			s = &s.AllOf[0]
		case RefersTo(s) != "":
			name := RefersTo(s)
			return schemas[name], name
		default:
			return s, ""
		}
	}
	return nil, ""
}

// RefersTo is the name of the definition s refers to ("" if none), as
// the v3 documents write references ("#/components/schemas/NAME"). It
// reads the parsed reference rather than building its string, which a
// decoder would do for every value.
func RefersTo(s *spec.Schema) string {
	u := s.Ref.GetURL()
	if u == nil {
		return ""
	}
	return strings.TrimPrefix(u.Fragment, "/components/schemas/")
}

// fail records a type error at f (the first one only).
func (d *decoder) fail(format string, args ...any) {
	if d.typeErr == nil {
		d.typeErr = &Error{msg: fmt.Sprintf(format, args...)}
	}
}

func (d *decoder) typeError(got string, f field, goType string) {
	if f.goType != "" {
		goType = f.goType
	}
	if f.structName == "" {
		d.fail("json: cannot unmarshal %s into Go value of type %s", got, goType)
		return
	}
	d.fail("json: cannot unmarshal %s into Go struct field %s.%s of type %s", got, f.structName, f.goPath, goType)
}

const quantityMessage = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"

// value decodes the next JSON value as schema s; at is where it sits,
// inStruct the Go struct type it is (for an object schema).
func (d *decoder) value(s *spec.Schema, at field, inStruct string) (any, error) {
	s, name := d.resolve(s)
	if name != "" {
		inStruct = structName(name)
	}
	tok, err := d.dec.Token()
	if err != nil {
		return nil, syntaxError(err)
	}
	if tok == nil {
		return nil, nil // null decodes to a zero value: the field is dropped
	}
	if s == nil {
		return d.rest(tok)
	}
	switch {
	case name == quantityDef:
		return d.quantity(tok)
	case name == intOrStringDef || s.Extensions["x-kubernetes-int-or-string"] == true:
		return d.intOrString(tok, at)
	case name == rawExtensionDef:
		return d.rest(tok) // any JSON, kept as it is for validation to judge
	}
	kind, typ := jsonKind(tok), s.Type
	switch {
	case typ.Contains("object") || len(s.Properties) > 0:
		if kind != "object" {
			d.typeError(kind, at, d.goType(s, name))
			return d.rest(tok)
		}
		switch {
		case len(s.Properties) > 0:
			return d.object(s, at, inStruct, name)
		case s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil:
			return d.mapValue(s.AdditionalProperties.Schema, at)
		}
		return d.rest(tok) // free-form (RawExtension, FieldsV1)
	case typ.Contains("array"):
		if kind != "array" {
			d.typeError(kind, at, d.goType(s, name))
			return d.rest(tok)
		}
		var items *spec.Schema
		if s.Items != nil {
			items = s.Items.Schema
		}
		out := []any{}
		for i := 0; d.dec.More(); i++ {
			v, err := d.value(items, at.index(i), "")
			if err != nil {
				return nil, err
			}
			if v == nil {
				v = d.zero(items) // a null element decodes to the zero value
			}
			out = append(out, v)
		}
		_, err := d.dec.Token() // ]
		return out, syntaxError(err)
	case typ.Contains("string"):
		str, ok := tok.(string)
		if !ok {
			d.typeError(kind, at, "string")
			return d.rest(tok)
		}
		switch s.Format {
		case "byte":
			if _, err := base64.StdEncoding.DecodeString(str); err != nil {
				d.fail("%v", err)
			}
		case "date-time":
			layout := time.RFC3339
			if name == microTimeDef {
				layout = "2006-01-02T15:04:05.000000Z07:00"
			}
			if _, err := time.Parse(layout, str); err != nil {
				d.fail("%v", err)
			}
		}
		return str, nil
	case typ.Contains("integer"):
		n, ok := tok.(json.Number)
		goType := map[string]string{"int32": "int32", "int64": "int64"}[s.Format]
		if goType == "" {
			goType = "int"
		}
		if !ok {
			d.typeError(kind, at, goType)
			return d.rest(tok)
		}
		bits := 64
		if goType == "int32" {
			bits = 32
		}
		if _, err := strconv.ParseInt(n.String(), 10, bits); err != nil {
			d.typeError("number "+n.String(), at, goType)
			return nil, nil
		}
		return n, nil
	case typ.Contains("number"):
		if _, ok := tok.(json.Number); !ok {
			d.typeError(kind, at, "float64")
			return d.rest(tok)
		}
		return tok, nil
	case typ.Contains("boolean"):
		if _, ok := tok.(bool); !ok {
			d.typeError(kind, at, "bool")
			return d.rest(tok)
		}
		return tok, nil
	}
	return d.rest(tok)
}

// zero is the JSON form of the zero value of schema s.
func (d *decoder) zero(s *spec.Schema) any {
	s, _ = d.resolve(s)
	switch {
	case s == nil:
		return nil
	case s.Type.Contains("string"):
		return ""
	case s.Type.Contains("integer"), s.Type.Contains("number"):
		return json.Number("0")
	case s.Type.Contains("boolean"):
		return false
	case s.Type.Contains("object") || len(s.Properties) > 0:
		return map[string]any{}
	}
	return nil
}

// object decodes the fields of a Go struct (the '{' is read).
func (d *decoder) object(s *spec.Schema, at field, inStruct, def string) (any, error) {
	out := map[string]any{}
	seen := map[string]bool{}
	for d.dec.More() {
		tok, err := d.dec.Token()
		if err != nil {
			return nil, syntaxError(err)
		}
		key := tok.(string) // object keys are strings
		prop, known := s.Properties[key]
		child := at.child(inStruct, def, key)
		if !known {
			if !seen[key] {
				d.fieldErrors = append(d.fieldErrors, fmt.Sprintf("unknown field %q", child.path))
				d.unknown = append(d.unknown, child.path)
			}
			seen[key] = true
			if err := d.skip(); err != nil {
				return nil, err
			}
			continue
		}
		if seen[key] {
			d.fieldErrors = append(d.fieldErrors, fmt.Sprintf("duplicate field %q", child.path))
		}
		seen[key] = true
		v, err := d.value(&prop, child, "")
		if err != nil {
			return nil, err
		}
		if v == nil {
			delete(out, key)
		} else {
			out[key] = v
		}
	}
	_, err := d.dec.Token() // }
	return out, syntaxError(err)
}

// mapValue decodes a Go map (the '{' is read). Its values' errors name the
// map's field, as Go's decoder does.
func (d *decoder) mapValue(elem *spec.Schema, at field) (any, error) {
	out := map[string]any{}
	seen := map[string]bool{}
	for d.dec.More() {
		tok, err := d.dec.Token()
		if err != nil {
			return nil, syntaxError(err)
		}
		key := tok.(string)
		if seen[key] {
			d.fieldErrors = append(d.fieldErrors, fmt.Sprintf("duplicate field %q", join(at.path, key)))
		}
		seen[key] = true
		v, err := d.value(elem, field{structName: at.structName, goPath: at.goPath, path: join(at.path, key), goType: elemType(at.goType, "map[")}, "")
		if err != nil {
			return nil, err
		}
		out[key] = v
	}
	_, err := d.dec.Token()
	return out, syntaxError(err)
}

const (
	quantityDef     = "io.k8s.apimachinery.pkg.api.resource.Quantity"
	intOrStringDef  = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
	rawExtensionDef = "io.k8s.apimachinery.pkg.runtime.RawExtension"
	microTimeDef    = "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime"
)

// quantity decodes a resource.Quantity: a string or a number that parses
// as one, in its canonical form ("1000m" is "1", "1024Mi" "1Gi"), which
// kube-apiserver's Go type keeps of it.
func (d *decoder) quantity(tok json.Token) (any, error) {
	var text string
	switch v := tok.(type) {
	case string:
		text = v
	case json.Number:
		text = v.String()
	default:
		d.fail(quantityMessage)
		return d.rest(tok)
	}
	q, err := resource.ParseQuantity(strings.TrimSpace(text))
	if err != nil {
		d.fail(quantityMessage)
		return tok, nil
	}
	return q.String(), nil
}

// intOrString decodes an IntOrString: a string, or a number that fits an
// int32.
func (d *decoder) intOrString(tok json.Token, at field) (any, error) {
	switch v := tok.(type) {
	case string:
		return v, nil
	case json.Number:
		if _, err := strconv.ParseInt(v.String(), 10, 32); err != nil {
			d.typeError("number "+v.String(), at, "int32")
			return nil, nil
		}
		return v, nil
	}
	d.typeError(jsonKind(tok), at, "int32")
	return d.rest(tok)
}

// rest decodes the rest of a value whose first token is tok, as it is.
func (d *decoder) rest(tok json.Token) (any, error) {
	delim, ok := tok.(json.Delim)
	if !ok {
		return tok, nil
	}
	switch delim {
	case '{':
		out := map[string]any{}
		for d.dec.More() {
			k, err := d.dec.Token()
			if err != nil {
				return nil, syntaxError(err)
			}
			v, err := d.any()
			if err != nil {
				return nil, err
			}
			out[k.(string)] = v
		}
		_, err := d.dec.Token()
		return out, syntaxError(err)
	case '[':
		out := []any{}
		for d.dec.More() {
			v, err := d.any()
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		_, err := d.dec.Token()
		return out, syntaxError(err)
	}
	return nil, fmt.Errorf("typed: unexpected %v", delim)
}

func (d *decoder) any() (any, error) {
	tok, err := d.dec.Token()
	if err != nil {
		return nil, syntaxError(err)
	}
	return d.rest(tok)
}

func (d *decoder) skip() error {
	_, err := d.any()
	return err
}

func syntaxError(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

func jsonKind(tok json.Token) string {
	switch v := tok.(type) {
	case json.Delim:
		if v == '{' {
			return "object"
		}
		return "array"
	case string:
		return "string"
	case bool:
		return "bool"
	case json.Number:
		return "number"
	}
	return "null"
}

// structName is a definition's Go type name ("io.k8s.api.core.v1.PodSpec"
// is PodSpec).
func structName(def string) string { return def[strings.LastIndex(def, ".")+1:] }

// goType is how Go names the type of schema s (named def, if a definition):
// "v1.PodSpec", "[]v1.Container", "map[string]string".
func (d *decoder) goType(s *spec.Schema, def string) string {
	if def != "" {
		parts := strings.Split(def, ".")
		if len(parts) >= 2 {
			return parts[len(parts)-2] + "." + parts[len(parts)-1]
		}
		return def
	}
	switch {
	case s.Type.Contains("array"):
		if s.Items != nil && s.Items.Schema != nil {
			items, name := d.resolve(s.Items.Schema)
			if items != nil {
				return "[]" + d.goType(items, name)
			}
		}
		return "[]interface {}"
	case s.Type.Contains("object") && s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil:
		elem, name := d.resolve(s.AdditionalProperties.Schema)
		if elem != nil {
			return "map[string]" + d.goType(elem, name)
		}
	case s.Type.Contains("string"):
		if s.Format == "byte" {
			return "[]uint8"
		}
		return "string"
	case s.Type.Contains("integer"):
		if s.Format == "int32" || s.Format == "int64" {
			return s.Format
		}
		return "int"
	case s.Type.Contains("boolean"):
		return "bool"
	case s.Type.Contains("number"):
		return "float64"
	}
	return "map[string]interface {}"
}
