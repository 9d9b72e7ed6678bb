package server

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"kubeplay/server/catalog"
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
	// statusOnlyStatus: a write through /status changes the status alone
	// (and the managedFields that track it); the rest stays as stored.
	statusOnlyStatus bool
	// statusIgnoresMetadata are the metadata fields a write through /status
	// leaves as stored; it changes every other (the spec never).
	statusIgnoresMetadata []string
	// resets are the fields, by subresource ("" for the main resource),
	// whose changes managedFields do not record besides the status through
	// the main resource and the spec through /status (kube-apiserver's
	// strategies' reset fields). They need not be what a write ignores: a
	// custom resource's /status ignores the metadata yet records its
	// changes, a CustomResourceDefinition's keeps them unrecorded.
	resets map[string][]fieldpath.Path
	// prepareCreate, when set, is the type's own preparation of a new
	// object, which needs the request (its user).
	prepareCreate func(ctx context.Context, obj object)
	// prepareSubresourceWrite, when set, is what an update through a
	// subresource writes of the object sent (after the generic rules of
	// /status), given the stored object and the time.
	prepareSubresourceWrite func(sub string, obj, old object, now time.Time) object
	// validateSubresourceWrite, when set, checks an update through a
	// subresource.
	validateSubresourceWrite func(sub string, obj, old object) field.ErrorList
}

// onStatus are resets of /status.
func onStatus(paths ...fieldpath.Path) map[string][]fieldpath.Path {
	return map[string][]fieldpath.Path{"status": paths}
}

// statusResetMetadata are the metadata fields the status strategies that
// reset the object's metadata leave as stored (kube-apiserver's
// ResetObjectMetaForStatus; deletionTimestamp and generation no update
// changes anyway).
var statusResetMetadata = []string{"labels", "annotations", "finalizers", "ownerReferences"}

// metadataPath is the whole of an object's metadata, which the status
// strategies that reset it leave unrecorded.
var metadataPath = fieldpath.MakePathOrDie("metadata")

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
// tracked, updates conditional, /status writes the status alone.
var customStrategy = strategy{tracksGeneration: true, conditionalUpdate: true, statusOnlyStatus: true}

// strategyOf returns r's strategy.
func strategyOf(r *catalog.Resource) strategy {
	if r.Custom != nil {
		return customStrategy
	}
	return strategies[r.GroupResource()]
}
