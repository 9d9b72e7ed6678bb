package defaults

import "kubeplay/server/decoded"

// webhook defaults an admission webhook of a Validating- or
// MutatingWebhookConfiguration (mutating says which).
func webhook(w Object, mutating bool) {
	set(w, "failurePolicy", "Fail")
	set(w, "timeoutSeconds", num(10))
	matchResources(w)
	if svc := decoded.Child(decoded.Child(w, "clientConfig"), "service"); svc != nil {
		set(svc, "port", num(443))
	}
	if mutating {
		set(w, "reinvocationPolicy", "Never")
	}
}

// matchResources defaults what selects the requests a webhook or policy
// sees: equivalent requests too, in every namespace, of every object, at
// every scope.
func matchResources(m Object) {
	if m == nil {
		return
	}
	set(m, "matchPolicy", "Equivalent")
	setObject(m, "namespaceSelector")
	setObject(m, "objectSelector")
	for _, list := range []string{"rules", "resourceRules", "excludeResourceRules"} {
		for _, r := range decoded.Items(m[list]) {
			set(r, "scope", "*")
		}
	}
}

func csiDriver(spec Object) {
	set(spec, "attachRequired", true)
	set(spec, "fsGroupPolicy", "ReadWriteOnceWithFSType")
	set(spec, "podInfoOnMount", false)
	set(spec, "requiresRepublish", false)
	set(spec, "seLinuxMount", false)
	set(spec, "storageCapacity", false)
	set(spec, "volumeLifecycleModes", []any{"Persistent"})
}
