package jsonmap

import (
	"encoding/json"
	"strconv"

	"k8s.io/apimachinery/pkg/api/resource"
)

// Object is a JSON object decoded into a map, such as a Kubernetes object.
type Object = map[string]any

// Child is the object at path in o (o itself for an empty path), nil if a
// step is missing or not an object.
func Child(o Object, path ...string) Object {
	for _, k := range path {
		o, _ = o[k].(map[string]any)
	}
	return o
}

// String is the string at path in o, "" if there is none.
func String(o Object, path ...string) string {
	s, _ := value(o, path).(string)
	return s
}

// Int is the integer at path in o, whatever its Go representation (a
// fraction is cut); ok is false if there is none.
func Int(o Object, path ...string) (n int64, ok bool) { return IntOf(value(o, path)) }

// IntOf reads the integer v, whatever its Go representation: a
// json.Number as decoded from a body, an int64 as the server sets it, a
// float64 as encoding/json decodes it (a fraction is cut).
func IntOf(v any) (int64, bool) {
	switch x := v.(type) {
	case float64:
		return int64(x), true
	case int64:
		return x, true
	case json.Number:
		n, err := x.Int64()
		return n, err == nil
	}
	return 0, false
}

// Items is the list v as objects, index for index: an entry that is no
// object is nil.
func Items(v any) []map[string]any {
	l, _ := v.([]any)
	out := make([]map[string]any, len(l))
	for i, e := range l {
		out[i], _ = e.(map[string]any)
	}
	return out
}

// Quantity reads a resource quantity ("500m", "1Gi"), or a number, which
// kube-apiserver reads as a quantity too.
func Quantity(v any) (resource.Quantity, bool) {
	var s string
	switch x := v.(type) {
	case string:
		s = x
	case json.Number:
		s = x.String()
	case float64:
		s = strconv.FormatFloat(x, 'f', -1, 64)
	case int64:
		s = strconv.FormatInt(x, 10)
	default:
		return resource.Quantity{}, false
	}
	q, err := resource.ParseQuantity(s)
	return q, err == nil
}

// List is the list at path in o, nil if there is none.
func List(o Object, path ...string) []any {
	l, _ := value(o, path).([]any)
	return l
}

// Strings is the strings of the list at path in o, in order, without the
// entries that are not strings; nil if there are none.
func Strings(o Object, path ...string) []string { return StringsOf(value(o, path)) }

// StringsOf is the strings of the list v, as Strings.
func StringsOf(v any) []string {
	list, _ := v.([]any)
	var out []string
	for _, e := range list {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func value(o Object, path []string) any {
	if len(path) == 0 {
		return o
	}
	return Child(o, path[:len(path)-1]...)[path[len(path)-1]]
}

// Ensure is the object at key in o, which it sets to a new empty one if
// there is none.
func Ensure(o Object, key string) Object {
	if m, ok := o[key].(map[string]any); ok {
		return m
	}
	m := Object{}
	o[key] = m
	return m
}
