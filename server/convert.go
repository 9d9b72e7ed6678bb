package server

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"kubeplay/server/catalog"
	"kubeplay/server/conversion"
	"kubeplay/server/encoding"
	"kubeplay/server/fieldmanager"
)

// toStorage returns obj in r's storage encoding (see
// codec.toStorage).
func toStorage(r *catalog.Resource, obj object) object { return codecOf(r).toStorage(obj) }

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
// version (see codec.fromStorage).
func fromStorage(r *catalog.Resource, obj object) { codecOf(r).fromStorage(obj) }

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
