package server

import (
	"fmt"
	"maps"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"kubeplay/server/catalog"
	"kubeplay/server/conversion"
	"kubeplay/server/encoding"
	"kubeplay/server/fieldmanager"
)

// toStorage returns obj in r's storage encoding. It never modifies obj: the
// result is a copy at the top level and in metadata, and a deep copy when
// a conversion applies.
func toStorage(r *catalog.Resource, obj object) object {
	out := maps.Clone(obj)
	out["metadata"] = maps.Clone(metadata(obj))
	if c := conversionOf(r); c != nil {
		out = deepCopyObject(out)
		c.ToStorage(out)
	}
	st := catalog.StorageOf(r)
	out["apiVersion"] = schemaAPIVersion(st.Group, st.Version)
	out["kind"] = st.Kind
	return out
}

// conversionOf is the conversion of r's objects to and from storage, nil
// for those stored as they are served.
func conversionOf(r *catalog.Resource) *conversion.Conversion {
	if r.Custom != nil {
		return nil
	}
	return conversion.For(r.GroupVersionResource())
}

// convertsOnRead reports whether fromStorage changes more of r's objects
// than their kind and apiVersion.
func convertsOnRead(r *catalog.Resource) bool {
	return r.Custom != nil || conversionOf(r) != nil
}

// fromStorage converts a freshly decoded stored object, in place, to r's
// version. As kube-apiserver, a custom object is read through its
// version's schema as it is now: what it does not know is dropped, its
// defaults are set.
func fromStorage(r *catalog.Resource, obj object) {
	if r.Custom != nil {
		r.Custom.Schema.Prune(obj)
		r.Custom.Schema.ApplyDefaults(obj)
	} else if c := conversionOf(r); c != nil {
		c.FromStorage(obj)
	}
	obj["apiVersion"] = r.APIVersion()
	obj["kind"] = r.Kind
}

// viaStorage converts obj, in place, to r's storage version and back, as
// kube-apiserver decodes a request of a version it does not store into its
// internal type before the field manager sees it: the object then holds
// the other version's defaults and what the conversion carries (HPA v1's
// annotations), which its managedFields record. obj's metadata map stays
// the same map.
func viaStorage(r *catalog.Resource, obj object) {
	back := toStorage(r, obj)
	fromStorage(r, back)
	md := metadata(obj)
	clear(md)
	maps.Copy(md, metadata(back))
	back["metadata"] = md
	clear(obj)
	maps.Copy(obj, back)
}

func schemaAPIVersion(group, version string) string {
	if group == "" {
		return version
	}
	return group + "/" + version
}

// convertVersion converts a built-in object to another version of its
// resource, through the storage version, for the field manager, which
// compares the fields of managers of different versions.
func convertVersion(obj fieldmanager.Object, to schema.GroupVersion) (fieldmanager.Object, error) {
	gv, err := schema.ParseGroupVersion(str(obj, "apiVersion"))
	if err != nil {
		return nil, err
	}
	from := catalog.LookupBuiltinKind(gv.WithKind(str(obj, "kind")))
	if from == nil {
		return nil, fmt.Errorf("no conversion of %s from %s to %s", str(obj, "kind"), gv, to)
	}
	target := catalog.LookupBuiltin(to.WithResource(from.Resource))
	if target == nil {
		return nil, fmt.Errorf("no conversion of %s from %s to %s", from.Kind, gv, to)
	}
	// Through JSON: the field manager's objects hold int64 numbers, the
	// conversion json.Numbers.
	b, err := encoding.MarshalObject(obj)
	if err != nil {
		return nil, err
	}
	in, err := encoding.DecodeObject(encoding.JSON, b)
	if err != nil {
		return nil, err
	}
	out := toStorage(from, in)
	fromStorage(target, out)
	return out, nil
}
