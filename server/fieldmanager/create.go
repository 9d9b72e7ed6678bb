package fieldmanager

import (
	"maps"
	"time"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
)

// stripped are the fields kube-apiserver's field manager never records
// (its stripMeta manager's set): the object's identity and what the server
// sets. Only these paths go, not what is under them.
var stripped = fieldpath.NewSet(
	fieldpath.MakePathOrDie("apiVersion"),
	fieldpath.MakePathOrDie("kind"),
	fieldpath.MakePathOrDie("metadata"),
	fieldpath.MakePathOrDie("metadata", "name"),
	fieldpath.MakePathOrDie("metadata", "namespace"),
	fieldpath.MakePathOrDie("metadata", "creationTimestamp"),
	fieldpath.MakePathOrDie("metadata", "selfLink"),
	fieldpath.MakePathOrDie("metadata", "uid"),
	fieldpath.MakePathOrDie("metadata", "clusterName"),
	fieldpath.MakePathOrDie("metadata", "generation"),
	fieldpath.MakePathOrDie("metadata", "managedFields"),
	fieldpath.MakePathOrDie("metadata", "resourceVersion"),
)

// created computes the managedFields kube-apiserver's field manager gives
// obj, of f's kind, on its create by manager, without running it: most of
// the manager's work on a create goes into machinery that has nothing to
// do (the managers of the object, none yet, their versions, an
// Unstructured round trip of the entries). What it records then is its
// comparison of obj with the empty object, less the fields it does not
// track: one entry, or none (nil) when nothing is left. ok is false when
// obj is not such a plain create (a subresource's, managedFields sent, an
// object of another kind or that does not type), which the field manager
// itself must record.
func (f *FieldManager) created(obj Object, manager string) (entries []any, ok bool) {
	gvk := f.gvk
	if f.subresource != "" {
		return nil, false
	}
	// A sent managedFields, even an empty one, is a starting point.
	if md, _ := obj["metadata"].(map[string]any); md != nil {
		if _, sent := md["managedFields"]; sent {
			return nil, false
		}
	}
	// The field manager's identifiers of managers are JSON, which would
	// change a name that is not UTF-8.
	if !utf8.ValidString(manager) {
		return nil, false
	}
	// The field manager converts the object to its version by these.
	if obj["apiVersion"] != gvk.GroupVersion().String() || obj["kind"] != gvk.Kind {
		return nil, false
	}
	zero, err := f.zero()
	if err != nil {
		return nil, false
	}
	seen := withoutStripped(omitEmptyCopy(gvk, obj))
	tv, err := f.tc.ObjectToTyped(&unstructured.Unstructured{Object: seen}, typed.AllowDuplicates)
	if err != nil {
		return nil, false
	}
	cmp, err := zero.Compare(tv)
	if err != nil {
		return nil, false
	}
	set := cmp.Modified.Union(cmp.Added)
	if f.untracked != nil {
		set = f.untracked.Filter(set)
	}
	set = set.Difference(stripped)
	if set.Empty() {
		return nil, true
	}
	fields, ok := fieldsV1(set)
	if !ok {
		return nil, false
	}
	if manager == "" {
		manager = "unknown"
	}
	return []any{map[string]any{
		"manager":    manager,
		"operation":  "Update",
		"apiVersion": gvk.GroupVersion().String(),
		"time":       time.Now().UTC().Format(time.RFC3339),
		"fieldsType": "FieldsV1",
		"fieldsV1":   fields,
	}}, true
}

// fieldsV1 is set as an object's managedFields hold it: its FieldsV1 JSON
// decoded. A path element that is not valid UTF-8, which that round trip
// would change, makes it not ok.
func fieldsV1(set *fieldpath.Set) (map[string]any, bool) {
	m := map[string]any{}
	ok := true
	set.Members.Iterate(func(pe fieldpath.PathElement) {
		k, err := pathElementKey(pe)
		if err != nil || !utf8.ValidString(k) {
			ok = false
		}
		m[k] = map[string]any{}
	})
	set.Children.Iterate(func(pe fieldpath.PathElement) {
		k, err := pathElementKey(pe)
		if err != nil || !utf8.ValidString(k) {
			ok = false
		}
		child, childOK := fieldsV1(set.Children.Descend(pe))
		ok = ok && childOK
		// A path that is both set and holds others is the "." of these.
		if len(child) > 0 && set.Members.Has(pe) {
			child["."] = map[string]any{}
		}
		m[k] = child
	})
	return m, ok
}

// pathElementKey is pe as FieldsV1 writes it; a field's name, by far the
// most common, without the serializer's buffers.
func pathElementKey(pe fieldpath.PathElement) (string, error) {
	if pe.FieldName != nil {
		return "f:" + *pe.FieldName, nil
	}
	return fieldpath.SerializePathElement(pe)
}

// withoutStripped is obj without the stripped metadata fields that cannot
// change what else is recorded: set, of the type the schema declares (else
// typing the object fails, as it must), they are leaves the comparison
// would only record to have them stripped. obj itself is left as it is.
func withoutStripped(obj Object) Object {
	md, ok := obj["metadata"].(map[string]any)
	if !ok {
		return obj
	}
	md = maps.Clone(md)
	for _, f := range []string{"name", "namespace", "uid", "creationTimestamp", "selfLink", "resourceVersion"} {
		if _, ok := md[f].(string); ok {
			delete(md, f)
		}
	}
	if _, ok := md["generation"].(int64); ok {
		delete(md, "generation")
	}
	out := maps.Clone(obj)
	out["metadata"] = md
	return out
}
