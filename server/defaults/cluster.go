package defaults

import (
	"strings"

	"kubeplay/internal/jsonmap"
)

// webhook defaults an admission webhook of a Validating- or
// MutatingWebhookConfiguration (mutating says which).
func webhook(w Object, mutating bool) {
	set(w, "failurePolicy", "Fail")
	set(w, "timeoutSeconds", num(10))
	matchResources(w)
	if svc := jsonmap.Child(jsonmap.Child(w, "clientConfig"), "service"); svc != nil {
		set(svc, "port", num(443))
	}
	if mutating {
		set(w, "reinvocationPolicy", "Never")
	}
}

// webhookV1beta1 sets the defaults admissionregistration.k8s.io/v1beta1
// had where v1 has others, or none (v1 requires sideEffects and
// admissionReviewVersions).
func webhookV1beta1(w Object) {
	set(w, "failurePolicy", "Ignore")
	set(w, "matchPolicy", "Exact")
	set(w, "timeoutSeconds", num(30))
	set(w, "sideEffects", "Unknown")
	set(w, "admissionReviewVersions", []any{"v1beta1"})
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
		for _, r := range jsonmap.Items(m[list]) {
			set(r, "scope", "*")
		}
	}
}

func csiDriver(spec Object) {
	set(spec, "attachRequired", true)
	setPointer(spec, "fsGroupPolicy", "ReadWriteOnceWithFSType")
	set(spec, "podInfoOnMount", false)
	set(spec, "requiresRepublish", false)
	set(spec, "seLinuxMount", false)
	set(spec, "storageCapacity", false)
	if modes, _ := spec["volumeLifecycleModes"].([]any); len(modes) == 0 && spec != nil {
		spec["volumeLifecycleModes"] = []any{"Persistent"} // an empty list too
	}
}

// crdV1beta1 sets the defaults of an apiextensions.k8s.io/v1beta1 CRD's
// spec, which v1 requires instead: the scope, the one version spec.version
// names (or spec.version from the first of spec.versions), unknown fields
// kept, no conversion webhook.
func crdV1beta1(spec Object) {
	if spec == nil {
		return
	}
	set(spec, "scope", "Namespaced")
	versions := jsonmap.Items(spec["versions"])
	if v, _ := spec["version"].(string); v != "" && len(versions) == 0 {
		spec["versions"] = []any{map[string]any{"name": v, "served": true, "storage": true}}
	} else if len(versions) > 0 {
		set(spec, "version", versions[0]["name"])
	}
	set(spec, "preserveUnknownFields", true)
	if unset(spec, "conversion") {
		spec["conversion"] = map[string]any{"strategy": "None"}
	}
	conv := jsonmap.Child(spec, "conversion")
	if conv["strategy"] == "Webhook" {
		set(conv, "conversionReviewVersions", []any{"v1beta1"})
	}
	if svc := jsonmap.Child(jsonmap.Child(conv, "webhookClientConfig"), "service"); svc != nil {
		set(svc, "port", num(443))
	}
	if names := jsonmap.Child(spec, "names"); names != nil {
		if kind, _ := names["kind"].(string); kind != "" {
			set(names, "listKind", kind+"List")
			set(names, "singular", strings.ToLower(kind))
		}
	}
}
