package server

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"kubeplay/server/validation"
)

// coreStrategies returns the strategies of the core ("") group's resources.
func coreStrategies() map[schema.GroupResource]strategy {
	return map[schema.GroupResource]strategy{
		{Resource: "pods"}: podStrategy,
		{Resource: "podtemplates"}: {
			tracksGeneration: true, updateSkipsObjectMeta: true,
			validate: validation.PodTemplate, validateUpdate: validation.PodTemplateUpdate,
			podSecurity: podSecurityTemplate("template"),
		},
		{Resource: "replicationcontrollers"}: {
			tracksGeneration: true, orphansByDefault: true, updateSkipsObjectMeta: true, mapSelector: true,
			validate: validation.ReplicationController, validateUpdate: validation.ReplicationControllerUpdate,
			podSecurity:      podSecurityTemplate("spec", "template"),
			selectableFields: withNamespace(map[string]selectableField{"status.replicas": {zero: "0"}}),
		},
		{Resource: "services"}:        serviceStrategy,
		{Resource: "serviceaccounts"}: {returnsDeletedObject: true},
		{Resource: "namespaces"}:      namespaceStrategy,
		{Resource: "nodes"}: {
			// A kubelet registers its node with its capacity, conditions and
			// addresses in one create.
			keepsStatusOnCreate: true,
			selectableFields:    map[string]selectableField{"spec.unschedulable": {zero: "false"}},
			normalize:           normalizeNode,
			admitNew:            admitNode,
			validate:            validation.Node, validateUpdate: validation.NodeUpdate,
		},
		{Resource: "secrets"}: {
			selectableFields: withNamespace(map[string]selectableField{"type": {}}),
			normalize:        normalizeSecret,
			validate:         validation.Secret, validateUpdate: validation.SecretUpdate,
		},
		{Resource: "configmaps"}: {validate: validation.ConfigMap, validateUpdate: validation.ConfigMapUpdate},
		{Resource: "persistentvolumeclaims"}: {
			returnsDeletedObject: true, admitNew: (*admission).admitClaim, admitChange: admitClaimChange,
			validate: validation.PersistentVolumeClaim, validateUpdate: validation.PersistentVolumeClaimUpdate,
		},
		{Resource: "events"}: {
			// The legacy Event API checks no metadata of its own.
			createOnUpdate: true, genericFinalizerNames: true, updateSkipsObjectMeta: true, updateSkipsMetadataChanges: true,
			validate: validation.CoreEvent, validateUpdate: validation.CoreEventUpdate,
			selectableFields: withNamespace(map[string]selectableField{
				"involvedObject.kind": {}, "involvedObject.namespace": {}, "involvedObject.name": {}, "involvedObject.uid": {},
				"involvedObject.apiVersion": {}, "involvedObject.resourceVersion": {}, "involvedObject.fieldPath": {},
				"reason": {}, "reportingComponent": {}, "source": {path: "source.component", or: "reportingComponent"}, "type": {},
			}),
		},
		{Resource: "endpoints"}: {createOnUpdate: true, validate: validation.Endpoints, validateUpdate: validation.EndpointsUpdate},
		{Resource: "persistentvolumes"}: {
			returnsDeletedObject: true, admitNew: admitVolume,
			validate: validation.PersistentVolume, validateUpdate: validation.PersistentVolumeUpdate,
		},
		{Resource: "resourcequotas"}: {
			updateSkipsObjectMeta: true, validate: validation.ResourceQuota, validateUpdate: validation.ResourceQuotaUpdate,
		},
		{Resource: "limitranges"}: {
			createOnUpdate: true, updateSkipsMetadataChanges: true,
			validate: validation.LimitRange, validateUpdate: validation.LimitRangeUpdate,
		},
	}
}

// normalizeNode makes a Node's podCIDR and podCIDRs agree, as converting it
// to the internal type and back does: podCIDR, when set, is the first.
func normalizeNode(obj object) {
	spec, _ := obj["spec"].(map[string]any)
	if spec == nil {
		return
	}
	cidrs, _ := spec["podCIDRs"].([]any)
	if first, _ := spec["podCIDR"].(string); first != "" && (len(cidrs) == 0 || cidrs[0] != first) {
		cidrs = []any{first}
		spec["podCIDRs"] = cidrs
	}
	if len(cidrs) > 0 {
		spec["podCIDR"] = cidrs[0]
	}
}
