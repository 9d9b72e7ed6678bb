package server

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"kubeplay/server/validation"
)

// appsStrategies returns the strategies of the apps group's resources. Their
// update validation checks what changed only (updateSkipsObjectMeta).
func appsStrategies() map[schema.GroupResource]strategy {
	return map[schema.GroupResource]strategy{
		{Group: "apps", Resource: "deployments"}: deploymentStrategy,
		{Group: "apps", Resource: "replicasets"}: {
			tracksGeneration: true, updateSkipsObjectMeta: true,
			validate: validation.ReplicaSet, validateUpdate: validation.ReplicaSetUpdate,
			podSecurity: podSecurityTemplate("spec", "template"),
		},
		{Group: "apps", Resource: "statefulsets"}: {
			tracksGeneration: true, updateSkipsObjectMeta: true,
			validate: validation.StatefulSet, validateUpdate: validation.StatefulSetUpdate,
			podSecurity: podSecurityTemplate("spec", "template"),
		},
		{Group: "apps", Resource: "controllerrevisions"}: {
			validate: validation.ControllerRevision, validateUpdate: validation.ControllerRevisionUpdate,
		},
		{Group: "apps", Resource: "daemonsets"}: {
			tracksGeneration: true, updateSkipsObjectMeta: true,
			validate: validation.DaemonSet, validateUpdate: validation.DaemonSetUpdate,
			podSecurity: podSecurityTemplate("spec", "template"),
		},
	}
}
