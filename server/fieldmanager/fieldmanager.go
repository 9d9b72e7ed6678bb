package fieldmanager

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
)

// Object is a decoded Kubernetes object.
type Object = map[string]any

// typeConverter types built-in objects by their OpenAPI schemas. Built once
// per process from the embedded documents, then only read.
var typeConverter = sync.OnceValues(func() (managedfields.TypeConverter, error) {
	schemas, err := Schemas()
	if err != nil {
		return nil, err
	}
	return managedfields.NewTypeConverter(schemas, false)
})

// Managers hands out the field manager of each kind and subresource. It is
// safe for concurrent use; the zero value is ready.
type Managers struct {
	byKey sync.Map // key -> *FieldManager
}

// FieldManager is kube-apiserver's field manager of a kind written through
// a subresource, with what Update needs to record a create without it (see
// created).
type FieldManager struct {
	*managedfields.FieldManager
	tc          managedfields.TypeConverter
	gvk         schema.GroupVersionKind
	subresource string
	untracked   fieldpath.Filter // nil when every field is recorded
	// zero is the typed empty object a create is compared with.
	zero func() (*typed.TypedValue, error)
}

type key struct {
	tc          managedfields.TypeConverter
	gvk         schema.GroupVersionKind
	subresource string
}

// CustomTypeConverter types the objects of a custom kind by the schemas of
// its OpenAPI document (openapi.CustomSchemas); with preserveUnknownFields
// (a CRD's spec.preserveUnknownFields) the fields they do not declare are
// tracked too, as kube-apiserver tracks them.
func CustomTypeConverter(schemas map[string]any, preserveUnknownFields bool) (managedfields.TypeConverter, error) {
	defs := make(map[string]*spec.Schema, len(schemas))
	for name, s := range schemas {
		b, err := json.Marshal(s)
		if err != nil {
			return nil, err
		}
		def := &spec.Schema{}
		if err := json.Unmarshal(b, def); err != nil {
			return nil, err
		}
		defs[name] = def
	}
	return managedfields.NewTypeConverter(defs, preserveUnknownFields)
}

// For returns the field manager of objects of kind gvk written through
// subresource ("" for the main resource, "status", "scale" for
// autoscaling/v1 Scale objects). statusElsewhere says whether the kind's
// status is written through another subresource, so that writes through
// this one do not record it; a write through /status does not record the
// spec. Nor do they record resets (the kind's other reset fields through
// subresource).
func (m *Managers) For(gvk schema.GroupVersionKind, subresource string, statusElsewhere bool, resets []fieldpath.Path) (*FieldManager, error) {
	tc, err := typeConverter()
	if err != nil {
		return nil, err
	}
	return m.forType(tc, unversioned{}, gvk, subresource, statusElsewhere, resets)
}

// Converter converts an object to another version of its kind.
type Converter func(obj Object, to schema.GroupVersion) (Object, error)

// ForVersions is For with a kind served in several versions, which convert
// converts between: managedFields entries of another version then count
// (an apply conflicts with a manager of another version, as
// kube-apiserver's does).
func (m *Managers) ForVersions(gvk schema.GroupVersionKind, subresource string, statusElsewhere bool, resets []fieldpath.Path, convert Converter) (*FieldManager, error) {
	tc, err := typeConverter()
	if err != nil {
		return nil, err
	}
	return m.forType(tc, versions{convert: convert}, gvk, subresource, statusElsewhere, resets)
}

// ForType is For with the objects of a custom kind, typed by tc.
func (m *Managers) ForType(tc managedfields.TypeConverter, gvk schema.GroupVersionKind, subresource string, statusElsewhere bool, resets []fieldpath.Path) (*FieldManager, error) {
	return m.forType(tc, customVersions{}, gvk, subresource, statusElsewhere, resets)
}

// forType builds the field manager; the filters it records changes through
// are a function of gvk and subresource, so it is cached by them.
func (m *Managers) forType(tc managedfields.TypeConverter, conv runtime.ObjectConvertor, gvk schema.GroupVersionKind, subresource string, statusElsewhere bool, resets []fieldpath.Path) (*FieldManager, error) {
	k := key{tc, gvk, subresource}
	if f, ok := m.byKey.Load(k); ok {
		return f.(*FieldManager), nil
	}
	var untrackedFilter fieldpath.Filter
	var reset map[fieldpath.APIVersion]fieldpath.Filter
	apiVersion := fieldpath.APIVersion(gvk.GroupVersion().String())
	untracked := slices.Clone(resets)
	switch {
	case subresource == "status":
		untracked = append(untracked, fieldpath.MakePathOrDie("spec"))
	case statusElsewhere:
		untracked = append(untracked, fieldpath.MakePathOrDie("status"))
	}
	if len(untracked) > 0 {
		untrackedFilter = fieldpath.NewExcludeSetFilter(fieldpath.NewSet(untracked...))
		reset = map[fieldpath.APIVersion]fieldpath.Filter{apiVersion: untrackedFilter}
	}
	full, err := managedfields.NewDefaultFieldManager(tc, conv, unversioned{}, unversioned{}, gvk, gvk.GroupVersion(), subresource, reset)
	if err != nil {
		return nil, err
	}
	f := &FieldManager{FieldManager: full, tc: tc, gvk: gvk, subresource: subresource, untracked: untrackedFilter,
		zero: sync.OnceValues(func() (*typed.TypedValue, error) {
			zero := NewObject(gvk)
			if err := OmitEmpty(gvk, zero); err != nil {
				return nil, err
			}
			return tc.ObjectToTyped(&unstructured.Unstructured{Object: zero}, typed.AllowDuplicates)
		})}
	actual, _ := m.byKey.LoadOrStore(k, f)
	return actual.(*FieldManager), nil
}

// Forget drops the field managers of objects typed by tc (a custom kind's
// that changed or went).
func (m *Managers) Forget(tc managedfields.TypeConverter) {
	m.byKey.Range(func(k, _ any) bool {
		if k.(key).tc == tc {
			m.byKey.Delete(k)
		}
		return true
	})
}

// Update records manager's changes from live to obj in obj's managedFields
// and returns obj. live is nil for a create. As kube-apiserver does, a
// failure to compute managedFields drops them rather than failing the write.
// A plain create is recorded without running the field manager (created),
// with the same entries.
func Update(f *FieldManager, live, obj Object, manager string) Object {
	PlainNumbers(obj)
	if live == nil {
		if entries, ok := f.created(obj, manager); ok {
			setManagedFields(obj, entries)
			return obj
		}
	}
	return f.update(live, obj, manager)
}

// update is Update by kube-apiserver's field manager.
func (f *FieldManager) update(live, obj Object, manager string) Object {
	gvk := f.gvk
	if live == nil {
		live = NewObject(gvk)
	}
	PlainNumbers(live)
	// It compares the objects as kube-apiserver's converts its Go types:
	// without the empty fields omitempty leaves out, which obj keeps for
	// validation until it is stored.
	seen, was := runtime.DeepCopyJSON(obj), runtime.DeepCopyJSON(live)
	_ = OmitEmpty(gvk, seen) // an error means the embedded schemas are broken
	_ = OmitEmpty(gvk, was)
	out := f.UpdateNoErrors(&unstructured.Unstructured{Object: was}, &unstructured.Unstructured{Object: seen}, manager)
	entries, _ := out.(*unstructured.Unstructured).Object["metadata"].(map[string]any)["managedFields"].([]any)
	setManagedFields(obj, entries)
	return obj
}

// setManagedFields sets obj's metadata.managedFields to entries, or
// removes them when entries is nil.
func setManagedFields(obj Object, entries []any) {
	md, _ := obj["metadata"].(map[string]any)
	if md == nil {
		md = map[string]any{}
		obj["metadata"] = md
	}
	if entries != nil {
		md["managedFields"] = entries
	} else {
		delete(md, "managedFields")
	}
}

// NewObject is the zero value of kind gvk that a create starts from, shaped
// as kube-apiserver's Go types shape it (see Materialize).
func NewObject(gvk schema.GroupVersionKind) Object {
	obj := Object{"apiVersion": gvk.GroupVersion().String(), "kind": gvk.Kind}
	// An error means the schemas are broken; the embedded ones are not.
	_ = Materialize(gvk, obj)
	return obj
}

// Apply merges the applied configuration into live as manager's, returning
// the new object; a conflict with another manager's fields is a 409 Status
// error unless force. live is an empty object of the kind for a create.
func Apply(f *FieldManager, live, applied Object, manager string, force bool) (Object, error) {
	PlainNumbers(live)
	PlainNumbers(applied)
	out, err := f.Apply(&unstructured.Unstructured{Object: live}, &unstructured.Unstructured{Object: applied}, manager, force)
	if err != nil {
		return nil, err
	}
	return out.(*unstructured.Unstructured).Object, nil
}

// ManagerFromUserAgent is the manager kube-apiserver names a write without
// fieldManager after: the User-Agent up to its first "/" ("kubectl" for
// "kubectl/v1.35.0 (linux/amd64) kubernetes/abc"), printable characters
// only, at most 128 bytes.
func ManagerFromUserAgent(userAgent string) string {
	prefix, _, _ := strings.Cut(userAgent, "/")
	var b bytes.Buffer
	for _, r := range prefix {
		if !unicode.IsPrint(r) {
			continue
		}
		if b.Len() >= 128 {
			break
		}
		b.WriteRune(r)
	}
	return b.String()
}

// unversioned is the object converter, defaulter and creater of a kind
// served in one version, its own hub: conversion is the identity, defaulting
// a no-op, and new objects are zero values (NewObject).
type unversioned struct{}

func (unversioned) Convert(in, out, context any) error {
	return fmt.Errorf("fieldmanager: conversion between objects is not supported")
}

func (unversioned) ConvertToVersion(in runtime.Object, gv runtime.GroupVersioner) (runtime.Object, error) {
	gvk := in.GetObjectKind().GroupVersionKind()
	target, ok := gv.KindForGroupVersionKinds([]schema.GroupVersionKind{gvk})
	if !ok || target != gvk {
		// The entries of another version (an Event's written as
		// events.k8s.io/v1 and read as v1) then count as of a version
		// the field manager does not know, and are dropped.
		return nil, runtime.NewNotRegisteredErrForKind("kubeplay", target)
	}
	return in, nil
}

// customVersions converts nothing between the versions of a custom kind:
// kube-apiserver cannot convert the managedFields entries of another version
// of a CRD whose conversion is None, and so resets them all (which
// UpdateNoErrors does on any other error).
type customVersions struct{ unversioned }

func (customVersions) ConvertToVersion(in runtime.Object, gv runtime.GroupVersioner) (runtime.Object, error) {
	gvk := in.GetObjectKind().GroupVersionKind()
	if target, ok := gv.KindForGroupVersionKinds([]schema.GroupVersionKind{gvk}); !ok || target != gvk {
		return nil, fmt.Errorf("fieldmanager: cannot convert %v to %v", gvk, gv)
	}
	return in, nil
}

// versions converts between the versions of a kind with a Converter.
type versions struct {
	unversioned
	convert Converter
}

func (v versions) ConvertToVersion(in runtime.Object, gv runtime.GroupVersioner) (runtime.Object, error) {
	gvk := in.GetObjectKind().GroupVersionKind()
	target, ok := gv.KindForGroupVersionKinds([]schema.GroupVersionKind{gvk})
	if !ok {
		return nil, runtime.NewNotRegisteredErrForKind("kubeplay", gvk)
	}
	if target == gvk {
		return in, nil
	}
	u, ok := in.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("fieldmanager: cannot convert %T", in)
	}
	out, err := v.convert(u.Object, target.GroupVersion())
	if err != nil {
		return nil, err
	}
	PlainNumbers(out)
	return &unstructured.Unstructured{Object: out}, nil
}

func (unversioned) ConvertFieldLabel(gvk schema.GroupVersionKind, label, value string) (string, string, error) {
	return label, value, nil
}

func (unversioned) Default(runtime.Object) {}

func (unversioned) New(gvk schema.GroupVersionKind) (runtime.Object, error) {
	return &unstructured.Unstructured{Object: NewObject(gvk)}, nil
}

// PlainNumbers turns the json.Numbers of a decoded object into the
// int64 and float64 values unstructured objects hold, in place.
func PlainNumbers(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = PlainNumbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = PlainNumbers(e)
		}
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return n
		}
		if f, err := x.Float64(); err == nil {
			return f
		}
	}
	return v
}
