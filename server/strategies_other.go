package server

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"kubeplay/server/validation"
)

// otherStrategies returns the strategies of the other groups' resources that
// differ from the default, a group per paragraph.
func otherStrategies() map[schema.GroupResource]strategy {
	return map[schema.GroupResource]strategy{
		{Group: "autoscaling", Resource: "horizontalpodautoscalers"}: hpaStrategy,

		{Group: "events.k8s.io", Resource: "events"}: {
			createOnUpdate: true, updateSkipsObjectMeta: true, coreInternalType: true,
			validate: validation.Event, validateUpdate: validation.EventUpdate,
			selectableFields: withNamespace(map[string]selectableField{
				"regarding.kind": {}, "regarding.namespace": {}, "regarding.name": {}, "regarding.uid": {},
				"regarding.apiVersion": {}, "regarding.resourceVersion": {}, "regarding.fieldPath": {},
				"reason": {}, "reportingController": {}, "type": {},
			}),
		},

		{Group: "coordination.k8s.io", Resource: "leases"}: {
			createOnUpdate: true, conditionalUpdate: true, updateSkipsObjectMeta: true, genericFinalizerNames: true,
			validate: validation.Lease, validateUpdate: validation.LeaseUpdate,
		},

		{Group: "storage.k8s.io", Resource: "storageclasses"}: {
			returnsDeletedObject: true, validate: validation.StorageClass, validateUpdate: validation.StorageClassUpdate,
		},
		{Group: "storage.k8s.io", Resource: "volumeattributesclasses"}: {
			returnsDeletedObject: true, admitNew: admitVolumeAttributesClass,
			validate: validation.VolumeAttributesClass, validateUpdate: validation.VolumeAttributesClassUpdate,
		},
		{Group: "storage.k8s.io", Resource: "csinodes"}: {
			returnsDeletedObject: true, validate: validation.CSINode, validateUpdate: validation.CSINodeUpdate,
		},
		{Group: "storage.k8s.io", Resource: "csistoragecapacities"}: {
			validate: validation.CSIStorageCapacity, validateUpdate: validation.CSIStorageCapacityUpdate,
		},

		{Group: "node.k8s.io", Resource: "runtimeclasses"}: {
			createOnUpdate: true, conditionalUpdate: true, genericFinalizerNames: true,
			validate: validation.RuntimeClass, validateUpdate: validation.RuntimeClassUpdate,
		},

		{Group: "storage.k8s.io", Resource: "csidrivers"}: {
			conditionalUpdate: true, returnsDeletedObject: true, updateSkipsObjectMeta: true,
			validate: validation.CSIDriver, validateUpdate: validation.CSIDriverUpdate,
		},

		{Group: "policy", Resource: "poddisruptionbudgets"}: {
			tracksGeneration: true, conditionalUpdate: true, genericFinalizerNames: true,
			validate: validation.PodDisruptionBudget, validateUpdate: validation.PodDisruptionBudgetUpdate,
		},

		{Group: "networking.k8s.io", Resource: "ingresses"}: {tracksGeneration: true, admitNew: admitIngress},
		{Group: "networking.k8s.io", Resource: "networkpolicies"}: {
			tracksGeneration: true, validate: validation.NetworkPolicy, validateUpdate: validation.NetworkPolicyUpdate,
		},
		{Group: "networking.k8s.io", Resource: "ingressclasses"}: {
			tracksGeneration: true, validate: validation.IngressClass, validateUpdate: validation.IngressClassUpdate,
		},

		{Group: "scheduling.k8s.io", Resource: "priorityclasses"}: {
			tracksGeneration: true, updateSkipsObjectMeta: true,
			validate: validation.PriorityClass, validateUpdate: validation.PriorityClassUpdate,
		},

		// The admissionregistration group validates metadata by the generic
		// rules only.
		{Group: "admissionregistration.k8s.io", Resource: "validatingwebhookconfigurations"}: {tracksGeneration: true, genericFinalizerNames: true},
		{Group: "admissionregistration.k8s.io", Resource: "mutatingwebhookconfigurations"}:   {tracksGeneration: true, genericFinalizerNames: true},
		{Group: "admissionregistration.k8s.io", Resource: "validatingadmissionpolicies"}: {
			tracksGeneration: true, genericFinalizerNames: true, statusIgnoresMetadata: statusResetMetadata, resets: onStatus(metadataPath),
		},
		{Group: "admissionregistration.k8s.io", Resource: "validatingadmissionpolicybindings"}: {tracksGeneration: true, genericFinalizerNames: true},

		crdsGVR.GroupResource(): crdStrategy,

		{Group: "flowcontrol.apiserver.k8s.io", Resource: "flowschemas"}: {
			tracksGeneration: true, statusOnlyStatus: true, resets: onStatus(metadataPath), updateSkipsMetadataChanges: true,
			validate: validation.FlowSchema, validateUpdate: validation.FlowSchemaUpdate,
			afterWrite: (*registry).markDangling,
		},
		{Group: "flowcontrol.apiserver.k8s.io", Resource: "prioritylevelconfigurations"}: {
			tracksGeneration: true, statusOnlyStatus: true, resets: onStatus(metadataPath), updateSkipsMetadataChanges: true,
			validate: validation.PriorityLevelConfiguration, validateUpdate: validation.PriorityLevelConfigurationUpdate,
			afterWrite: (*registry).levelWritten, afterDelete: (*registry).levelsDeleted,
		},

		{Group: "discovery.k8s.io", Resource: "endpointslices"}: {
			tracksGeneration: true, updateSkipsMetadataChanges: true,
			validate: validation.EndpointSlice, validateUpdate: validation.EndpointSliceUpdate,
		},

		{Group: "resource.k8s.io", Resource: "deviceclasses"}:          {tracksGeneration: true, returnsDeletedObject: true},
		{Group: "resource.k8s.io", Resource: "resourceslices"}:         {tracksGeneration: true, returnsDeletedObject: true, updateSkipsObjectMeta: true},
		{Group: "resource.k8s.io", Resource: "resourceclaimtemplates"}: {returnsDeletedObject: true},
		{Group: "resource.k8s.io", Resource: "resourceclaims"}: {
			statusIgnoresMetadata: statusResetMetadata, resets: onStatus(metadataPath), returnsDeletedObject: true,
		},

		{Group: "networking.k8s.io", Resource: "servicecidrs"}: {
			statusIgnoresMetadata: statusResetMetadata, resets: onStatus(metadataPath), updateSkipsObjectMeta: true,
		},
		{Group: "storage.k8s.io", Resource: "volumeattachments"}: {
			statusIgnoresMetadata: statusResetMetadata, resets: onStatus(metadataPath), returnsDeletedObject: true,
			updateSkipsMetadataChanges: true,
			validate:                   validation.VolumeAttachment, validateUpdate: validation.VolumeAttachmentUpdate,
		},
		{Group: "apiregistration.k8s.io", Resource: "apiservices"}: {
			statusIgnoresMetadata: statusResetMetadata, resets: onStatus(metadataPath), genericFinalizerNames: true,
		},

		{Group: "certificates.k8s.io", Resource: "certificatesigningrequests"}: csrStrategy,
	}
}
