package server

import "k8s.io/apimachinery/pkg/runtime/schema"

// otherStrategies are the strategies of the other groups' resources that
// differ from the default, a group per paragraph.
var otherStrategies = map[schema.GroupResource]strategy{
	{Group: "autoscaling", Resource: "horizontalpodautoscalers"}: hpaStrategy,

	{Group: "events.k8s.io", Resource: "events"}: {
		createOnUpdate: true,
		selectableFields: withNamespace(map[string]selectableField{
			"regarding.kind": {}, "regarding.namespace": {}, "regarding.name": {}, "regarding.uid": {},
			"regarding.apiVersion": {}, "regarding.resourceVersion": {}, "regarding.fieldPath": {},
			"reason": {}, "reportingController": {}, "type": {},
		}),
	},

	{Group: "coordination.k8s.io", Resource: "leases"}: {
		createOnUpdate: true, conditionalUpdate: true, updateSkipsObjectMeta: true, genericFinalizerNames: true,
	},

	{Group: "node.k8s.io", Resource: "runtimeclasses"}: {createOnUpdate: true, conditionalUpdate: true},

	{Group: "storage.k8s.io", Resource: "csidrivers"}: {conditionalUpdate: true},

	{Group: "policy", Resource: "poddisruptionbudgets"}: {tracksGeneration: true, conditionalUpdate: true},

	{Group: "networking.k8s.io", Resource: "ingresses"}:       {tracksGeneration: true},
	{Group: "networking.k8s.io", Resource: "networkpolicies"}: {tracksGeneration: true},
	{Group: "networking.k8s.io", Resource: "ingressclasses"}:  {tracksGeneration: true},

	{Group: "scheduling.k8s.io", Resource: "priorityclasses"}: {tracksGeneration: true},

	{Group: "admissionregistration.k8s.io", Resource: "validatingwebhookconfigurations"}:   {tracksGeneration: true},
	{Group: "admissionregistration.k8s.io", Resource: "mutatingwebhookconfigurations"}:     {tracksGeneration: true},
	{Group: "admissionregistration.k8s.io", Resource: "validatingadmissionpolicies"}:       {tracksGeneration: true, statusIgnoresMetadata: statusResetMetadata, resets: onStatus(metadataPath)},
	{Group: "admissionregistration.k8s.io", Resource: "validatingadmissionpolicybindings"}: {tracksGeneration: true},

	crdsGVR.GroupResource(): crdStrategy,

	{Group: "flowcontrol.apiserver.k8s.io", Resource: "flowschemas"}:                 {tracksGeneration: true, statusOnlyStatus: true, resets: onStatus(metadataPath)},
	{Group: "flowcontrol.apiserver.k8s.io", Resource: "prioritylevelconfigurations"}: {tracksGeneration: true, statusOnlyStatus: true, resets: onStatus(metadataPath)},

	{Group: "discovery.k8s.io", Resource: "endpointslices"}: {tracksGeneration: true},

	{Group: "resource.k8s.io", Resource: "deviceclasses"}:  {tracksGeneration: true},
	{Group: "resource.k8s.io", Resource: "resourceslices"}: {tracksGeneration: true},
	{Group: "resource.k8s.io", Resource: "resourceclaims"}: {statusIgnoresMetadata: statusResetMetadata, resets: onStatus(metadataPath)},

	{Group: "networking.k8s.io", Resource: "servicecidrs"}:     {statusIgnoresMetadata: statusResetMetadata, resets: onStatus(metadataPath)},
	{Group: "storage.k8s.io", Resource: "volumeattachments"}:   {statusIgnoresMetadata: statusResetMetadata, resets: onStatus(metadataPath)},
	{Group: "apiregistration.k8s.io", Resource: "apiservices"}: {statusIgnoresMetadata: statusResetMetadata, resets: onStatus(metadataPath)},

	{Group: "certificates.k8s.io", Resource: "certificatesigningrequests"}: csrStrategy,
}
