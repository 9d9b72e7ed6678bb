package typed

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
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
	res, err := decode(schemas, def, newScanner(body))
	if errors.Is(err, errRescan) {
		return decodeWithDecoder(schemas, def, body)
	}
	return res, err
}

// decodeWithDecoder is Decode reading the body's tokens from a
// json.Decoder, for the errors it reports.
func decodeWithDecoder(schemas map[string]*spec.Schema, def string, body []byte) (Result, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	return decode(schemas, def, dec)
}

func decode(schemas map[string]*spec.Schema, def string, toks tokens) (Result, error) {
	d := &decoder{schemas: schemas, dec: toks}
	d.at = d.atDepth[:0]
	v, err := d.resolved(schemas[def], def, structName(def))
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
	dec         tokens
	fieldErrors []string
	unknown     []string
	// typeErr is the first value of the wrong type; as Go's decoder,
	// decoding goes on after it so that the text is still checked.
	typeErr *Error
	// at are the steps from the object to the value being decoded, in
	// atDepth while they fit, as they do for most bodies.
	at      []field
	atDepth [8]field
}

// field is a step from a value to one in it: a struct's field, a slice's
// element or a map's value. The decoder keeps the steps to the value it is
// at (decoder.at) and works out the names reports use (fieldNames) only
// when something is reported: building the paths of every field of every
// body was a fifth of the decoder's allocations.
type field struct {
	step step
	// structName is the Go struct of which a stepField is a field.
	structName string
	// def is the schema of that struct, name the field's JSON name (or a
	// map's key, for a stepKey).
	def, name string
	i         int // an element's index
}

type step uint8

const (
	stepField step = iota // a struct's field
	stepIndex             // a slice's element
	stepKey               // a map's value
)

// fieldNames are the names of a field that reports use: the Go struct
// that holds the nearest field and the path to it by field names only
// ("spec.containers.image"), as Go's type errors say, and the path with
// indices ("spec.containers[0].image"), as the unknown and duplicate field
// reports say.
type fieldNames struct {
	structName string
	goPath     string
	path       string
	// goType, when set, is the name Go's decoder gives the value's type
	// where the schema does not tell it (see goTypes).
	goType string
}

// names are the names of the field at the end of steps.
func names(steps []field) fieldNames {
	var n fieldNames
	for _, f := range steps {
		switch f.step {
		case stepField:
			t := goTypes()[f.def+"\t"+f.name]
			goPath := f.name
			if t.via != "" {
				goPath = t.via + "." + f.name
			}
			n = fieldNames{structName: f.structName, goPath: join(n.goPath, goPath), path: join(n.path, f.name), goType: t.goType}
		case stepIndex:
			n.path += "[" + strconv.Itoa(f.i) + "]"
			n.goType = elemType(n.goType, "[]")
		case stepKey:
			n.path = join(n.path, f.name)
			n.goType = elemType(n.goType, "map[")
		}
	}
	return n
}

// enter and leave step into and out of a value of the one the decoder is at.
func (d *decoder) enter(f field) { d.at = append(d.at, f) }
func (d *decoder) leave()        { d.at = d.at[:len(d.at)-1] }

// path is the path of the value the decoder is at, with indices.
func (d *decoder) path() string { return names(d.at).path }

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

func (d *decoder) typeError(got string, goType string) {
	if d.typeErr != nil {
		return // only the first is reported
	}
	f := names(d.at)
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

// value decodes the next JSON value as schema s, at d.at;
// inStruct the Go struct type it is (for an object schema).
func (d *decoder) value(s *spec.Schema, inStruct string) (any, error) {
	s, name := d.resolve(s)
	if name != "" {
		inStruct = structName(name)
	}
	return d.resolved(s, name, inStruct)
}

// resolved is value of s, resolved, named name if a definition.
func (d *decoder) resolved(s *spec.Schema, name, inStruct string) (any, error) {
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
		return d.intOrString(tok)
	case name == rawExtensionDef:
		return d.rest(tok) // any JSON, kept as it is for validation to judge
	}
	kind, typ := jsonKind(tok), s.Type
	switch {
	case typ.Contains("object") || len(s.Properties) > 0:
		if kind != "object" {
			d.typeError(kind, d.goType(s, name))
			return d.rest(tok)
		}
		switch {
		case len(s.Properties) > 0:
			return d.object(s, inStruct, name)
		case s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil:
			return d.mapValue(s.AdditionalProperties.Schema)
		}
		return d.rest(tok) // free-form (RawExtension, FieldsV1)
	case typ.Contains("array"):
		if kind != "array" {
			d.typeError(kind, d.goType(s, name))
			return d.rest(tok)
		}
		var items *spec.Schema
		if s.Items != nil {
			items = s.Items.Schema
		}
		out := []any{}
		for i := 0; d.dec.More(); i++ {
			d.enter(field{step: stepIndex, i: i})
			v, err := d.value(items, "")
			if err != nil {
				return nil, err
			}
			d.leave()
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
			d.typeError(kind, "string")
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
		goType := "int"
		if s.Format == "int32" || s.Format == "int64" {
			goType = s.Format
		}
		if !ok {
			d.typeError(kind, goType)
			return d.rest(tok)
		}
		bits := 64
		if goType == "int32" {
			bits = 32
		}
		if _, err := strconv.ParseInt(n.String(), 10, bits); err != nil {
			d.typeError("number "+n.String(), goType)
			return nil, nil
		}
		return n, nil
	case typ.Contains("number"):
		if _, ok := tok.(json.Number); !ok {
			d.typeError(kind, "float64")
			return d.rest(tok)
		}
		return tok, nil
	case typ.Contains("boolean"):
		if _, ok := tok.(bool); !ok {
			d.typeError(kind, "bool")
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
func (d *decoder) object(s *spec.Schema, inStruct, def string) (any, error) {
	out := map[string]any{}
	var seen keySet
	props := properties(s)
	for d.dec.More() {
		tok, err := d.dec.Token()
		if err != nil {
			return nil, syntaxError(err)
		}
		key := tok.(string) // object keys are strings
		prop, known := props[key]
		d.enter(field{step: stepField, structName: inStruct, def: def, name: key})
		again := seen.add(key)
		if !known {
			if !again {
				path := d.path()
				d.fieldErrors = append(d.fieldErrors, fmt.Sprintf("unknown field %q", path))
				d.unknown = append(d.unknown, path)
			}
			if err := d.skip(); err != nil {
				return nil, err
			}
			d.leave()
			continue
		}
		if again {
			d.fieldErrors = append(d.fieldErrors, fmt.Sprintf("duplicate field %q", d.path()))
		}
		v, err := d.value(prop, "")
		if err != nil {
			return nil, err
		}
		d.leave()
		if v == nil {
			delete(out, key)
		} else {
			out[key] = v
		}
	}
	_, err := d.dec.Token() // }
	return out, syntaxError(err)
}

// keySet is the keys of an object seen so far: a few in a slice, as most
// objects have, then in a map, so that a body of many keys stays linear.
type keySet struct {
	few  []string
	many map[string]bool
}

// add adds key, reporting whether it was there already.
func (k *keySet) add(key string) bool {
	if k.many != nil {
		had := k.many[key]
		k.many[key] = true
		return had
	}
	if slices.Contains(k.few, key) {
		return true
	}
	if len(k.few) < 16 {
		k.few = append(k.few, key)
		return false
	}
	k.many = make(map[string]bool, 2*len(k.few))
	for _, f := range k.few {
		k.many[f] = true
	}
	k.many[key] = true
	return false
}

// propertyIndex holds, for each object schema the decoder met, pointers to
// its properties: a map of spec.Schema values would be copied (several
// hundred bytes) at every field, into a frame that then stays on the stack
// for the whole descent into the value. The schemas Decode is given are the
// process's (fieldmanager.Schemas), so the index is as long-lived as they are.
var propertyIndex sync.Map // *spec.Schema -> map[string]*spec.Schema

func properties(s *spec.Schema) map[string]*spec.Schema {
	if m, ok := propertyIndex.Load(s); ok {
		return m.(map[string]*spec.Schema)
	}
	m := make(map[string]*spec.Schema, len(s.Properties))
	for name, prop := range s.Properties {
		m[name] = &prop
	}
	actual, _ := propertyIndex.LoadOrStore(s, m)
	return actual.(map[string]*spec.Schema)
}

// mapValue decodes a Go map (the '{' is read). Its values' errors name the
// map's field, as Go's decoder does.
func (d *decoder) mapValue(elem *spec.Schema) (any, error) {
	out := map[string]any{}
	var seen keySet
	for d.dec.More() {
		tok, err := d.dec.Token()
		if err != nil {
			return nil, syntaxError(err)
		}
		key := tok.(string)
		d.enter(field{step: stepKey, name: key})
		if seen.add(key) {
			d.fieldErrors = append(d.fieldErrors, fmt.Sprintf("duplicate field %q", d.path()))
		}
		v, err := d.value(elem, "")
		if err != nil {
			return nil, err
		}
		d.leave()
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
func (d *decoder) intOrString(tok json.Token) (any, error) {
	switch v := tok.(type) {
	case string:
		return v, nil
	case json.Number:
		if _, err := strconv.ParseInt(v.String(), 10, 32); err != nil {
			d.typeError("number "+v.String(), "int32")
			return nil, nil
		}
		return v, nil
	}
	d.typeError(jsonKind(tok), "int32")
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
