// Package decoded reads Kubernetes objects decoded from JSON into Go maps
// (map[string]any objects, []any lists, numbers as json.Number, int64 or
// float64 depending on who decoded them), tolerating any shape.
package decoded

import (
	"encoding/json"

	"k8s.io/apimachinery/pkg/api/resource"
)

// Child is obj's object field k, nil if it has none (or obj is nil).
func Child(obj map[string]any, k string) map[string]any {
	m, _ := obj[k].(map[string]any)
	return m
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

// Int reads an integer, whatever its Go representation.
func Int(v any) (int64, bool) {
	switch x := v.(type) {
	case json.Number:
		n, err := x.Int64()
		return n, err == nil
	case int64:
		return x, true
	case float64:
		return int64(x), true
	}
	return 0, false
}

// Quantity reads a resource quantity ("500m", "1Gi").
func Quantity(v any) (resource.Quantity, bool) {
	s, ok := v.(string)
	if !ok {
		return resource.Quantity{}, false
	}
	q, err := resource.ParseQuantity(s)
	return q, err == nil
}
