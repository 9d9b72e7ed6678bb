package server

import (
	"context"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"kubeplay/server/catalog"
	"kubeplay/server/validation"
)

// A strategy is what is true of one resource's writes and reads beyond
// what the generic registry does for every resource, as kube-apiserver's
// rest strategy for the type says it. The facts of the plain resources sit
// in one table per API group (strategies_<group>.go); a resource with
// behaviour of its own has a file of its own (strategy_<resource>.go). A
// resource without an entry has the zero strategy.
type strategy struct {
	// createOnUpdate: a PUT of a missing object creates it (else 404).
	createOnUpdate bool
	// coreInternalType: kube-apiserver keeps the type as the core group's
	// (events.k8s.io's Event is core's), so its 422s name the kind
	// without a group.
	coreInternalType bool
	// conditionalUpdate: an update must name the resourceVersion it
	// replaces (else 422).
	conditionalUpdate bool
	// tracksGeneration: metadata.generation is 1 on create and grows when
	// anything but metadata and status changes.
	tracksGeneration bool
	// annotationsAreDesiredState: a change of annotations outside the
	// status subresource grows the generation too.
	annotationsAreDesiredState bool
	// keepsStatusOnCreate: a new object keeps the status it was given
	// (else it starts with the type's empty status).
	keepsStatusOnCreate bool
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
	// updateSkipsMetadataChanges: the type's update validation checks the
	// object as new only, not what changed in its metadata; its label and
	// domainless finalizer errors are then reported once less.
	updateSkipsMetadataChanges bool
	// genericFinalizerNames: the type's group validates metadata with the
	// generic rules only, without the core group's rule that a finalizer
	// without a domain be a standard one.
	genericFinalizerNames bool
	// admitChecksName: the type's admit hook checks the name of a new
	// object with the rest of it, so the generic check reports nothing.
	admitChecksName bool
	// subresources are the subresources besides status and scale that are
	// views of the stored object, written through the generic update (a
	// namespace's finalize, a CSR's approval, a pod's ephemeralcontainers
	// and resize).
	subresources []string
	// recordsSent: an update through one of subresources records in
	// managedFields what the client sent, before prepareForUpdate drops
	// what that subresource may not change (kube-apiserver resets no
	// fields for a pod's ephemeralcontainers and resize).
	recordsSent bool
	// mapSelector: the type's spec.selector is a map of labels (a
	// ReplicationController's), not a LabelSelector; its Scale renders it
	// as the selector of those labels.
	mapSelector bool
	// podSecurity, when set, is where the PodSecurity admission plugin
	// finds the pod an object is or holds (see podSecurityTarget).
	podSecurity *podSecurityTarget
	// isNamespace: the object is a namespace, which admission sees as in
	// itself, and whose spec.finalizers hold it back from deletion too.
	isNamespace bool
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

	// The hooks, nil where the type has nothing of its own.

	// normalize does what decoding the type does beyond its defaults.
	normalize func(obj object)
	// prepareForCreate sets what a new object starts with.
	prepareForCreate func(obj object)
	// readBack does to a new object, once validated, what decoding it
	// back from storage does (kube-apiserver answers and serves what it
	// decodes).
	readBack func(obj object)
	// prepareForCreateBy sets what a new object records of its request
	// (the user asking).
	prepareForCreateBy func(ctx context.Context, obj object)
	// prepareForUpdate carries over what an update of subresource ("" for
	// the main resource) cannot change.
	prepareForUpdate func(subresource string, obj, old object)
	// statusOnly is the object an update of the status subresource
	// writes, where the type's rules are not statusOnly's.
	statusOnly func(rs *resourceStore, obj, old object) object
	// writeThrough, when set, is what an update through a subresource that
	// writes part of the status (/status, a CSR's /approval) writes of the
	// object sent, after statusOnly, given the stored object and the time.
	writeThrough func(subresource string, obj, old object, now time.Time) object
	// validate checks what the type requires of a new object
	// (kube-apiserver's Validate).
	validate func(obj validation.Object) field.ErrorList
	// validateUpdate checks an update of the main resource: what may not
	// change, and most often the object as new (ValidateUpdate).
	validateUpdate func(obj, old validation.Object) field.ErrorList
	// validateSubresource checks an update of a subresource other than
	// scale (a namespace's /status and /finalize, a CSR's /status and
	// /approval).
	validateSubresource func(subresource string, obj, old object) field.ErrorList
	// admitNew runs the default mutating admission plugins on a new
	// object in namespace ns; validate is their validating phase, which
	// runs podSecurity, the PodSecurity plugin's, in its place among them.
	admitNew func(s *admission, ctx context.Context, res *catalog.Resource, ns string, obj object) (validate func(podSecurity func() error) error, err error)
	// authorizeWrite checks that the request's user may write obj (old nil
	// on create), after mutating admission and before validation: RBAC's
	// escalation check on roles and bindings.
	authorizeWrite func(a *admission, ctx context.Context, req *request, obj, old object) error
	// admitUpdate runs the default mutating admission plugins on an update
	// of the main resource, old the stored object.
	admitUpdate func(obj, old object)
	// admitChange runs the default validating admission plugins on an
	// update of the main resource or of a subresource (req.subresource),
	// old the stored object, before those of every resource.
	admitChange func(s *admission, ctx context.Context, req *request, obj, old object) error
	// admit checks, and may default, an object about to be written (old
	// nil on create) against rules that are not the built-in types'
	// validation: a CRD's and its objects' schemas.
	admit func(s *registry, ctx context.Context, req *request, obj, old object) error
	// allocate gives a new object (old nil) or an update of the main
	// resource what the type allocates among its objects (a Service's
	// cluster IP and node ports), after admission, before it is stored.
	allocate func(s *registry, ctx context.Context, rs *resourceStore, ns, name string, obj, old object, dryRun bool) error
	// afterWrite does what follows from a stored write at once, as
	// kube-apiserver's own controllers do.
	afterWrite func(s *registry, ctx context.Context, res *catalog.Resource, obj object) error

	// afterDelete does what follows from a request's deletions (not run
	// for each object, so that it may delete objects itself).
	afterDelete func(s *registry, ctx context.Context, res *catalog.Resource) error
	// admitDelete is the admission of a DELETE of the object found.
	admitDelete func(ctx context.Context, res *catalog.Resource, name string) error
	// deletePreconditions replaces the generic check of a DELETE's
	// preconditions, where the type's registry words it otherwise.
	deletePreconditions func(res *catalog.Resource, name string, md map[string]any, pre *metav1.Preconditions) error
	// markDeleted replaces the generic deletion: the object is only ever
	// marked, and its own machinery removes it.
	markDeleted func(s *registry, ctx context.Context, d *deletion) (int, any, error)
	// gracefulDelete sets the grace period of a deletion (see
	// deletion.graceful).
	gracefulDelete func(d *deletion, now time.Time) (done bool)
}

// strategies returns the built-in resources' strategies, by group resource,
// made at the first call: their tables were two thirds of the package's
// initialisation, which the engine's start in a browser waited for. It is
// set in init, as their hooks reach back to what reads them.
var strategies func() map[schema.GroupResource]*strategy

// noStrategy is the strategy of a resource without an entry.
var noStrategy strategy

func init() {
	strategies = sync.OnceValue(func() map[schema.GroupResource]*strategy {
		all := map[schema.GroupResource]*strategy{}
		for _, g := range []map[schema.GroupResource]strategy{coreStrategies(), appsStrategies(), batchStrategies(), rbacStrategies(), otherStrategies()} {
			for gr, st := range g {
				all[gr] = &st
			}
		}
		return all
	})
}

// strategyOf returns r's strategy, which nothing may modify. A write reads
// it from its request's resourceStore instead.
func strategyOf(r *catalog.Resource) *strategy {
	if r.Custom != nil {
		return &customStrategy
	}
	if st, ok := strategies()[r.GroupResource()]; ok {
		return st
	}
	return &noStrategy
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
