package defaults

import (
	"encoding/json"
	"strconv"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"kubeplay/internal/jsonmap"
)

// Object is a decoded Kubernetes object.
type Object = map[string]any

// Apply fills in the defaults of kind gvk on obj, in place.
func Apply(gvk schema.GroupVersionKind, obj Object) {
	spec := jsonmap.Child(obj, "spec")
	switch gvk.GroupKind() {
	case schema.GroupKind{Kind: "Pod"}:
		pod(spec)
	case schema.GroupKind{Kind: "PodTemplate"}:
		podTemplate(jsonmap.Child(obj, "template"))
	case schema.GroupKind{Kind: "ReplicationController"}:
		replicationController(obj, spec)
	case schema.GroupKind{Kind: "Service"}:
		service(spec)
	case schema.GroupKind{Kind: "Endpoints"}:
		for _, s := range jsonmap.Items(obj["subsets"]) {
			for _, p := range jsonmap.Items(s["ports"]) {
				set(p, "protocol", "TCP")
			}
		}
	case schema.GroupKind{Kind: "PersistentVolumeClaim"}:
		set(spec, "volumeMode", "Filesystem")
	case schema.GroupKind{Kind: "PersistentVolume"}:
		persistentVolume(spec)
	case schema.GroupKind{Kind: "LimitRange"}:
		limitRange(spec)
	case schema.GroupKind{Group: "apps", Kind: "Deployment"}:
		deployment(spec)
	case schema.GroupKind{Group: "apps", Kind: "ReplicaSet"}:
		set(spec, "replicas", num(1))
		podTemplate(jsonmap.Child(spec, "template"))
	case schema.GroupKind{Group: "apps", Kind: "StatefulSet"}:
		statefulSet(spec)
	case schema.GroupKind{Group: "apps", Kind: "DaemonSet"}:
		daemonSet(jsonmap.Child(obj, "metadata"), spec)
	case schema.GroupKind{Group: "batch", Kind: "Job"}:
		job(obj, spec)
	case schema.GroupKind{Group: "batch", Kind: "CronJob"}:
		cronJob(spec)
	case schema.GroupKind{Group: "networking.k8s.io", Kind: "NetworkPolicy"}:
		networkPolicy(spec)
	case schema.GroupKind{Group: "autoscaling", Kind: "HorizontalPodAutoscaler"}:
		horizontalPodAutoscaler(gvk.Version, spec)
	case schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "RoleBinding"},
		schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}:
		set(jsonmap.Child(obj, "roleRef"), "apiGroup", "rbac.authorization.k8s.io")
		for _, s := range jsonmap.Items(obj["subjects"]) {
			if k := s["kind"]; k == "User" || k == "Group" {
				set(s, "apiGroup", "rbac.authorization.k8s.io")
			}
		}
	case schema.GroupKind{Group: "admissionregistration.k8s.io", Kind: "ValidatingWebhookConfiguration"},
		schema.GroupKind{Group: "admissionregistration.k8s.io", Kind: "MutatingWebhookConfiguration"}:
		for _, w := range jsonmap.Items(obj["webhooks"]) {
			if gvk.Version == "v1beta1" {
				webhookV1beta1(w)
			}
			webhook(w, gvk.Kind == "MutatingWebhookConfiguration")
		}
	case schema.GroupKind{Group: "certificates.k8s.io", Kind: "CertificateSigningRequest"}:
		if gvk.Version == "v1beta1" {
			// v1 requires both.
			set(spec, "signerName", "kubernetes.io/legacy-unknown")
			set(spec, "usages", []any{"digital signature", "key encipherment"})
		}
	case schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}:
		if gvk.Version == "v1beta1" {
			crdV1beta1(spec)
		}
	case schema.GroupKind{Group: "admissionregistration.k8s.io", Kind: "ValidatingAdmissionPolicy"}:
		set(spec, "failurePolicy", "Fail")
		matchResources(jsonmap.Child(spec, "matchConstraints"))
	case schema.GroupKind{Group: "admissionregistration.k8s.io", Kind: "ValidatingAdmissionPolicyBinding"}:
		matchResources(jsonmap.Child(spec, "matchResources"))
	case schema.GroupKind{Group: "flowcontrol.apiserver.k8s.io", Kind: "FlowSchema"}:
		if n, ok := jsonmap.IntOf(spec["matchingPrecedence"]); spec != nil && (!ok || n == 0) {
			spec["matchingPrecedence"] = num(1000)
		}
	case schema.GroupKind{Group: "flowcontrol.apiserver.k8s.io", Kind: "PriorityLevelConfiguration"}:
		limited := jsonmap.Child(spec, "limited")
		set(limited, "nominalConcurrencyShares", num(30))
		set(limited, "lendablePercent", num(0))
		exempt := jsonmap.Child(spec, "exempt")
		set(exempt, "nominalConcurrencyShares", num(0))
		set(exempt, "lendablePercent", num(0))
		// Queuing's numbers are plain int32s: zero is unset.
		queuing := jsonmap.Child(jsonmap.Child(limited, "limitResponse"), "queuing")
		for k, v := range map[string]int{"handSize": 8, "queues": 64, "queueLengthLimit": 50} {
			if n, _ := jsonmap.IntOf(queuing[k]); queuing != nil && n == 0 {
				queuing[k] = num(v)
			}
		}
	case schema.GroupKind{Group: "resource.k8s.io", Kind: "ResourceClaim"}:
		deviceRequests(spec)
	case schema.GroupKind{Group: "resource.k8s.io", Kind: "ResourceClaimTemplate"}:
		deviceRequests(jsonmap.Child(spec, "spec"))
	case schema.GroupKind{Group: "scheduling.k8s.io", Kind: "PriorityClass"}:
		set(obj, "preemptionPolicy", "PreemptLowerPriority")
	case schema.GroupKind{Group: "storage.k8s.io", Kind: "CSIDriver"}:
		csiDriver(spec)
	case schema.GroupKind{Group: "discovery.k8s.io", Kind: "EndpointSlice"}:
		for _, p := range jsonmap.Items(obj["ports"]) {
			set(p, "protocol", "TCP")
			if p != nil {
				if _, ok := p["name"]; !ok {
					p["name"] = ""
				}
			}
		}
	case schema.GroupKind{Group: "storage.k8s.io", Kind: "StorageClass"}:
		set(obj, "reclaimPolicy", "Delete")
		set(obj, "volumeBindingMode", "Immediate")
	}
}

// unset reports whether obj's field k holds Go's zero value of a pointer,
// slice, map or string.
func unset(obj Object, k string) bool {
	v, ok := obj[k]
	return !ok || v == nil || v == ""
}

// set sets obj's field k to v when it is unset.
func set(obj Object, k string, v any) {
	if obj != nil && unset(obj, k) {
		obj[k] = v
	}
}

// setPointer sets obj's field k to v when it is absent, for the fields Go
// holds as pointers (an int-or-string, a *string): an empty string is a
// value of its own there, for validation to judge.
func setPointer(obj Object, k string, v any) {
	if obj != nil && obj[k] == nil {
		obj[k] = v
	}
}

// setObject makes obj's field k an object when it is unset, and returns it.
func setObject(obj Object, k string) Object {
	if obj == nil {
		return nil
	}
	if unset(obj, k) {
		obj[k] = map[string]any{}
	}
	return jsonmap.Child(obj, k)
}

// num is an integer as decoded JSON holds it (as requests and stored
// objects are decoded), so that a defaulted field equals the same value
// read back.
func num(n int) json.Number { return json.Number(strconv.Itoa(n)) }
