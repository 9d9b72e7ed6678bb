package defaults

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"

	"kubeplay/internal/jsonmap"
)

// LimitPod is the LimitRanger admission plugin on a new Pod (metadata md,
// spec): the Container items of each of the namespace's LimitRanges give
// the containers the requests and limits they leave out (noted in the
// kubernetes.io/limit-ranger annotation), then each item bounds what the
// containers (Container items) or the pod in all (Pod items) request and
// limit. The error says why the pod is forbidden.
func LimitPod(md, spec Object, limitRanges []Object) error {
	for _, lr := range limitRanges {
		if note := defaultResources(spec, jsonmap.Items(jsonmap.Child(lr, "spec")["limits"])); note != "" {
			setObject(md, "annotations")["kubernetes.io/limit-ranger"] = "LimitRanger plugin set: " + note
		}
	}
	for _, lr := range limitRanges {
		var errs []error
		for _, item := range jsonmap.Items(jsonmap.Child(lr, "spec")["limits"]) {
			switch jsonmap.String(item, "type") {
			case "Container":
				for _, list := range containerLists {
					for _, c := range jsonmap.Items(spec[list.field]) {
						res := jsonmap.Child(c, "resources")
						errs = append(errs, bound(item, "Container", jsonmap.Child(res, "requests"), jsonmap.Child(res, "limits"))...)
					}
				}
			case "Pod":
				errs = append(errs, bound(item, "Pod", podTotal(spec, "requests"), podTotal(spec, "limits"))...)
			}
		}
		// kube-apiserver stops at the first LimitRange a pod breaks.
		if err := utilerrors.NewAggregate(errs); err != nil {
			return err
		}
	}
	return nil
}

// LimitClaim is the validating phase of the LimitRanger admission plugin on
// a PersistentVolumeClaim (spec): the PersistentVolumeClaim items of the
// namespace's LimitRanges bound the storage it requests.
func LimitClaim(spec Object, limitRanges []Object) error {
	requests := jsonmap.Child(spec, "resources", "requests")
	for _, lr := range limitRanges {
		var errs []error
		for _, item := range jsonmap.Items(jsonmap.Child(lr, "spec")["limits"]) {
			if jsonmap.String(item, "type") != "PersistentVolumeClaim" {
				continue
			}
			for _, name := range slices.Sorted(maps.Keys(jsonmap.Child(item, "min"))) {
				errs = append(errs, minimum("PersistentVolumeClaim", name, jsonmap.Child(item, "min")[name], requests, nil))
			}
			for _, name := range slices.Sorted(maps.Keys(jsonmap.Child(item, "max"))) {
				errs = append(errs, maximum("PersistentVolumeClaim", name, jsonmap.Child(item, "max")[name], requests, nil, false))
			}
		}
		if err := utilerrors.NewAggregate(slices.DeleteFunc(errs, func(e error) bool { return e == nil })); err != nil {
			return err
		}
	}
	return nil
}

// bound checks requests and limits (of one container, or a pod's sums) of
// limitType against item's min, max and maxLimitRequestRatio.
func bound(item Object, limitType string, requests, limits Object) []error {
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(jsonmap.Child(item, "min"))) {
		errs = append(errs, minimum(limitType, name, jsonmap.Child(item, "min")[name], requests, limits))
	}
	for _, name := range slices.Sorted(maps.Keys(jsonmap.Child(item, "max"))) {
		errs = append(errs, maximum(limitType, name, jsonmap.Child(item, "max")[name], requests, limits, true))
	}
	for _, name := range slices.Sorted(maps.Keys(jsonmap.Child(item, "maxLimitRequestRatio"))) {
		errs = append(errs, ratio(limitType, name, jsonmap.Child(item, "maxLimitRequestRatio")[name], requests, limits))
	}
	return slices.DeleteFunc(errs, func(e error) bool { return e == nil })
}

// observed are a request, a limit and a bound as kube-apiserver compares
// them: in thousandths where all three fit.
func observed(req, lim, enforced resource.Quantity) (int64, int64, int64) {
	r, l, e := req.Value(), lim.Value(), enforced.Value()
	if r <= resource.MaxMilliValue && l <= resource.MaxMilliValue && e <= resource.MaxMilliValue {
		return req.MilliValue(), lim.MilliValue(), enforced.MilliValue()
	}
	return r, l, e
}

func minimum(limitType, name string, bound any, requests, limits Object) error {
	enforced, _ := jsonmap.Quantity(bound)
	req, hasReq := jsonmap.Quantity(requests[name])
	lim, hasLim := jsonmap.Quantity(limits[name])
	r, l, e := observed(req, lim, enforced)
	switch {
	case !hasReq:
		return fmt.Errorf("minimum %s usage per %s is %s.  No request is specified", name, limitType, enforced.String())
	case r < e:
		return fmt.Errorf("minimum %s usage per %s is %s, but request is %s", name, limitType, enforced.String(), req.String())
	case hasLim && l < e:
		return fmt.Errorf("minimum %s usage per %s is %s, but limit is %s", name, limitType, enforced.String(), lim.String())
	}
	return nil
}

// maximum bounds the limit, and the request too; a claim, which has no
// limits (hasLimits false), only its request.
func maximum(limitType, name string, bound any, requests, limits Object, hasLimits bool) error {
	enforced, _ := jsonmap.Quantity(bound)
	req, hasReq := jsonmap.Quantity(requests[name])
	lim, hasLim := jsonmap.Quantity(limits[name])
	r, l, e := observed(req, lim, enforced)
	if !hasLimits {
		switch {
		case !hasReq:
			return fmt.Errorf("maximum %s usage per %s is %s.  No request is specified", name, limitType, enforced.String())
		case r > e:
			return fmt.Errorf("maximum %s usage per %s is %s, but request is %s", name, limitType, enforced.String(), req.String())
		}
		return nil
	}
	switch {
	case !hasLim:
		return fmt.Errorf("maximum %s usage per %s is %s.  No limit is specified", name, limitType, enforced.String())
	case l > e:
		return fmt.Errorf("maximum %s usage per %s is %s, but limit is %s", name, limitType, enforced.String(), lim.String())
	case hasReq && r > e:
		return fmt.Errorf("maximum %s usage per %s is %s, but request is %s", name, limitType, enforced.String(), req.String())
	}
	return nil
}

func ratio(limitType, name string, bound any, requests, limits Object) error {
	enforced, _ := jsonmap.Quantity(bound)
	req, hasReq := jsonmap.Quantity(requests[name])
	lim, hasLim := jsonmap.Quantity(limits[name])
	r, l, _ := observed(req, lim, enforced)
	if !hasReq || r == 0 {
		return fmt.Errorf("%s max limit to request ratio per %s is %s, but no request is specified or request is 0", name, limitType, enforced.String())
	}
	if !hasLim || l == 0 {
		return fmt.Errorf("%s max limit to request ratio per %s is %s, but no limit is specified or limit is 0", name, limitType, enforced.String())
	}
	got := float64(l) / float64(r)
	shown, max := got, float64(enforced.Value())
	if enforced.Value() <= resource.MaxMilliValue {
		got, max = got*1000, float64(enforced.MilliValue())
	}
	if got > max {
		return fmt.Errorf("%s max limit to request ratio per %s is %s, but provided ratio is %f", name, limitType, enforced.String(), shown)
	}
	return nil
}

// podTotal is what a pod's containers request (kind "requests") or limit
// ("limits") in all, as LimitRanger counts it: the containers and sidecars
// together, or an init container with the sidecars started before it if
// more; the pod's own CPU and memory, when set, in their place.
func podTotal(spec Object, kind string) Object {
	total := map[string]resource.Quantity{}
	add := func(to map[string]resource.Quantity, from Object) {
		for name, v := range from {
			q, ok := jsonmap.Quantity(v)
			if !ok {
				continue
			}
			if sum, found := to[name]; found {
				q.Add(sum)
			}
			to[name] = q
		}
	}
	for _, c := range jsonmap.Items(spec["containers"]) {
		add(total, jsonmap.Child(c, "resources", kind))
	}
	sidecars, inits := map[string]resource.Quantity{}, map[string]resource.Quantity{}
	for _, c := range jsonmap.Items(spec["initContainers"]) {
		own := jsonmap.Child(c, "resources", kind)
		running := map[string]resource.Quantity{}
		if jsonmap.String(c, "restartPolicy") == "Always" {
			add(total, own)
			add(sidecars, own)
			maps.Copy(running, sidecars)
		} else {
			add(running, own)
			for name, q := range sidecars {
				add(running, Object{name: q.String()})
			}
		}
		for name, q := range running {
			if v, ok := inits[name]; !ok || q.Cmp(v) > 0 {
				inits[name] = q
			}
		}
	}
	for name, q := range inits {
		if v, ok := total[name]; !ok || q.Cmp(v) > 0 {
			total[name] = q
		}
	}
	out := Object{}
	for name, q := range total {
		out[name] = q.String()
	}
	for name, v := range jsonmap.Child(spec, "resources", kind) {
		if name == "cpu" || name == "memory" {
			out[name] = v
		}
	}
	return out
}

// containerLists are a pod's containers as the plugin names them.
var containerLists = []struct{ field, noun string }{{"containers", "container"}, {"initContainers", "init container"}}

// defaultResources sets the default requests and limits of the
// Container items of a LimitRange on the containers of spec that lack
// them, and describes what it set.
func defaultResources(spec Object, items []Object) string {
	defaults := map[string]Object{"requests": {}, "limits": {}}
	for _, item := range items {
		if jsonmap.String(item, "type") == "Container" {
			maps.Copy(defaults["requests"], jsonmap.Child(item, "defaultRequest"))
			maps.Copy(defaults["limits"], jsonmap.Child(item, "default"))
		}
	}
	var notes []string
	for _, list := range containerLists {
		for _, c := range jsonmap.Items(spec[list.field]) {
			if c == nil {
				continue
			}
			res := setObject(c, "resources")
			for _, kind := range []struct{ field, noun string }{{"requests", "request"}, {"limits", "limit"}} {
				var set []string
				for _, name := range slices.Sorted(maps.Keys(defaults[kind.field])) {
					target := setObject(res, kind.field)
					if _, ok := target[name]; !ok {
						target[name] = defaults[kind.field][name]
						set = append(set, name)
					}
				}
				if len(set) > 0 {
					notes = append(notes, fmt.Sprintf("%s %s for %s %s", strings.Join(set, ", "), kind.noun, list.noun, c["name"]))
				}
			}
		}
	}
	return strings.Join(notes, "; ")
}
