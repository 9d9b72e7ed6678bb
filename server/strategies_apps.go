package server

import "k8s.io/apimachinery/pkg/runtime/schema"

// appsStrategies are the strategies of the apps group's resources. Their
// update validation checks what changed only (updateSkipsObjectMeta).
var appsStrategies = map[schema.GroupResource]strategy{
	{Group: "apps", Resource: "deployments"}:  deploymentStrategy,
	{Group: "apps", Resource: "replicasets"}:  {tracksGeneration: true, updateSkipsObjectMeta: true},
	{Group: "apps", Resource: "statefulsets"}: {tracksGeneration: true, updateSkipsObjectMeta: true},
	{Group: "apps", Resource: "daemonsets"}:   {tracksGeneration: true, updateSkipsObjectMeta: true},
}
