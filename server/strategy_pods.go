package server

import (
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"kubeplay/server/defaults"
	"kubeplay/server/validation"
)

// podStrategy is the Pod's: new pods pass the pod admission plugins, and a
// DELETE gives a pod bound to a node its grace period to stop.
var podStrategy = strategy{
	tracksGeneration: true, returnsDeletedObject: true,
	validateUpdate: validation.PodUpdate,
	selectableFields: withNamespace(map[string]selectableField{
		"spec.nodeName": {}, "spec.restartPolicy": {zero: "Always"}, "spec.schedulerName": {zero: "default-scheduler"},
		"spec.serviceAccountName": {zero: "default"}, "spec.hostNetwork": {zero: "false"}, "status.phase": {zero: "Pending"},
		"status.podIP": {}, "status.nominatedNodeName": {}, "status.podIPs": {none: true},
	}),
	// Old kubelets corrupted ownerReferences through /status.
	statusIgnoresMetadata: []string{"ownerReferences"},
	resets:                onStatus(fieldpath.MakePathOrDie("metadata", "deletionTimestamp"), fieldpath.MakePathOrDie("metadata", "ownerReferences")),
	admitNew:              (*admission).admitPod,
	podSecurity:           podSecurityPod,
	admitUpdate:           admitPodUpdate,
	gracefulDelete:        podGracefulDelete,
	prepareForUpdate:      preparePodSpecUpdate,
	subresources:          podSpecSubresources,
	recordsSent:           true,
}

// podSpecSubresources update a part of a pod's spec only (see
// preparePodSpecUpdate).
var podSpecSubresources = []string{"ephemeralcontainers", "resize"}

// preparePodSpecUpdate keeps of an update through pods/ephemeralcontainers
// or pods/resize what that subresource may change, the rest as stored, as
// kube-apiserver's strategies for them do: the ephemeral containers; the
// containers' resources and resize policies (when the containers are the
// same ones, in the same order: otherwise validation is to refuse them).
func preparePodSpecUpdate(sub string, obj, old object) {
	if !slices.Contains(podSpecSubresources, sub) {
		return
	}
	spec, _ := obj["spec"].(map[string]any)
	kept, _ := runtime.DeepCopyJSONValue(old["spec"]).(map[string]any)
	if kept == nil {
		kept = map[string]any{}
	}
	switch sub {
	case "ephemeralcontainers":
		kept["ephemeralContainers"] = spec["ephemeralContainers"]
		if spec["ephemeralContainers"] == nil {
			delete(kept, "ephemeralContainers")
		}
	case "resize":
		for _, list := range []string{"containers", "initContainers"} {
			if spec[list] == nil && kept[list] == nil {
				continue
			}
			if resized, ok := resizedContainers(asSlice(spec[list]), asSlice(kept[list])); ok {
				kept[list] = resized
			} else if v, sent := spec[list]; sent {
				kept[list] = v
			}
		}
	}
	obj["spec"] = kept
	md, oldMD := metadata(obj), metadata(old)
	for _, k := range []string{"labels", "annotations", "finalizers", "ownerReferences"} {
		if v, ok := oldMD[k]; ok {
			md[k] = v
		} else {
			delete(md, k)
		}
	}
}

// resizedContainers returns the stored containers with the resources and
// resize policies of the new ones, if they are the same containers.
func resizedContainers(containers, stored []any) ([]any, bool) {
	if len(containers) != len(stored) {
		return nil, false
	}
	for i, c := range containers {
		m, _ := c.(map[string]any)
		was, _ := stored[i].(map[string]any)
		if str(m, "name") != str(was, "name") {
			return nil, false
		}
		for _, k := range []string{"resources", "resizePolicy"} {
			if v, ok := m[k]; ok {
				was[k] = v
			} else {
				delete(was, k)
			}
		}
	}
	return stored, true
}

// podGracefulDelete marks a pod for deletion after its grace period. A
// deletion under way changes only when asked for a shorter grace period,
// which counts from the first request.
func podGracefulDelete(d *deletion, now time.Time) (done bool) {
	md := metadata(d.obj)
	if g, ok := md["deletionGracePeriodSeconds"]; d.wasDeleting && ok && int64Of(g) > 0 {
		old := int64Of(g)
		if d.opts.GracePeriodSeconds == nil || *d.opts.GracePeriodSeconds >= old {
			return true
		}
		period := max(*d.opts.GracePeriodSeconds, 0)
		ts, _ := time.Parse(time.RFC3339, str(md, "deletionTimestamp"))
		md["deletionTimestamp"] = formatTime(ts.Add(time.Duration(period-old) * time.Second))
		md["deletionGracePeriodSeconds"] = period
		d.modified, d.graceful = true, period > 0
	} else if !d.wasDeleting {
		period := podGracePeriod(d.obj, d.opts)
		md["deletionTimestamp"] = formatTime(now.Add(time.Duration(period) * time.Second))
		md["deletionGracePeriodSeconds"] = period
		bumpGeneration(md)
		d.modified, d.graceful = true, period > 0
	}
	return false
}

// podGracePeriod is the grace period of a pod's deletion: the request's, else
// the pod's terminationGracePeriodSeconds (30 by default); 0 for a pod that is
// not bound to a node or has finished; negative values become 1.
func podGracePeriod(pod object, opts *metav1.DeleteOptions) int64 {
	spec, _ := pod["spec"].(map[string]any)
	status, _ := pod["status"].(map[string]any)
	period := int64(30)
	if opts.GracePeriodSeconds != nil {
		period = *opts.GracePeriodSeconds
	} else if v, ok := spec["terminationGracePeriodSeconds"]; ok {
		period = int64Of(v)
	}
	if str(spec, "nodeName") == "" {
		period = 0
	}
	if phase := str(status, "phase"); phase == "Succeeded" || phase == "Failed" {
		period = 0
	}
	if period < 0 {
		period = 1
	}
	return period
}

// admitPodUpdate is what DefaultTolerationSeconds and Priority admission do
// to an updated pod.
func admitPodUpdate(obj, old object) {
	spec, _ := obj["spec"].(map[string]any)
	oldSpec, _ := old["spec"].(map[string]any)
	defaults.AdmitPodUpdate(spec, oldSpec)
}
