package server

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// appsStrategies are the strategies of the apps group's resources. Their
// update validation checks what changed only (updateSkipsObjectMeta).
var appsStrategies = map[schema.GroupResource]strategy{
	// kube-controller-manager writes a Deployment's revision annotation
	// through /status, which leaves its labels as they are.
	{Group: "apps", Resource: "deployments"}:  {tracksGeneration: true, updateSkipsObjectMeta: true, statusIgnoresMetadata: []string{"labels"}, resets: onStatus(fieldpath.MakePathOrDie("metadata", "labels"))},
	{Group: "apps", Resource: "replicasets"}:  {tracksGeneration: true, updateSkipsObjectMeta: true},
	{Group: "apps", Resource: "statefulsets"}: {tracksGeneration: true, updateSkipsObjectMeta: true},
	{Group: "apps", Resource: "daemonsets"}:   {tracksGeneration: true, updateSkipsObjectMeta: true},
}
