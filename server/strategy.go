package server

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/server/catalog"
	"kubeplay/server/validation"
)

// A strategy is what is true of one resource's writes and reads beyond
// what the generic registry does for every resource, as kube-apiserver's
// rest strategy for the type says it. The strategies live in one file per
// API group (strategies_<group>.go); a resource without an entry has the
// zero strategy but for defaultStrategy's facts.
type strategy struct {
	// createOnUpdate: a PUT of a missing object creates it (else 404).
	createOnUpdate bool
	// conditionalUpdate: an update must name the resourceVersion it
	// replaces (else 422).
	conditionalUpdate bool
	// tracksGeneration: metadata.generation is 1 on create and grows when
	// anything but metadata and status changes.
	tracksGeneration bool
	// orphansByDefault: a DELETE naming no propagation policy orphans the
	// dependents (kept for old clients) instead of deleting them in the
	// background.
	orphansByDefault bool
	// returnsDeletedObject: a DELETE answers with the object, not a Status.
	returnsDeletedObject bool
	// selectableFields, when set, are the fields a field selector may use
	// besides metadata.name (see fieldsOf).
	selectableFields map[string]selectableField
	// updateSkipsObjectMeta: the type's update validation checks only
	// what changed, not the whole object as new; its metadata errors are
	// then reported once less (see validation.MetadataOnUpdate).
	updateSkipsObjectMeta bool
	// genericFinalizerNames: the type's group validates metadata with the
	// generic rules only, without the core group's rule that a finalizer
	// without a domain be a standard one.
	genericFinalizerNames bool
	// validate, if set, checks what the type requires of a new object
	// (kube-apiserver's Validate).
	validate func(obj validation.Object) field.ErrorList
	// validateUpdate, if set, checks an update of the main resource: what
	// may not change, and most often the object as new (ValidateUpdate).
	validateUpdate func(obj, old validation.Object) field.ErrorList
	// validateSubresource, by subresource, checks an update of it (the
	// object as the subresource's update makes it).
	validateSubresource map[string]func(obj, old validation.Object) field.ErrorList
}

// strategies are the built-in resources' strategies, by group resource.
var strategies = mergeStrategies(coreStrategies, appsStrategies, batchStrategies, rbacStrategies, otherStrategies)

func mergeStrategies(groups ...map[schema.GroupResource]strategy) map[schema.GroupResource]strategy {
	out := map[schema.GroupResource]strategy{}
	for _, g := range groups {
		for gr, st := range g {
			out[gr] = st
		}
	}
	return out
}

// customStrategy is the strategy of every custom resource: generations
// tracked, updates conditional.
var customStrategy = strategy{tracksGeneration: true, conditionalUpdate: true}

// strategyOf returns r's strategy.
func strategyOf(r *catalog.Resource) strategy {
	if r.Custom != nil {
		return customStrategy
	}
	return strategies[r.GroupResource()]
}

// validateCreate validates a new object of r, its metadata.uid set: what
// package validation checks of every kind, then r's strategy.
func validateCreate(ctx context.Context, r *catalog.Resource, obj object) (field.ErrorList, error) {
	errs, err := validation.Create(ctx, r.GroupVersionKind(), obj)
	if err != nil {
		return nil, err
	}
	if st := strategyOf(r); st.validate != nil {
		errs = append(errs, st.validate(obj)...)
	}
	return errs, nil
}
