package defaults

import (
	"fmt"

	"kubeplay/internal/jsonmap"
)

// Pod admission: what kube-apiserver's default mutating admission plugins
// (ServiceAccount, DefaultTolerationSeconds, Priority) add to a new Pod.
// They run after the field manager, so no manager owns what they add.

// PodServiceAccount returns the name of the service account a new Pod
// runs as, which the ServiceAccount plugin reads: spec.serviceAccountName,
// else the deprecated spec.serviceAccount, else "default". It records it
// in both fields.
func PodServiceAccount(spec Object) string {
	if spec == nil {
		return "default"
	}
	set(spec, "serviceAccountName", spec["serviceAccount"])
	set(spec, "serviceAccountName", "default")
	spec["serviceAccount"] = spec["serviceAccountName"]
	name, _ := spec["serviceAccountName"].(string)
	return name
}

// syncServiceAccount makes a pod spec's serviceAccountName and its
// deprecated alias serviceAccount agree when either is set (the name, else
// the alias), as the API's conversion does before the field manager and
// admission see the object.
func syncServiceAccount(spec Object) {
	if spec == nil || unset(spec, "serviceAccountName") && unset(spec, "serviceAccount") {
		return
	}
	set(spec, "serviceAccountName", spec["serviceAccount"])
	spec["serviceAccount"] = spec["serviceAccountName"]
}

// tokenMountPath is where the ServiceAccount plugin mounts a pod's API
// credentials.
const tokenMountPath = "/var/run/secrets/kubernetes.io/serviceaccount"

// The priorities of the built-in PriorityClasses.
var builtinPriorities = map[string]int64{"system-node-critical": 2000001000, "system-cluster-critical": 2000000000}

// PriorityClass is what the Priority plugin takes of a pod's PriorityClass
// (the zero value when it names none and none is the global default).
type PriorityClass struct {
	Name             string
	Value            int64
	PreemptionPolicy string
}

// BuiltinPriorityClass is the built-in PriorityClass name, for a server
// that has not stored them.
func BuiltinPriorityClass(name string) (PriorityClass, bool) {
	value, ok := builtinPriorities[name]
	return PriorityClass{Name: name, Value: value}, ok
}

// AdmitPod does to a new Pod's spec what the plugins do once its service
// account is known: mount the API credentials as volume tokenVolume in
// each container that mounts nothing there (unless the pod or, when
// automount is false, its service account opts out), tolerate not-ready
// and unreachable nodes for 5 minutes, and set the priority and preemption
// policy of its PriorityClass, class. It returns the reason a pod that sets
// its own priority is forbidden, "" if none.
func AdmitPod(spec Object, automount bool, tokenVolume string, class PriorityClass) string {
	if spec == nil {
		return ""
	}
	if v, ok := spec["automountServiceAccountToken"].(bool); ok {
		automount = v
	}
	if automount {
		mountToken(spec, tokenVolume)
	}
	tolerateUnavailableNodes(spec)
	return setPriority(spec, class)
}

// AdmitPodUpdate does to an updated Pod's spec what the plugins do on an
// update: tolerate not-ready and unreachable nodes again if the update
// dropped those tolerations, and keep the priority and preemption policy
// of oldSpec, the stored pod's, that the update left out.
func AdmitPodUpdate(spec, oldSpec Object) {
	if spec == nil {
		return
	}
	tolerateUnavailableNodes(spec)
	for _, k := range []string{"priority", "preemptionPolicy"} {
		if spec[k] == nil && oldSpec[k] != nil {
			spec[k] = oldSpec[k]
		}
	}
}

func mountToken(spec Object, volume string) {
	mounted := false
	for _, list := range []string{"initContainers", "containers"} {
		for _, c := range jsonmap.Items(spec[list]) {
			if c == nil || hasMountAt(c, tokenMountPath) {
				continue
			}
			mounts, _ := c["volumeMounts"].([]any)
			c["volumeMounts"] = append(mounts, map[string]any{"name": volume, "readOnly": true, "mountPath": tokenMountPath})
			mounted = true
		}
	}
	if !mounted {
		return
	}
	volumes, _ := spec["volumes"].([]any)
	spec["volumes"] = append(volumes, map[string]any{"name": volume, "projected": map[string]any{
		"defaultMode": defaultMode,
		"sources": []any{
			map[string]any{"serviceAccountToken": map[string]any{"expirationSeconds": num(3607), "path": "token"}},
			map[string]any{"configMap": map[string]any{"name": "kube-root-ca.crt", "items": []any{map[string]any{"key": "ca.crt", "path": "ca.crt"}}}},
			map[string]any{"downwardAPI": map[string]any{"items": []any{map[string]any{"path": "namespace", "fieldRef": map[string]any{"apiVersion": "v1", "fieldPath": "metadata.namespace"}}}}},
		},
	}})
}

func hasMountAt(c Object, path string) bool {
	for _, m := range jsonmap.Items(c["volumeMounts"]) {
		if m["mountPath"] == path {
			return true
		}
	}
	return false
}

// tolerateUnavailableNodes adds the tolerations of nodes not ready and
// unreachable, each unless the pod already tolerates its taint.
func tolerateUnavailableNodes(spec Object) {
	tolerations, _ := spec["tolerations"].([]any)
	for _, key := range []string{"node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"} {
		if tolerates(tolerations, key) {
			continue
		}
		tolerations = append(tolerations, map[string]any{"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": num(300)})
	}
	spec["tolerations"] = tolerations
}

// tolerates reports whether one of tolerations tolerates a NoExecute taint
// with key.
func tolerates(tolerations []any, key string) bool {
	for _, e := range tolerations {
		t, _ := e.(map[string]any)
		k, _ := t["key"].(string)
		effect, _ := t["effect"].(string)
		if (k == key || k == "" && t["operator"] == "Exists") && (effect == "" || effect == "NoExecute") {
			return true
		}
	}
	return false
}

// setPriority sets a pod's priority and preemption policy from its
// PriorityClass (the global default one when it names none).
func setPriority(spec Object, class PriorityClass) string {
	priority, policy := class.Value, class.PreemptionPolicy
	if policy == "" {
		policy = "PreemptLowerPriority"
	}
	if class.Name != "" {
		spec["priorityClassName"] = class.Name
	}
	if p, ok := jsonmap.IntOf(spec["priority"]); ok && p != priority {
		return fmt.Sprintf("the integer value of priority (%d) must not be provided in pod spec; priority admission controller computed %d from the given PriorityClass name", p, priority)
	}
	if p, ok := spec["preemptionPolicy"].(string); ok && p != "" && p != policy {
		return fmt.Sprintf("the string value of PreemptionPolicy (%s) must not be provided in pod spec; priority admission controller computed %s from the given PriorityClass name", p, policy)
	}
	spec["priority"] = num(int(priority))
	spec["preemptionPolicy"] = policy
	return ""
}
