package object

import (
	"bytes"
	"encoding/json"
	"slices"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"kubeplay/web/internal/yamlview"
)

// manager is one entry of metadata.managedFields with its decoded field set.
type manager struct {
	ManagerProps
	set *fieldpath.Set
}

// managers decodes obj's metadata.managedFields. An entry whose fieldsV1
// does not decode is kept, owning nothing, with the error shown.
func managers(obj map[string]any) []manager {
	md, _ := obj["metadata"].(map[string]any)
	entries, _ := md["managedFields"].([]any)
	var out []manager
	for i, e := range entries {
		m, _ := e.(map[string]any)
		str := func(k string) string { s, _ := m[k].(string); return s }
		mg := manager{ManagerProps: ManagerProps{
			Index: i, Name: str("manager"), Operation: str("operation"), Subresource: str("subresource"),
			Time: str("time"), APIVersion: str("apiVersion"),
		}, set: &fieldpath.Set{}}
		if raw, ok := m["fieldsV1"]; ok {
			b, _ := json.Marshal(raw)
			if err := mg.set.FromJSON(bytes.NewReader(b)); err != nil {
				mg.Error = "fieldsV1: " + err.Error()
			}
		}
		for p := range mg.set.Leaves().All() {
			mg.Fields = append(mg.Fields, p.String())
		}
		out = append(out, mg)
	}
	return out
}

// elementFunc names list items the way the managers' sets do: by key
// (k:{"name":"x"}), by value (v:"x") or by index, whichever a set holds for
// the item; by index when none does. Each list's elements are indexed once,
// so naming every item of a long list stays linear.
func elementFunc(ms []manager) yamlview.ElementFunc {
	lists := map[string]*listIndex{}
	return func(list fieldpath.Path, index int, item any) fieldpath.PathElement {
		key := list.String()
		li, ok := lists[key]
		if !ok {
			li = newListIndex(ms, list)
			lists[key] = li
		}
		if pe, ok := li.find(index, item); ok {
			return pe
		}
		return fieldpath.IndexElement(index)
	}
}

// listIndex is the elements the managers' sets hold for one list.
type listIndex struct {
	byKey   map[string]fieldpath.PathElement // keyString(names, values) → element
	keySets [][]string                       // the key field names in use
	byValue map[string]fieldpath.PathElement // JSON of the value → element
	byIndex map[int]fieldpath.PathElement
}

func newListIndex(ms []manager, list fieldpath.Path) *listIndex {
	li := &listIndex{byKey: map[string]fieldpath.PathElement{}, byValue: map[string]fieldpath.PathElement{}, byIndex: map[int]fieldpath.PathElement{}}
	add := func(pe fieldpath.PathElement) {
		switch {
		case pe.Index != nil:
			li.byIndex[*pe.Index] = pe
		case pe.Value != nil:
			li.byValue[jsonOf((*pe.Value).Unstructured())] = pe
		case pe.Key != nil:
			var names []string
			var values []any
			for _, f := range *pe.Key {
				names = append(names, f.Name)
				values = append(values, f.Value.Unstructured())
			}
			if !slices.ContainsFunc(li.keySets, func(n []string) bool { return slices.Equal(n, names) }) {
				li.keySets = append(li.keySets, names)
			}
			li.byKey[jsonOf(names)+jsonOf(values)] = pe
		}
	}
	for _, m := range ms {
		if sub := descend(m.set, list); sub != nil {
			sub.Members.Iterate(add)
			sub.Children.Iterate(add)
		}
	}
	return li
}

func (li *listIndex) find(index int, item any) (fieldpath.PathElement, bool) {
	if m, ok := item.(map[string]any); ok {
		for _, names := range li.keySets {
			values := make([]any, len(names))
			for i, n := range names {
				values[i] = m[n]
			}
			if pe, ok := li.byKey[jsonOf(names)+jsonOf(values)]; ok {
				return pe, true
			}
		}
	}
	if pe, ok := li.byValue[jsonOf(item)]; ok {
		return pe, true
	}
	pe, ok := li.byIndex[index]
	return pe, ok
}

// jsonOf is v's JSON, as a comparable key (numbers print the same whether
// decoded as float64 or held as int64).
func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func descend(s *fieldpath.Set, p fieldpath.Path) *fieldpath.Set {
	for _, pe := range p {
		var ok bool
		if s, ok = s.Children.Get(pe); !ok {
			return nil
		}
	}
	return s
}

// owners returns the indexes of the managers owning line: its field, or the
// list item it opens.
func owners(ms []manager, l yamlview.Line) []int {
	var out []int
	for i, m := range ms {
		if l.Path != nil && m.set.Has(l.Path) || l.Item != nil && m.set.Has(l.Item) {
			out = append(out, i)
		}
	}
	return out
}

// ownersOf returns the names of the managers owning path.
func ownersOf(ms []manager, p fieldpath.Path) []string {
	var out []string
	for _, m := range ms {
		if m.set.Has(p) && !slices.Contains(out, m.Name) {
			out = append(out, m.Name)
		}
	}
	return out
}
