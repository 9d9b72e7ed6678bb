package server

import "k8s.io/apimachinery/pkg/runtime/schema"

// batchStrategies are the strategies of the batch group's resources.
var batchStrategies = map[schema.GroupResource]strategy{
	{Group: "batch", Resource: "jobs"}: {
		tracksGeneration: true, orphansByDefault: true,
		selectableFields: withNamespace(map[string]selectableField{"status.successful": {path: "status.succeeded", zero: "0"}}),
	},
	{Group: "batch", Resource: "cronjobs"}: {tracksGeneration: true},
}
