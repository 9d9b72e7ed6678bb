package quota

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"

	"kubeplay/internal/jsonmap"
)

// An Evaluator knows what the objects of one resource use of a quota, as
// kube-apiserver's quota evaluators do.
type Evaluator interface {
	// Handles reports whether a write through subresource of obj (a
	// create when old is nil) can change what it uses.
	Handles(subresource string, obj, old jsonmap.Object) bool
	// Resources are those of names (a quota's hard resources) this
	// resource's objects use.
	Resources(names []string) []string
	// InScope reports whether obj is in the scope sel names.
	InScope(sel Selector, obj jsonmap.Object) (bool, error)
	// Constraints says why obj cannot be admitted under a quota on
	// required (a pod that names no CPU request under a quota of CPU).
	Constraints(required []string, obj jsonmap.Object) error
	// Usage is what obj uses, at now.
	Usage(obj jsonmap.Object, now time.Time) List
}

// ignored are the resources quota never counts.
var ignored = map[schema.GroupResource]bool{
	{Resource: "bindings"}: true, {Resource: "componentstatuses"}: true, {Resource: "events"}: true,
	{Group: "events.k8s.io", Resource: "events"}:                           true,
	{Group: "authentication.k8s.io", Resource: "tokenreviews"}:             true,
	{Group: "authentication.k8s.io", Resource: "selfsubjectreviews"}:       true,
	{Group: "authorization.k8s.io", Resource: "subjectaccessreviews"}:      true,
	{Group: "authorization.k8s.io", Resource: "selfsubjectaccessreviews"}:  true,
	{Group: "authorization.k8s.io", Resource: "localsubjectaccessreviews"}: true,
	{Group: "authorization.k8s.io", Resource: "selfsubjectrulesreviews"}:   true,
}

// For is the evaluator of the objects of gr, nil for those quota never
// counts. A resource without one of its own is counted as objects
// (count/<resource>.<group>).
func For(gr schema.GroupResource) Evaluator {
	if ignored[gr] {
		return nil
	}
	if gr.Group == "" {
		switch gr.Resource {
		case "pods":
			return pods{}
		case "services":
			return services{}
		case "persistentvolumeclaims":
			return claims{}
		case "configmaps", "secrets", "replicationcontrollers", "resourcequotas":
			// Counted under their old names too.
			return objectCount{names: []string{CountName(gr), gr.Resource}}
		}
	}
	return objectCount{names: []string{CountName(gr)}}
}

// CountName is the quota resource that counts the objects of gr.
func CountName(gr schema.GroupResource) string {
	if gr.Group == "" {
		return "count/" + gr.Resource
	}
	return "count/" + gr.Resource + "." + gr.Group
}

// Tracked is the resource whose objects the quota resource name concerns,
// if it is one the evaluators know by name (count/<resource>.<group>,
// the names of pods, services, claims and the counted core objects).
func Tracked(name string) (schema.GroupResource, bool) {
	if rest, ok := strings.CutPrefix(name, "count/"); ok {
		res, group, _ := strings.Cut(rest, ".")
		return schema.GroupResource{Group: group, Resource: res}, true
	}
	for _, r := range []string{"pods", "services", "persistentvolumeclaims", "configmaps", "secrets", "replicationcontrollers", "resourcequotas"} {
		gr := schema.GroupResource{Resource: r}
		if len(For(gr).Resources([]string{name})) > 0 {
			return gr, true
		}
	}
	return schema.GroupResource{}, false
}

// objectCount counts objects: one each, under names.
type objectCount struct{ names []string }

func (e objectCount) Handles(subresource string, _, old jsonmap.Object) bool {
	return subresource == "" && old == nil
}

func (e objectCount) Resources(names []string) []string { return intersect(names, e.names) }

func (objectCount) InScope(Selector, jsonmap.Object) (bool, error) { return false, nil }

func (objectCount) Constraints([]string, jsonmap.Object) error { return nil }

func (e objectCount) Usage(jsonmap.Object, time.Time) List {
	out := List{}
	for _, n := range e.names {
		out[n] = one()
	}
	return out
}

// services counts services, and those that take node ports or load
// balancers.
type services struct{}

var serviceResources = []string{"count/services", "services", "services.nodeports", "services.loadbalancers"}

func (services) Handles(subresource string, _, _ jsonmap.Object) bool { return subresource == "" }

func (services) Resources(names []string) []string { return intersect(names, serviceResources) }

func (services) InScope(Selector, jsonmap.Object) (bool, error) { return false, nil }

func (services) Constraints([]string, jsonmap.Object) error { return nil }

func (services) Usage(svc jsonmap.Object, _ time.Time) List {
	spec := jsonmap.Child(svc, "spec")
	ports := jsonmap.Items(spec["ports"])
	out := List{"count/services": one(), "services": one(), "services.loadbalancers": zero(), "services.nodeports": zero()}
	switch spec["type"] {
	case "NodePort":
		out["services.nodeports"] = *resource.NewQuantity(int64(len(ports)), resource.DecimalSI)
	case "LoadBalancer":
		n := len(ports)
		if allocate, ok := spec["allocateLoadBalancerNodePorts"].(bool); ok && !allocate {
			n = 0
			for _, p := range ports {
				if port, _ := jsonmap.IntOf(p["nodePort"]); port != 0 {
					n++
				}
			}
		}
		out["services.nodeports"] = *resource.NewQuantity(int64(n), resource.DecimalSI)
		out["services.loadbalancers"] = one()
	}
	return out
}

// claims counts persistent volume claims and the storage they request, in
// all and per storage class.
type claims struct{}

const storageClassInfix = ".storageclass.storage.k8s.io/"

var claimResources = []string{"persistentvolumeclaims", "requests.storage"}

func (claims) Handles(subresource string, obj, old jsonmap.Object) bool {
	switch subresource {
	case "":
		return true
	case "status":
		// A resize the kubelet confirms, or a change of volume attributes
		// class, can change what the claim uses.
		st, was := jsonmap.Child(obj, "status"), jsonmap.Child(old, "status")
		return !reflect.DeepEqual(jsonmap.Child(st, "allocatedResources")["storage"], jsonmap.Child(was, "allocatedResources")["storage"]) ||
			!attributesClasses(obj).Equal(attributesClasses(old))
	}
	return false
}

func (claims) Resources(names []string) []string {
	var out []string
	for _, name := range names {
		if name == "count/persistentvolumeclaims" || slices.Contains(claimResources, name) {
			out = append(out, name)
			continue
		}
		for _, r := range claimResources {
			if strings.HasSuffix(name, storageClassInfix+r) {
				out = append(out, name)
				break
			}
		}
	}
	return out
}

func (claims) InScope(sel Selector, pvc jsonmap.Object) (bool, error) {
	if sel.Scope != "VolumeAttributesClass" {
		return false, nil
	}
	names := attributesClasses(pvc)
	if sel.Operator == "Exists" {
		return names.Len() > 0, nil
	}
	if names.Len() == 0 {
		return sel.matches(labels.Set{})
	}
	for name := range names {
		if ok, err := sel.matches(labels.Set{sel.Scope: name}); ok || err != nil {
			return ok, err
		}
	}
	return false, nil
}

// attributesClasses are the volume attributes classes a claim names.
func attributesClasses(pvc jsonmap.Object) sets.Set[string] {
	names := sets.New[string]()
	for _, n := range []string{jsonmap.String(pvc, "spec", "volumeAttributesClassName"), jsonmap.String(pvc, "status", "currentVolumeAttributesClassName"),
		jsonmap.String(pvc, "status", "modifyVolumeStatus", "targetVolumeAttributesClassName")} {
		if n != "" {
			names.Insert(n)
		}
	}
	return names
}

func (claims) Constraints([]string, jsonmap.Object) error { return nil }

func (claims) Usage(pvc jsonmap.Object, _ time.Time) List {
	out := List{"persistentvolumeclaims": one(), "count/persistentvolumeclaims": one()}
	class := jsonmap.String(pvc, "metadata", "annotations", "volume.beta.kubernetes.io/storage-class")
	if class == "" {
		class = jsonmap.String(pvc, "spec", "storageClassName")
	}
	if class != "" {
		out[class+storageClassInfix+"persistentvolumeclaims"] = one()
	}
	storage, ok := jsonmap.Quantity(jsonmap.Child(pvc, "spec", "resources", "requests")["storage"])
	if !ok {
		return out
	}
	storage = roundUp(storage)
	// A claim whose expansion is under way uses what was allocated, if
	// more.
	if allocated, ok := jsonmap.Quantity(jsonmap.Child(pvc, "status", "allocatedResources")["storage"]); ok && allocated.Cmp(storage) > 0 {
		storage = roundUp(allocated)
	}
	out["requests.storage"] = storage
	if class != "" {
		out[class+storageClassInfix+"requests.storage"] = storage
	}
	return out
}

// roundUp is q rounded up to a whole number of its unit.
func roundUp(q resource.Quantity) resource.Quantity {
	r := q.DeepCopy()
	r.RoundUp(0)
	return r
}

// A Selector is one scope a quota applies to (spec.scopes, or an entry of
// spec.scopeSelector.matchExpressions).
type Selector struct {
	Scope    string   `json:"scopeName"`
	Operator string   `json:"operator"`
	Values   []string `json:"values,omitempty"`
}

// matches reports whether the labels set, holding the scope's value of
// an object under the scope's name, satisfy sel.
func (sel Selector) matches(set labels.Set) (bool, error) {
	op := map[string]selection.Operator{"In": selection.In, "NotIn": selection.NotIn, "Exists": selection.Exists, "DoesNotExist": selection.DoesNotExist}[sel.Operator]
	if op == "" {
		return false, fmt.Errorf("%q is not a valid scope selector operator", sel.Operator)
	}
	req, err := labels.NewRequirement(sel.Scope, op, sel.Values)
	if err != nil {
		return false, err
	}
	return labels.NewSelector().Add(*req).Matches(set), nil
}

// isExtended reports whether name is an extended resource (one of a
// domain other than kubernetes.io) a pod can request.
func isExtended(name string) bool {
	if !strings.Contains(name, "/") || strings.Contains(name, "kubernetes.io/") || strings.HasPrefix(name, "requests.") {
		return false
	}
	return len(validation.IsQualifiedName("requests."+name)) == 0
}
