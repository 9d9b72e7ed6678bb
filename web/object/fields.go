package object

import (
	"bytes"
	"encoding/json"
	"slices"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"

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
// the item; by index when none does.
func elementFunc(ms []manager) yamlview.ElementFunc {
	return func(list fieldpath.Path, index int, item any) fieldpath.PathElement {
		iv := value.NewValueInterface(item)
		for _, m := range ms {
			sub := descend(m.set, list)
			if sub == nil {
				continue
			}
			var found *fieldpath.PathElement
			try := func(pe fieldpath.PathElement) {
				if found == nil && matchesItem(pe, index, iv) {
					found = &pe
				}
			}
			sub.Members.Iterate(try)
			sub.Children.Iterate(try)
			if found != nil {
				return *found
			}
		}
		return fieldpath.IndexElement(index)
	}
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

func matchesItem(pe fieldpath.PathElement, index int, item value.Value) bool {
	switch {
	case pe.Index != nil:
		return *pe.Index == index
	case pe.Value != nil:
		return value.Equals(*pe.Value, item)
	case pe.Key != nil:
		if !item.IsMap() {
			return false
		}
		m := item.AsMap()
		for _, f := range *pe.Key {
			v, ok := m.Get(f.Name)
			if !ok || !value.Equals(v, f.Value) {
				return false
			}
		}
		return true
	}
	return false
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
