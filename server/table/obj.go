package table

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/duration"
)

// obj reads fields of a decoded object, tolerating any shape: a missing or
// mistyped field reads as its zero value.
type obj map[string]any

func (o obj) get(path ...string) any {
	var cur any = map[string]any(o)
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[p]
	}
	return cur
}

func (o obj) str(path ...string) string {
	s, _ := o.get(path...).(string)
	return s
}

func (o obj) obj(path ...string) obj {
	m, _ := o.get(path...).(map[string]any)
	return m
}

func (o obj) list(path ...string) []obj {
	l, _ := o.get(path...).([]any)
	out := make([]obj, 0, len(l))
	for _, e := range l {
		m, _ := e.(map[string]any)
		out = append(out, m)
	}
	return out
}

func (o obj) strings(path ...string) []string {
	l, _ := o.get(path...).([]any)
	out := make([]string, 0, len(l))
	for _, e := range l {
		s, _ := e.(string)
		out = append(out, s)
	}
	return out
}

// int reads an integer field; ok is false when it is unset.
func (o obj) int(path ...string) (int64, bool) {
	switch v := o.get(path...).(type) {
	case json.Number:
		n, err := v.Int64()
		return n, err == nil
	case float64:
		return int64(v), true
	case int64:
		return v, true
	case int:
		return int64(v), true
	}
	return 0, false
}

func (o obj) num(path ...string) int64 {
	n, _ := o.int(path...)
	return n
}

func (o obj) boolean(path ...string) (bool, bool) {
	b, ok := o.get(path...).(bool)
	return b, ok
}

func (o obj) time(path ...string) time.Time {
	t, _ := time.Parse(time.RFC3339, o.str(path...))
	return t
}

// stringMap reads a map of strings (labels, a selector's matchLabels).
func (o obj) stringMap(path ...string) map[string]string {
	m, _ := o.get(path...).(map[string]any)
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k], _ = v.(string)
	}
	return out
}

func (o obj) name() string { return o.str("metadata", "name") }

// age prints how long ago a timestamp was, as kubectl's AGE column does.
func age(t time.Time, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t))
}

func (o obj) age(now time.Time) string { return age(o.time("metadata", "creationTimestamp"), now) }

// orNone prints an empty value as <none>.
func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

// formatLabels prints a label map as k=v pairs sorted by key, <none> when
// empty.
func formatLabels(m map[string]string) string {
	if len(m) == 0 {
		return "<none>"
	}
	return labels.FormatLabels(m)
}

// selector prints a metav1.LabelSelector as a selector string: <none> when
// unset or empty, "<error>" when it does not parse.
func selector(o obj) string {
	if o == nil {
		return "<none>"
	}
	b, _ := json.Marshal(o)
	var ls metav1.LabelSelector
	if err := json.Unmarshal(b, &ls); err != nil {
		return "<error>"
	}
	sel, err := metav1.LabelSelectorAsSelector(&ls)
	if err != nil {
		return "<error>"
	}
	return orNone(sel.String())
}

// containers prints the names and images of a pod template's containers.
func containers(spec obj) (names, images string) {
	var n, i []string
	for _, c := range spec.list("containers") {
		n = append(n, c.str("name"))
		i = append(i, c.str("image"))
	}
	return strings.Join(n, ","), strings.Join(i, ",")
}

// podTemplateCells are the wide columns of workloads: containers, images,
// selector.
func podTemplateCells(o obj, template obj) []any {
	names, images := containers(template.obj("spec"))
	return []any{names, images, selector(o.obj("spec", "selector"))}
}

// sortedKeys returns a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// intOrString prints an IntOrString field, empty when unset.
func (o obj) intOrString(path ...string) string {
	switch v := o.get(path...).(type) {
	case string:
		return v
	case nil:
		return ""
	default:
		return fmt.Sprint(v)
	}
}
