package defaults

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	utilerrors "k8s.io/apimachinery/pkg/util/errors"

	"kubeplay/internal/jsonmap"
)

// LimitPod is the LimitRanger admission plugin on a new Pod (metadata md,
// spec): each Container item of the namespace's LimitRanges gives the
// containers the requests and limits they leave out (noted in the
// kubernetes.io/limit-ranger annotation), then bounds what they request
// and limit. The error says why the pod is forbidden.
func LimitPod(md, spec Object, limitRanges []Object) error {
	var errs []error
	for _, lr := range limitRanges {
		for _, item := range jsonmap.Items(jsonmap.Child(lr, "spec")["limits"]) {
			if item == nil || item["type"] != "Container" {
				continue
			}
			if note := defaultResources(spec, item); note != "" {
				setObject(md, "annotations")["kubernetes.io/limit-ranger"] = "LimitRanger plugin set: " + note
			}
			errs = append(errs, boundResources(spec, item)...)
		}
	}
	return utilerrors.NewAggregate(errs)
}

// containerLists are a pod's containers as the plugin names them.
var containerLists = []struct{ field, noun string }{{"containers", "container"}, {"initContainers", "init container"}}

// defaultResources sets the default requests and limits of item on the
// containers of spec that lack them, and describes what it set.
func defaultResources(spec, item Object) string {
	var notes []string
	for _, list := range containerLists {
		for _, c := range jsonmap.Items(spec[list.field]) {
			if c == nil {
				continue
			}
			res := setObject(c, "resources")
			for _, kind := range []struct{ field, from, noun string }{{"requests", "defaultRequest", "request"}, {"limits", "default", "limit"}} {
				var set []string
				for _, name := range slices.Sorted(maps.Keys(jsonmap.Child(item, kind.from))) {
					target := setObject(res, kind.field)
					if _, ok := target[name]; !ok {
						target[name] = jsonmap.Child(item, kind.from)[name]
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

// boundResources checks the containers of spec against item's minimum
// requests and maximum limits.
func boundResources(spec, item Object) []error {
	var errs []error
	for _, list := range containerLists {
		for _, c := range jsonmap.Items(spec[list.field]) {
			res := jsonmap.Child(c, "resources")
			for _, b := range []struct{ bound, field, noun string }{{"min", "requests", "request"}, {"max", "limits", "limit"}} {
				for _, name := range slices.Sorted(maps.Keys(jsonmap.Child(item, b.bound))) {
					bound, ok := jsonmap.Quantity(jsonmap.Child(item, b.bound)[name])
					got, has := jsonmap.Quantity(jsonmap.Child(res, b.field)[name])
					if !ok || !has {
						continue
					}
					if c := got.Cmp(bound); b.bound == "min" && c < 0 || b.bound == "max" && c > 0 {
						word := map[string]string{"min": "minimum", "max": "maximum"}[b.bound]
						errs = append(errs, fmt.Errorf("%s %s usage per Container is %s, but %s is %s", word, name, bound.String(), b.noun, got.String()))
					}
				}
			}
		}
	}
	return errs
}
