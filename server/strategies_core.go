package server

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/server/validation"
)

// coreStrategies are the strategies of the core ("") group's resources.
var coreStrategies = map[schema.GroupResource]strategy{
	{Resource: "pods"}: {
		tracksGeneration: true, returnsDeletedObject: true,
		validateUpdate: validation.PodUpdate,
		selectableFields: withNamespace(map[string]selectableField{
			"spec.nodeName": {}, "spec.restartPolicy": {zero: "Always"}, "spec.schedulerName": {zero: "default-scheduler"},
			"spec.serviceAccountName": {zero: "default"}, "spec.hostNetwork": {zero: "false"}, "status.phase": {zero: "Pending"},
			"status.podIP": {}, "status.nominatedNodeName": {}, "status.podIPs": {none: true},
		}),
	},
	{Resource: "podtemplates"}: {
		tracksGeneration: true, updateSkipsObjectMeta: true,
		validate: validation.PodTemplate, validateUpdate: validation.PodTemplateUpdate,
	},
	{Resource: "replicationcontrollers"}: {
		tracksGeneration: true, orphansByDefault: true, updateSkipsObjectMeta: true,
		validate: validation.ReplicationController, validateUpdate: validation.ReplicationControllerUpdate,
		selectableFields: withNamespace(map[string]selectableField{"status.replicas": {zero: "0"}}),
	},
	{Resource: "services"}: {
		createOnUpdate: true, returnsDeletedObject: true, updateSkipsObjectMeta: true,
		validate: validation.Service, validateUpdate: validation.ServiceUpdate,
		selectableFields: withNamespace(map[string]selectableField{"spec.clusterIP": {}, "spec.type": {}}),
	},
	{Resource: "serviceaccounts"}: {returnsDeletedObject: true},
	{Resource: "namespaces"}: {
		returnsDeletedObject: true,
		selectableFields:     map[string]selectableField{"status.phase": {}},
		validate:             validation.Namespace,
		validateSubresource: map[string]func(obj, old validation.Object) field.ErrorList{
			"status": validation.NamespaceStatus, "finalize": validation.NamespaceFinalize,
		},
	},
	{Resource: "nodes"}: {selectableFields: map[string]selectableField{"spec.unschedulable": {zero: "false"}}},
	{Resource: "secrets"}: {
		selectableFields: withNamespace(map[string]selectableField{"type": {}}),
		validate:         validation.Secret, validateUpdate: validation.SecretUpdate,
	},
	{Resource: "configmaps"}: {validate: validation.ConfigMap, validateUpdate: validation.ConfigMapUpdate},
	{Resource: "events"}: {
		createOnUpdate: true,
		selectableFields: withNamespace(map[string]selectableField{
			"involvedObject.kind": {}, "involvedObject.namespace": {}, "involvedObject.name": {}, "involvedObject.uid": {},
			"involvedObject.apiVersion": {}, "involvedObject.resourceVersion": {}, "involvedObject.fieldPath": {},
			"reason": {}, "reportingComponent": {}, "source": {path: "source.component"}, "type": {},
		}),
	},
	{Resource: "persistentvolumeclaims"}: {validate: validation.PersistentVolumeClaim, validateUpdate: validation.PersistentVolumeClaimUpdate},
	{Resource: "persistentvolumes"}:      {validate: validation.PersistentVolume, validateUpdate: validation.PersistentVolumeUpdate},
	{Resource: "resourcequotas"}:         {validate: validation.ResourceQuota, validateUpdate: validation.ResourceQuotaUpdate},
	{Resource: "endpoints"}:              {createOnUpdate: true, validate: validation.Endpoints, validateUpdate: validation.EndpointsUpdate},
	{Resource: "limitranges"}:            {createOnUpdate: true},
}
