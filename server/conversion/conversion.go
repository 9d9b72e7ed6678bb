// Package conversion converts built-in objects between a served version of
// their resource and the version it is stored in, as kube-apiserver's
// conversion functions do: each conversion is registered by the group,
// version and resource it serves.
package conversion

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"kubeplay/server/defaults"
	"kubeplay/server/structural"
)

// Object is a decoded object.
type Object = map[string]any

// A Conversion converts objects of one served version, in place.
type Conversion struct {
	// ToStorage converts an object of the served version to the storage
	// version; FromStorage does the reverse. Both may change the object at
	// any depth, so its caller passes one it owns.
	ToStorage, FromStorage func(obj Object)
	// DecodesThroughStorage: kube-apiserver decodes a request of this
	// version into its internal type, so the object written holds the
	// storage version's defaults and what the conversion carries.
	DecodesThroughStorage bool
}

// For returns the conversion of the served version gvr, nil when its
// objects are stored as they are served (but for kind and apiVersion).
func For(gvr schema.GroupVersionResource) *Conversion { return registry[gvr] }

var (
	hpaV2      = schema.GroupVersionKind{Group: "autoscaling", Version: "v2", Kind: "HorizontalPodAutoscaler"}
	crdV1beta1 = schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1beta1", Kind: "CustomResourceDefinition"}
)

var registry = map[schema.GroupVersionResource]*Conversion{
	// kube-apiserver sets v2's defaults as it reads the stored object (a
	// v1 object's behavior annotation may name one direction only).
	{Group: "autoscaling", Version: "v1", Resource: "horizontalpodautoscalers"}: {
		ToStorage:             func(obj Object) { hpaFromV1(obj); defaults.Apply(hpaV2, obj) },
		FromStorage:           hpaToV1,
		DecodesThroughStorage: true,
	},
	{Group: "autoscaling", Version: "v2beta1", Resource: "horizontalpodautoscalers"}: {
		ToStorage:             func(obj Object) { hpaFromV2beta1(obj); defaults.Apply(hpaV2, obj) },
		FromStorage:           hpaToV2beta1,
		DecodesThroughStorage: true,
	},
	{Group: "events.k8s.io", Version: "v1", Resource: "events"}:             eventsConversion,
	{Group: "events.k8s.io", Version: "v1beta1", Resource: "events"}:        eventsConversion,
	{Group: "extensions", Version: "v1beta1", Resource: "ingresses"}:        ingressV1beta1,
	{Group: "networking.k8s.io", Version: "v1beta1", Resource: "ingresses"}: ingressV1beta1,
	{Group: "discovery.k8s.io", Version: "v1beta1", Resource: "endpointslices"}: {
		ToStorage: endpointSliceToV1, FromStorage: endpointSliceFromV1, DecodesThroughStorage: true,
	},
	{Group: "flowcontrol.apiserver.k8s.io", Version: "v1beta1", Resource: "prioritylevelconfigurations"}: priorityLevelBeforeV1beta3,
	{Group: "flowcontrol.apiserver.k8s.io", Version: "v1beta2", Resource: "prioritylevelconfigurations"}: priorityLevelBeforeV1beta3,
	// With v1beta1's defaults, a part of a CRD (the field manager converts
	// those) keeps its top-level schema in the version spec.version names.
	{Group: "apiextensions.k8s.io", Version: "v1beta1", Resource: "customresourcedefinitions"}: {
		ToStorage:   func(obj Object) { defaults.Apply(crdV1beta1, obj); crdToV1(obj) },
		FromStorage: crdFromV1,
	},
}

var ingressV1beta1 = &Conversion{ToStorage: ingressToV1, FromStorage: ingressFromV1, DecodesThroughStorage: true}

var priorityLevelBeforeV1beta3 = &Conversion{
	ToStorage: func(obj Object) {
		renameConcurrencyShares(obj, "assuredConcurrencyShares", "nominalConcurrencyShares")
	},
	FromStorage: func(obj Object) {
		renameConcurrencyShares(obj, "nominalConcurrencyShares", "assuredConcurrencyShares")
	},
	DecodesThroughStorage: true,
}

// eventFieldsV1 maps the fields of a core/v1 Event to their events.k8s.io
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

var eventsConversion = &Conversion{
	ToStorage: func(obj Object) {
		for core, v1 := range eventFieldsV1 {
			renameField(obj, v1, core)
		}
	},
	FromStorage: func(obj Object) {
		for core, v1 := range eventFieldsV1 {
			renameField(obj, core, v1)
		}
		// core/v1 always serializes these; events.k8s.io omits them empty.
		for _, k := range []string{"reportingController", "reportingInstance"} {
			if obj[k] == "" {
				delete(obj, k)
			}
		}
	},
}

func renameField(obj Object, from, to string) {
	if v, ok := obj[from]; ok {
		obj[to] = v
		delete(obj, from)
	}
}

func deepCopyObject(obj Object) Object { return structural.DeepCopy(obj).(map[string]any) }
