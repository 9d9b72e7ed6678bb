package conversion

import (
	"kubeplay/internal/jsonmap"
)

// PriorityLevelConfigurations of flowcontrol.apiserver.k8s.io/v1beta1 and
// v1beta2 (served until v1.25 and v1.28) are stored as v1, where their
// limited.assuredConcurrencyShares is nominalConcurrencyShares.

// renameConcurrencyShares renames the field of a PriorityLevelConfiguration's
// spec.limited.
func renameConcurrencyShares(obj Object, from, to string) {
	if limited := jsonmap.Child(jsonmap.Child(obj, "spec"), "limited"); limited != nil {
		renameField(limited, from, to)
	}
}
