package defaults

import (
	"fmt"
	"maps"
	"reflect"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"kubeplay/internal/jsonmap"
)

// PrepareForCreate sets what the storage of kind gvk sets on a new object
// after the field manager has recorded its writer's fields, so that no
// manager owns them. obj has its metadata.uid; now is the creation time.
func PrepareForCreate(gvk schema.GroupVersionKind, obj Object, now time.Time) {
	md := jsonmap.Child(obj, "metadata")
	switch gvk.GroupKind() {
	case schema.GroupKind{Kind: "Pod"}:
		status := map[string]any{"phase": "Pending", "qosClass": qosClass(jsonmap.Child(obj, "spec"))}
		if gates, _ := jsonmap.Child(obj, "spec")["schedulingGates"].([]any); len(gates) > 0 {
			// The scheduler leaves a gated pod alone; kube-apiserver says why.
			status["conditions"] = []any{map[string]any{"type": "PodScheduled", "status": "False", "reason": "SchedulingGated",
				"message": "Scheduling is blocked due to non-empty scheduling gates", "lastProbeTime": nil,
				"lastTransitionTime": now.UTC().Format(time.RFC3339)}}
		}
		obj["status"] = status
	case schema.GroupKind{Kind: "PersistentVolumeClaim"}:
		obj["status"] = map[string]any{"phase": "Pending"}
	case schema.GroupKind{Kind: "PersistentVolume"}:
		obj["status"] = map[string]any{"phase": "Pending", "lastPhaseTransitionTime": now.UTC().Format(time.RFC3339)}
	case schema.GroupKind{Group: "apps", Kind: "DaemonSet"}:
		setObject(md, "annotations")[templateGeneration] = "1"
	case schema.GroupKind{Group: "batch", Kind: "Job"}:
		generateJobSelector(md, jsonmap.Child(obj, "spec"))
	}
}

// generateJobSelector gives a Job that does not choose its own selector one
// matching its uid (added to the one it names, if any), and labels its pods
// with it and the Job's name. A Job whose labels defaulting took from its
// template (the same Go map in kube-apiserver) carries the new labels too.
func generateJobSelector(md, spec Object) {
	if spec == nil || spec["manualSelector"] == true {
		return
	}
	uid, name := md["uid"], md["name"]
	// A selector the Job names is kept, for validation to reject.
	setObject(setObject(spec, "selector"), "matchLabels")["batch.kubernetes.io/controller-uid"] = uid
	tmd := setObject(setObject(spec, "template"), "metadata")
	labels := setObject(tmd, "labels")
	shared := len(labels) > 0 && maps.Equal(jsonmap.Child(md, "labels"), labels)
	for _, prefix := range []string{"batch.kubernetes.io/", ""} {
		labels[prefix+"controller-uid"] = uid
		labels[prefix+"job-name"] = name
	}
	if shared {
		md["labels"] = maps.Clone(labels)
	}
}

// qosClass is a pod's quality of service class: BestEffort when no
// container requests or limits CPU or memory, Guaranteed when every
// container limits both and requests what it limits, else Burstable.
func qosClass(spec Object) string {
	some, guaranteed := false, true
	for _, list := range []string{"initContainers", "containers"} {
		for _, c := range jsonmap.Items(spec[list]) {
			res := jsonmap.Child(c, "resources")
			requests, limits := jsonmap.Child(res, "requests"), jsonmap.Child(res, "limits")
			for _, r := range []string{"cpu", "memory"} {
				req, hasReq := requests[r]
				lim, hasLim := limits[r]
				if hasReq || hasLim {
					some = true
				}
				if !hasLim || hasReq && req != lim {
					guaranteed = false
				}
			}
		}
	}
	switch {
	case !some:
		return "BestEffort"
	case guaranteed:
		return "Guaranteed"
	}
	return "Burstable"
}

// PrepareForUpdate sets what the storage of kind gvk sets on an updated
// object before the field manager records the change from old: a
// DaemonSet's template generation, carried over and counted up when its
// pod template changed.
func PrepareForUpdate(gvk schema.GroupVersionKind, obj, old Object) {
	if gvk.GroupKind() != (schema.GroupKind{Group: "apps", Kind: "DaemonSet"}) {
		return
	}
	gen, _ := strconv.ParseInt(fmt.Sprint(jsonmap.Child(jsonmap.Child(old, "metadata"), "annotations")[templateGeneration]), 10, 64)
	if !reflect.DeepEqual(jsonmap.Child(jsonmap.Child(obj, "spec"), "template"), jsonmap.Child(jsonmap.Child(old, "spec"), "template")) {
		gen++
	}
	if md := jsonmap.Child(obj, "metadata"); md != nil {
		setObject(md, "annotations")[templateGeneration] = strconv.FormatInt(gen, 10)
	}
}
