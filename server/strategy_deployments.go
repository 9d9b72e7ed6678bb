package server

import (
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"kubeplay/server/validation"
)

// deploymentStrategy is the Deployment's: its annotations count as desired
// state (they once carried rollback requests), and they and its finalizers
// change through /status too, but not its labels: kube-controller-manager
// writes the revision annotation this way.
var deploymentStrategy = strategy{
	tracksGeneration: true, updateSkipsObjectMeta: true, annotationsAreDesiredState: true,
	statusIgnoresMetadata: []string{"labels"},
	resets:                onStatus(fieldpath.MakePathOrDie("metadata", "labels")),
	validate:              validation.Deployment, validateUpdate: validation.DeploymentUpdate,
	podSecurity: podSecurityTemplate("spec", "template"),
}
