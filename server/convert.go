package server

import (
	"fmt"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"kubeplay/server/catalog"
	"kubeplay/server/defaults"
	"kubeplay/server/encoding"
	"kubeplay/server/fieldmanager"
)

// eventFieldsV1 maps the fields of a core/v1 Event to their events.k8s.io/v1
// names; events of both groups share one storage in the core/v1 encoding.
var eventFieldsV1 = map[string]string{
	"involvedObject":     "regarding",
	"message":            "note",
	"source":             "deprecatedSource",
	"firstTimestamp":     "deprecatedFirstTimestamp",
	"lastTimestamp":      "deprecatedLastTimestamp",
	"count":              "deprecatedCount",
	"reportingComponent": "reportingController",
}

func isEventsV1(r *catalog.Resource) bool {
	return r.Group == "events.k8s.io" && r.Resource == "events"
}

// toStorage returns obj in r's storage encoding. It never modifies obj: the
// result is a copy at the top level and in metadata.
func toStorage(r *catalog.Resource, obj object) object {
	out := maps.Clone(obj)
	out["metadata"] = maps.Clone(metadata(obj))
	st := catalog.StorageOf(r)
	if isAutoscalingV1(r) || isAutoscalingV2beta1(r) {
		out = deepCopyObject(out)
		if isAutoscalingV1(r) {
			hpaFromV1(out)
		} else {
			hpaFromV2beta1(out)
		}
		// kube-apiserver sets v2's defaults as it reads the stored object
		// (a v1 object's behavior annotation may name one direction only).
		defaults.Apply(schema.GroupVersionKind{Group: st.Group, Version: st.Version, Kind: st.Kind}, out)
	}
	if isEventsV1(r) {
		for core, v1 := range eventFieldsV1 {
			renameField(out, v1, core)
		}
	}
	if isIngressV1beta1(r) {
		out = deepCopyObject(out)
		ingressToV1(out)
	}
	if isEndpointSliceV1beta1(r) {
		out = deepCopyObject(out)
		endpointSliceToV1(out)
	}
	if isPriorityLevelBeforeV1beta3(r) {
		out = deepCopyObject(out)
		renameConcurrencyShares(out, "assuredConcurrencyShares", "nominalConcurrencyShares")
	}
	if isCRDV1beta1(r) {
		// With v1beta1's defaults, a part of a CRD (the field manager
		// converts those) keeps its top-level schema in the version
		// spec.version names.
		out = deepCopyObject(out)
		defaults.Apply(r.GroupVersionKind(), out)
		crdToV1(out)
	}
	out["apiVersion"] = schemaAPIVersion(st.Group, st.Version)
	out["kind"] = st.Kind
	return out
}

// readConversion changes, in place, a decoded stored object of the
// resources it applies to.
type readConversion struct {
	applies func(*catalog.Resource) bool
	convert func(*catalog.Resource, object)
}

// readConversions are what fromStorage does to a stored object of the
// resources each applies to, beyond setting its kind and apiVersion, in
// order. convertsOnRead reads the same list, so an object is never sent as
// stored when a conversion applies to it.
var readConversions = []readConversion{
	// As kube-apiserver, a custom object is read through its version's
	// schema as it is now: what it does not know is dropped, its defaults
	// are set.
	{func(r *catalog.Resource) bool { return r.Custom != nil }, func(r *catalog.Resource, obj object) {
		r.Custom.Schema.Prune(obj)
		r.Custom.Schema.ApplyDefaults(obj)
	}},
	{isEventsV1, func(_ *catalog.Resource, obj object) {
		for core, v1 := range eventFieldsV1 {
			renameField(obj, core, v1)
		}
		// core/v1 always serializes these; events.k8s.io/v1 omits them empty.
		for _, k := range []string{"reportingController", "reportingInstance"} {
			if obj[k] == "" {
				delete(obj, k)
			}
		}
	}},
	{isAutoscalingV1, func(_ *catalog.Resource, obj object) { hpaToV1(obj) }},
	{isAutoscalingV2beta1, func(_ *catalog.Resource, obj object) { hpaToV2beta1(obj) }},
	{isIngressV1beta1, func(_ *catalog.Resource, obj object) { ingressFromV1(obj) }},
	{isEndpointSliceV1beta1, func(_ *catalog.Resource, obj object) { endpointSliceFromV1(obj) }},
	{isPriorityLevelBeforeV1beta3, func(_ *catalog.Resource, obj object) {
		renameConcurrencyShares(obj, "nominalConcurrencyShares", "assuredConcurrencyShares")
	}},
	{isCRDV1beta1, func(_ *catalog.Resource, obj object) { crdFromV1(obj) }},
}

// convertsOnRead reports whether fromStorage changes more of r's objects
// than their kind and apiVersion.
func convertsOnRead(r *catalog.Resource) bool {
	return slices.ContainsFunc(readConversions, func(c readConversion) bool { return c.applies(r) })
}

// fromStorage converts a freshly decoded stored object, in place, to r's
// version.
func fromStorage(r *catalog.Resource, obj object) {
	for _, c := range readConversions {
		if c.applies(r) {
			c.convert(r, obj)
		}
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

func renameField(obj object, from, to string) {
	if v, ok := obj[from]; ok {
		obj[to] = v
		delete(obj, from)
	}
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
