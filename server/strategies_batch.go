package server

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"kubeplay/server/defaults"
	"kubeplay/server/validation"
)

// batchStrategies returns the strategies of the batch group's resources.
func batchStrategies() map[schema.GroupResource]strategy {
	return map[schema.GroupResource]strategy{
		{Group: "batch", Resource: "jobs"}: {
			tracksGeneration: true, orphansByDefault: true,
			validate: validation.Job, validateUpdate: validation.JobUpdate, readBack: defaults.JobLabels,
			podSecurity:      podSecurityTemplate("spec", "template"),
			selectableFields: withNamespace(map[string]selectableField{"status.successful": {path: "status.succeeded", zero: "0"}}),
		},
		{Group: "batch", Resource: "cronjobs"}: {
			tracksGeneration: true, updateSkipsObjectMeta: true,
			validate: validation.CronJob, validateUpdate: validation.CronJobUpdate,
			podSecurity: podSecurityTemplate("spec", "jobTemplate", "spec", "template"),
		},
	}
}
