package server

import (
	"kubeplay/server/catalog"
	"kubeplay/server/validation"
)

// deploymentStrategy is the Deployment's: its annotations count as desired
// state (they once carried rollback requests), and they and its finalizers
// change through /status too, but not its labels: kube-controller-manager
// writes the revision annotation this way.
var deploymentStrategy = strategy{
	tracksGeneration: true, updateSkipsObjectMeta: true, annotationsAreDesiredState: true,
	validate: validation.Deployment, validateUpdate: validation.DeploymentUpdate,
	statusOnly: func(res *catalog.Resource, obj, old object) object {
		out, was := deepCopyObject(obj), deepCopyObject(old)
		out["spec"] = was["spec"]
		if labels, ok := metadata(was)["labels"]; ok {
			metadata(out)["labels"] = labels
		} else {
			delete(metadata(out), "labels")
		}
		prepareForUpdate(res, "status", out, old)
		return out
	},
}
