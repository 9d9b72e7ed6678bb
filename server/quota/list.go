package quota

import (
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	"kubeplay/internal/jsonmap"
)

// A List is a ResourceList: quantities by resource name (a quota's hard
// limits, its used amounts, what one object uses).
type List map[string]resource.Quantity

// ListOf reads the ResourceList v of a decoded object (quantities as
// strings, or numbers as a client may send them); entries that are no
// quantity are left out.
func ListOf(v any) List {
	m, _ := v.(map[string]any)
	if m == nil {
		return nil
	}
	out := make(List, len(m))
	for name, x := range m {
		if q, ok := jsonmap.Quantity(x); ok {
			out[name] = q
		}
	}
	return out
}

// JSON is l as an object holds it: each quantity in its canonical form.
func (l List) JSON() map[string]any {
	out := make(map[string]any, len(l))
	for name, q := range l {
		out[name] = q.String()
	}
	return out
}

// Names are l's resource names, sorted.
func (l List) Names() []string { return slices.Sorted(maps.Keys(l)) }

// Add is a + b, a resource at a time; a resource in one only is copied.
func Add(a, b List) List {
	out := List{}
	for name, q := range a {
		out[name] = q.DeepCopy()
	}
	for name, q := range b {
		if sum, ok := out[name]; ok {
			sum.Add(q)
			out[name] = sum
		} else {
			out[name] = q.DeepCopy()
		}
	}
	return out
}

// SubtractNonNegative is a - b, where no result is below zero; a resource
// in b only is left out.
func SubtractNonNegative(a, b List) List {
	out := List{}
	for name, q := range a {
		q = q.DeepCopy()
		if other, ok := b[name]; ok {
			q.Sub(other)
			if q.Sign() < 0 {
				q = resource.Quantity{Format: q.Format}
			}
		}
		out[name] = q
	}
	return out
}

// Mask is l restricted to names.
func Mask(l List, names []string) List {
	out := List{}
	for _, name := range names {
		if q, ok := l[name]; ok {
			out[name] = q.DeepCopy()
		}
	}
	return out
}

// RemoveZeros is l without its zero quantities.
func RemoveZeros(l List) List {
	out := List{}
	for name, q := range l {
		if !q.IsZero() {
			out[name] = q
		}
	}
	return out
}

// Negative names the resources of l below zero.
func Negative(l List) []string {
	var out []string
	for name, q := range l {
		if q.Sign() < 0 {
			out = append(out, name)
		}
	}
	return out
}

// Equal reports whether a and b hold the same resources in the same
// amounts.
func Equal(a, b List) bool {
	if len(a) != len(b) {
		return false
	}
	for name, q := range a {
		other, ok := b[name]
		if !ok || q.Cmp(other) != 0 {
			return false
		}
	}
	return true
}

// Within reports whether each resource of a that b bounds is at most b's,
// and names those that are not.
func Within(a, b List) (bool, []string) {
	var exceeded []string
	for name, q := range a {
		if bound, ok := b[name]; ok && q.Cmp(bound) > 0 {
			exceeded = append(exceeded, name)
		}
	}
	return len(exceeded) == 0, exceeded
}

// String is l as kube-apiserver's quota messages print it:
// "name=quantity" sorted by name, comma separated.
func (l List) String() string {
	parts := make([]string, 0, len(l))
	for _, name := range l.Names() {
		q := l[name]
		parts = append(parts, name+"="+q.String())
	}
	return strings.Join(parts, ",")
}

// prettyNames is names sorted and comma separated, as the messages print
// them.
func prettyNames(names []string) string {
	return strings.Join(slices.Sorted(slices.Values(names)), ",")
}

func intersect(names, known []string) []string {
	var out []string
	for _, n := range names {
		if slices.Contains(known, n) {
			out = append(out, n)
		}
	}
	return out
}

func one() resource.Quantity { return *resource.NewQuantity(1, resource.DecimalSI) }

func zero() resource.Quantity { return resource.Quantity{Format: resource.DecimalSI} }
