package quota

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/labels"

	"kubeplay/internal/jsonmap"
)

// pods counts pods and the compute resources they request and limit.
type pods struct{}

var podResources = []string{"count/pods", "pods", "cpu", "memory", "ephemeral-storage",
	"requests.cpu", "requests.memory", "requests.ephemeral-storage", "limits.cpu", "limits.memory", "limits.ephemeral-storage"}

// constrained are the resources every container must name under a quota
// of them.
var constrained = []string{"cpu", "memory", "requests.cpu", "requests.memory", "limits.cpu", "limits.memory"}

func (pods) Handles(subresource string, obj, old jsonmap.Object) bool {
	switch subresource {
	case "":
		// An update counts only when it makes the pod terminating or not
		// (activeDeadlineSeconds), which moves it between scopes.
		return old == nil || terminating(obj) != terminating(old)
	case "resize":
		return old != nil
	}
	return false
}

func (pods) Resources(names []string) []string {
	out := intersect(names, podResources)
	for _, name := range names {
		if strings.HasPrefix(name, "hugepages-") || strings.HasPrefix(name, "requests.hugepages-") {
			out = append(out, name)
		}
		if r, ok := strings.CutPrefix(name, "requests."); ok && (isExtended(r) || strings.HasPrefix(r, "deviceclass.resource.kubernetes.io/")) {
			out = append(out, name)
		}
	}
	return out
}

func (pods) InScope(sel Selector, pod jsonmap.Object) (bool, error) {
	switch sel.Scope {
	case "Terminating":
		return terminating(pod), nil
	case "NotTerminating":
		return !terminating(pod), nil
	case "BestEffort":
		return bestEffort(pod), nil
	case "NotBestEffort":
		return !bestEffort(pod), nil
	case "PriorityClass":
		class := jsonmap.String(pod, "spec", "priorityClassName")
		if sel.Operator == "Exists" {
			return class != "", nil
		}
		set := labels.Set{}
		if class != "" {
			set[sel.Scope] = class
		}
		return sel.matches(set)
	case "CrossNamespacePodAffinity":
		return crossNamespaceAffinity(pod), nil
	}
	return false, nil
}

func terminating(pod jsonmap.Object) bool {
	n, ok := jsonmap.Int(pod, "spec", "activeDeadlineSeconds")
	return ok && n >= 0
}

// bestEffort reports whether the pod's QoS class is BestEffort: as the
// server set it in its status, else as its containers make it.
func bestEffort(pod jsonmap.Object) bool {
	if class := jsonmap.String(pod, "status", "qosClass"); class != "" {
		return class == "BestEffort"
	}
	spec := jsonmap.Child(pod, "spec")
	for _, r := range []string{"requests", "limits"} {
		for _, name := range []string{"cpu", "memory"} {
			if _, ok := jsonmap.Child(spec, "resources", r)[name]; ok {
				return false
			}
		}
	}
	for _, list := range []string{"initContainers", "containers"} {
		for _, c := range jsonmap.Items(spec[list]) {
			for _, r := range []string{"requests", "limits"} {
				for name, q := range jsonmap.Child(c, "resources", r) {
					if v, ok := jsonmap.Quantity(q); (name == "cpu" || name == "memory") && ok && !v.IsZero() {
						return false
					}
				}
			}
		}
	}
	return true
}

// crossNamespaceAffinity reports whether a pod (anti-)affinity term of the
// pod names other namespaces.
func crossNamespaceAffinity(pod jsonmap.Object) bool {
	affinity := jsonmap.Child(pod, "spec", "affinity")
	for _, kind := range []string{"podAffinity", "podAntiAffinity"} {
		a := jsonmap.Child(affinity, kind)
		terms := jsonmap.Items(a["requiredDuringSchedulingIgnoredDuringExecution"])
		for _, w := range jsonmap.Items(a["preferredDuringSchedulingIgnoredDuringExecution"]) {
			terms = append(terms, jsonmap.Child(w, "podAffinityTerm"))
		}
		for _, t := range terms {
			if len(jsonmap.List(t, "namespaces")) > 0 || t["namespaceSelector"] != nil {
				return true
			}
		}
	}
	return false
}

// Constraints refuses a pod some container of which leaves out a compute
// resource the quota limits; pod-level resources spare the containers.
func (pods) Constraints(required []string, pod jsonmap.Object) error {
	spec := jsonmap.Child(pod, "spec")
	if podLevelResources(spec, "requests") || podLevelResources(spec, "limits") {
		return nil
	}
	required = intersect(required, constrained)
	missing := map[string][]string{}
	for _, list := range []string{"containers", "initContainers"} {
		for _, c := range jsonmap.Items(spec[list]) {
			res := jsonmap.Child(c, "resources")
			has := containerUsage(ListOf(res["requests"]), ListOf(res["limits"]))
			for _, r := range required {
				if _, ok := has[r]; !ok {
					missing[r] = append(missing[r], jsonmap.String(c, "name"))
				}
			}
		}
	}
	if len(missing) == 0 {
		return nil
	}
	var msgs []string
	for _, r := range slices.Sorted(maps.Keys(missing)) {
		msgs = append(msgs, fmt.Sprintf("%s for: %s", r, prettyNames(slices.Compact(slices.Sorted(slices.Values(missing[r]))))))
	}
	return fmt.Errorf("must specify %s", strings.Join(msgs, "; "))
}

// containerUsage is what requests and limits (of a container, or a pod's
// sums) use of a quota.
func containerUsage(requests, limits List) List {
	out := List{"pods": one()}
	for _, r := range []string{"cpu", "memory", "ephemeral-storage"} {
		if q, ok := requests[r]; ok {
			out[r], out["requests."+r] = q, q
		}
		if q, ok := limits[r]; ok {
			out["limits."+r] = q
		}
	}
	for name, q := range requests {
		if strings.HasPrefix(name, "hugepages-") {
			out[name], out["requests."+name] = q, q
		}
		if isExtended(name) || strings.HasPrefix(name, "deviceclass.resource.kubernetes.io/") {
			out["requests."+name] = q
		}
	}
	return out
}

// Usage: every pod counts as an object; one not yet done (neither
// succeeded nor failed, nor past its deletion's grace period) uses a pod
// and what it requests and limits.
func (pods) Usage(pod jsonmap.Object, now time.Time) List {
	out := List{"count/pods": one()}
	if !active(pod, now) {
		return out
	}
	spec := jsonmap.Child(pod, "spec")
	return Add(out, containerUsage(podTotal(spec, "requests"), podTotal(spec, "limits")))
}

func active(pod jsonmap.Object, now time.Time) bool {
	if phase := jsonmap.String(pod, "status", "phase"); phase == "Succeeded" || phase == "Failed" {
		return false
	}
	deleted, err := time.Parse(time.RFC3339, jsonmap.String(pod, "metadata", "deletionTimestamp"))
	grace, ok := jsonmap.Int(pod, "metadata", "deletionGracePeriodSeconds")
	return err != nil || !ok || !now.After(deleted.Add(time.Duration(grace)*time.Second))
}

// podTotal is what the pod's containers request (kind "requests") or
// limit ("limits") in all, as the scheduler counts it: the containers and
// sidecars together, or an init container with the sidecars started
// before it if more; the pod's own resources, when set, take the place of
// the containers'; then the pod's overhead.
func podTotal(spec jsonmap.Object, kind string) List {
	total := List{}
	for _, c := range jsonmap.Items(spec["containers"]) {
		total = Add(total, ListOf(jsonmap.Child(c, "resources")[kind]))
	}
	sidecars, inits := List{}, List{}
	for _, c := range jsonmap.Items(spec["initContainers"]) {
		own := ListOf(jsonmap.Child(c, "resources")[kind])
		var running List
		if jsonmap.String(c, "restartPolicy") == "Always" {
			total = Add(total, own)
			sidecars = Add(sidecars, own)
			running = sidecars
		} else {
			running = Add(own, sidecars)
		}
		inits = maxOf(inits, running)
	}
	total = maxOf(total, inits)
	if podLevelResources(spec, kind) {
		for name, q := range ListOf(jsonmap.Child(spec, "resources")[kind]) {
			if podLevel(name) {
				total[name] = q
			}
		}
	}
	for name, q := range ListOf(spec["overhead"]) {
		// Overhead counts towards a limit only where there is one.
		if v, ok := total[name]; kind == "requests" || ok && !v.IsZero() {
			total = Add(total, List{name: q})
		}
	}
	return total
}

func maxOf(a, b List) List {
	out := Add(a, nil)
	for name, q := range b {
		if v, ok := out[name]; !ok || q.Cmp(v) > 0 {
			out[name] = q.DeepCopy()
		}
	}
	return out
}

// podLevel reports whether a pod's own resources can set name.
func podLevel(name string) bool {
	return name == "cpu" || name == "memory" || strings.HasPrefix(name, "hugepages-")
}

// podLevelResources reports whether the pod sets its own requests or
// limits (kind), or, for "limits", either.
func podLevelResources(spec jsonmap.Object, kind string) bool {
	kinds := []string{kind}
	if kind == "limits" {
		kinds = []string{"requests", "limits"}
	}
	for _, k := range kinds {
		for name := range jsonmap.Child(spec, "resources", k) {
			if podLevel(name) {
				return true
			}
		}
	}
	return false
}
