package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/netip"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/validate/content"
	"k8s.io/apimachinery/pkg/util/uuid"
	k8svalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/server/authz"
	"kubeplay/server/catalog"
	"kubeplay/server/defaults"
	"kubeplay/server/encoding"
	"kubeplay/server/fieldmanager"
	"kubeplay/server/openapi"
	"kubeplay/server/validation"
	"kubeplay/store"
)

// registry is the generic registry store: the one create and the one
// update every write goes through, whatever its handler (POST, PUT, the
// three patch types, apply), the one deletion, and the reads (get, list,
// watch). It alone holds the store. A handler parses the request into a
// write and, for an update, a compute function that makes the new object
// from the live one; the registry admits, validates, records managedFields
// and stores, asking the resource's strategy what differs by type.
type registry struct {
	store   store.Store
	catalog *catalog.Catalog
	// openapi is told the schemas of the custom resources the registry
	// establishes.
	openapi *openapi.Handler
	now     func() time.Time
	// enabled reports whether a feature gate is on (Server.enabled).
	enabled func(gate string) bool
	// fields are the field managers of the built-in types and, once
	// asked for, of each custom resource.
	fields fieldmanager.Managers
	// customTypes holds the type converter of each custom resource
	// (*catalog.Custom -> managedfields.TypeConverter).
	customTypes sync.Map
	// authz authorizes what admission asks beyond the request: RBAC's
	// escalation check, the create of a PUT or apply that creates, the
	// authorizer policies see.
	authz *authz.Authorizer
	// onDeletion: see Options.OnDeletion.
	onDeletion func(DeletionEvent)
	// noWebhookCalls: see Options.NoWebhookCalls.
	noWebhookCalls bool
	admission      *admission
}

// newRegistry returns the registry of opts.Store, serving the types of
// cat, which tells docs the schemas of the custom ones.
func newRegistry(opts Options, cat *catalog.Catalog, docs *openapi.Handler, now func() time.Time, enabled func(gate string) bool) *registry {
	reg := &registry{store: auditedStore{opts.Store}, catalog: cat, openapi: docs, now: now, enabled: enabled,
		onDeletion: opts.OnDeletion, noWebhookCalls: opts.NoWebhookCalls}
	reg.admission = &admission{registry: reg, noServiceAccountAdmission: opts.NoServiceAccountAdmission, podSecurity: opts.PodSecurity}
	if reg.admission.podSecurity == nil {
		reg.admission.podSecurity = defaultPodSecurity()
	}
	return reg
}

// admission is the admission chain the registry runs on every write, in
// kube-apiserver's fixed order (admitCreate; for an update, the registry's
// commitChange, which records managedFields between its steps;
// admitDeletion): the mutating plugins of the resource's strategy, the
// mutating webhooks, the type's own authorization of the write (RBAC's
// escalation check), the type's validation, then the validating plugins,
// ValidatingAdmissionPolicies, the validating webhooks and ResourceQuota
// (admitValidating). Its plugins read what they need through the registry
// it belongs to (ResourceQuota also writes the quotas' usage through it).
type admission struct {
	*registry
	// policies holds the compiled ValidatingAdmissionPolicies by name
	// (*compiledPolicy).
	policies sync.Map
	quotaMu  sync.Mutex // serializes quota admission (admitQuota)
	// noServiceAccountAdmission: see Options.NoServiceAccountAdmission.
	noServiceAccountAdmission bool
	// emulatedMinor is the minor version of the release the server
	// emulates (Server.Version), whose checks PodSecurity's "latest" are;
	// podSecurityEvaluators holds them by that version (policy.Evaluator).
	emulatedMinor         func() int
	podSecurityEvaluators sync.Map
	// podSecurity: see Options.PodSecurity (never nil here).
	podSecurity *PodSecurityConfiguration
}

// A write is one create, update or patch as its handler parsed it.
type write struct {
	*request
	manager string
	dryRun  bool
	// applied says the compute function recorded the object's
	// managedFields (Server-Side Apply, a write through /scale): the
	// registry records nothing more.
	applied bool
	// createsMissing says a missing object is created from what compute
	// makes of nothing (a PUT of a type that allows it, an apply).
	createsMissing bool
	// view, when set, is what admission (webhooks and policies) sees of
	// the objects written, and fromView writes back into the object what a
	// mutating webhook changed in its view: the Scales of a write through
	// /scale, and their replicas.
	view     func(obj object) object
	fromView func(obj, view object)
	// fieldManager records the write's managedFields (trackWrite), resolved
	// at its first use.
	fieldManager *fieldmanager.FieldManager
	// stored is what a create stored (its Value nil until then, and for a
	// dry run): the answer is sent from it when it is sent as stored.
	stored store.KeyValue
}

// maxUpdateAttempts bounds how often an update is recomputed when the
// object changed between reading and writing it, as kube-apiserver retries.
const maxUpdateAttempts = 5

// errRetry says the object changed while an update was computed on it.
var errRetry = errors.New("object changed during the update")

// updateWith is the one update. compute makes the new object from the live
// one (nil when it is missing and wr creates it); when the object changed
// before the new one was stored, it is read again and compute runs again,
// so a write that named no resourceVersion wins, one that named it gets
// its 409 from compute.
func (s *registry) updateWith(ctx context.Context, wr *write, compute func(live object, rev int64) (object, error)) (object, int, error) {
	for attempt := 1; ; attempt++ {
		live, kv, err := s.getLive(ctx, wr.store, wr.namespace, wr.name)
		creating := apierrors.IsNotFound(err) && wr.createsMissing && wr.subresource == ""
		if err != nil && !creating {
			return nil, 0, err
		}
		obj, err := compute(live, kv.ModRevision)
		if err != nil {
			return nil, 0, err
		}
		out, code := object(nil), http.StatusOK
		if creating {
			out, err = s.createWith(ctx, wr, obj)
			code = http.StatusCreated
			if apierrors.IsAlreadyExists(err) {
				err = errRetry // created meanwhile: update it instead
			}
		} else {
			out, err = s.commitChange(ctx, wr, obj, live, kv)
		}
		if errors.Is(err, errRetry) {
			if attempt < maxUpdateAttempts {
				continue
			}
			err = storeError(wr.res, wr.name, store.ErrConflict)
		}
		return out, code, err
	}
}

// checkResourceVersion answers 409 when obj names a resourceVersion other
// than rev, the live object's.
func checkResourceVersion(wr *write, obj object, rev int64) error {
	if v := str(metadata(obj), "resourceVersion"); v != "" && v != strconv.FormatInt(rev, 10) {
		return storeError(wr.res, wr.name, store.ErrConflict)
	}
	return nil
}

// errUIDPrecondition is the 409 for an update whose metadata.uid names
// another object than the one stored under its name.
func (rs *resourceStore) errUIDPrecondition(ns, name, uid, stored string) error {
	return apierrors.NewConflict(rs.res.GroupResource(), name, errors.New(fmt.Sprintf(
		"StorageError: invalid object, Code: 4, Key: %s, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: %s, UID in object meta: %s",
		rs.key(ns, name), uid, stored)))
}

// errUIDChanged is kube-apiserver's 422 for a patch that changes
// metadata.uid; it checks object metadata twice and so names the field twice.
func (rs *resourceStore) errUIDChanged(name, uid string) error {
	e := field.Invalid(field.NewPath("metadata", "uid"), uid, "field is immutable")
	return rs.errInvalid(name, field.ErrorList{e, e})
}

// commitChange admits obj, computed from live (stored as kv), and stores it
// in live's place, in kube-apiserver's order.
func (s *registry) commitChange(ctx context.Context, wr *write, obj, live object, kv store.KeyValue) (object, error) {
	rs, st := wr.store, wr.store.strategy
	if err := rs.applyDefaults(obj); err != nil {
		return nil, err
	}
	sent := obj
	// What the subresource does not write is checked as stored.
	obj = s.subresourceWrite(wr.request, obj, live)
	if st.admit != nil {
		if err := st.admit(s, ctx, wr.request, obj, live); err != nil {
			return nil, err
		}
	}
	if st.admitUpdate != nil && wr.subresource == "" {
		st.admitUpdate(obj, live)
	}
	var unmutated object
	if wr.view != nil {
		if err := s.admission.admitMutatingView(ctx, wr, obj, live); err != nil {
			return nil, err
		}
	} else {
		var err error
		if unmutated, err = s.admission.admitMutatingWebhooks(ctx, wr.request, obj, live, wr.dryRun, s.recordedManagedFields(wr, live, obj)); err != nil {
			return nil, err
		}
	}
	if err := s.admission.authorizeWrite(ctx, wr.request, obj, live); err != nil {
		return nil, err
	}
	if errs, err := rs.validateUpdate(ctx, wr.subresource, obj, live); err != nil {
		return nil, err
	} else if len(errs) > 0 {
		return nil, rs.errInvalid(wr.name, errs)
	}
	// A pod's ephemeralcontainers and resize record in managedFields what
	// the client sent, before the strategy drops what they may not change
	// (kube-apiserver resets no fields for them).
	recordsSent := st.recordsSent && slices.Contains(st.subresources, wr.subresource)
	if !recordsSent {
		// After the validation, which compares what the client sent with the
		// stored object (a changed deletionGracePeriodSeconds, say).
		obj = s.prepareUpdate(wr.request, obj, live)
	}
	if !wr.applied {
		// managedFields are recorded on the object as the request made it:
		// before mutating webhooks (what they changed is nobody's), with
		// the metadata a status write sent.
		recorded := obj
		if unmutated != nil {
			recorded = s.prepareUpdate(wr.request, unmutated, live)
		}
		tracked, err := s.trackWrite(wr, live, withSentMetadata(wr.request, recorded, sent))
		if err != nil {
			return nil, err
		}
		if mf, ok := metadata(tracked)["managedFields"]; ok {
			metadata(obj)["managedFields"] = mf
		} else {
			delete(metadata(obj), "managedFields")
		}
	}
	if recordsSent {
		obj = s.prepareUpdate(wr.request, obj, live)
	}
	admitted, was := obj, live
	if view := wr.view; view != nil {
		admitted, was = view(obj), view(live)
	}
	if st.admitChange != nil {
		if err := st.admitChange(s.admission, ctx, wr.request, obj, live); err != nil {
			return nil, err
		}
	}
	if err := s.admission.admitValidating(ctx, wr.request, admitted, was, wr.dryRun); err != nil {
		return nil, err
	}
	if st.allocate != nil && wr.subresource == "" {
		if err := st.allocate(s, ctx, rs, wr.namespace, wr.name, obj, live, wr.dryRun); err != nil {
			return nil, err
		}
	}
	out, err := s.commitUpdate(ctx, rs, wr.namespace, wr.name, obj, kv, wr.dryRun)
	if apierrors.IsConflict(err) {
		return nil, errRetry
	}
	if err != nil {
		return nil, err
	}
	return out, s.afterWrite(ctx, wr, out)
}

// trackWrite records in obj's managedFields what wr's manager changed from
// live (nil for a create) and returns obj.
func (s *registry) trackWrite(wr *write, live, obj object) (object, error) {
	if wr.fieldManager == nil {
		f, err := s.fieldManager(wr.store, wr.subresource)
		if err != nil {
			return nil, err
		}
		wr.fieldManager = f
	}
	return fieldmanager.Update(wr.fieldManager, live, obj, wr.manager), nil
}

// afterWrite runs the strategy's afterWrite on a stored object.
func (s *registry) afterWrite(ctx context.Context, wr *write, obj object) error {
	if hook := wr.store.strategy.afterWrite; hook != nil && !wr.dryRun {
		return hook(s, ctx, wr.res, deepCopyObject(obj))
	}
	return nil
}

// recordedManagedFields gives the managedFields an update of live to obj
// will record (nil: an apply's, already recorded in obj), for mutating
// webhooks to see them as kube-apiserver's see them.
func (s *registry) recordedManagedFields(wr *write, live, obj object) func() (any, error) {
	if wr.applied {
		return nil
	}
	return func() (any, error) {
		tracked, err := s.trackWrite(wr, deepCopyObject(live), s.prepareUpdate(wr.request, deepCopyObject(obj), live))
		if err != nil {
			return nil, err
		}
		return metadata(tracked)["managedFields"], nil
	}
}

// createWith is the one create: of a POST, of a PUT or an apply of a
// missing object.
func (s *registry) createWith(ctx context.Context, wr *write, obj object) (object, error) {
	res, rs, st := wr.res, wr.store, wr.store.strategy
	md := metadata(obj)
	if str(md, "resourceVersion") != "" && !wr.dryRun {
		// kube-apiserver's storage refuses it with a 500 (a dry run never
		// gets there); it is the client's mistake.
		return nil, encoding.BadRequest("resourceVersion should not be set on objects to be created")
	}
	if res.Namespaced {
		if ns := str(md, "namespace"); ns != "" && ns != wr.namespace {
			return nil, encoding.BadRequest("the namespace of the provided object does not match the namespace sent on the request")
		}
		md["namespace"] = wr.namespace
	} else {
		delete(md, "namespace")
	}
	name := str(md, "name")
	if name == "" && str(md, "generateName") != "" {
		name = GenerateName(str(md, "generateName"))
		md["name"] = name
	}
	// NamespaceLifecycle is admission, which kube-apiserver runs before
	// it validates the name.
	if res.Namespaced {
		if err := s.requireNamespace(ctx, res, wr.namespace, name); err != nil {
			return nil, err
		}
	}
	var errs field.ErrorList
	if prefix := str(md, "generateName"); prefix != "" {
		errs = append(errs, validateName(res, maskTrailingDash(prefix), field.NewPath("metadata", "generateName"))...)
	}
	if name == "" {
		errs = append(errs, field.Required(field.NewPath("metadata", "name"), "name or generateName is required"))
	} else {
		errs = append(errs, validateName(res, name, field.NewPath("metadata", "name"))...)
	}
	errs = append(errs, rs.finalizerErrors(ctx, obj)...)
	// These errors join the type's validation's, in one 422 as
	// kube-apiserver's; a type whose admit hook checks the name itself
	// hears only of a missing one, at once.
	if st.admitChecksName {
		if name == "" {
			return nil, rs.errInvalid(name, errs)
		}
		errs = nil
	}
	// As kube-apiserver, the fields are recorded after defaulting and
	// before the type's own rules for new objects.
	if err := rs.applyDefaults(obj); err != nil {
		return nil, err
	}
	if st.admit != nil {
		if err := st.admit(s, ctx, wr.request, obj, nil); err != nil {
			return nil, err
		}
	}
	if !wr.applied {
		var err error
		if obj, err = s.trackWrite(wr, nil, obj); err != nil {
			return nil, err
		}
	}
	if err := s.admission.admitCreate(ctx, wr.request, obj, errs, wr.dryRun); err != nil {
		return nil, err
	}
	if st.readBack != nil {
		st.readBack(obj)
	}
	if st.allocate != nil {
		if err := st.allocate(s, ctx, rs, wr.namespace, name, obj, nil, wr.dryRun); err != nil {
			return nil, err
		}
	}
	if wr.dryRun {
		rs.omitEmpty(obj)
		return obj, nil
	}
	value, err := rs.encode(obj)
	if err != nil {
		return nil, err
	}
	key := rs.key(wr.namespace, name)
	rev, err := s.store.Create(ctx, key, value)
	if err != nil {
		return nil, storeError(res, name, err)
	}
	wr.stored = store.KeyValue{Key: key, Value: value, CreateRevision: rev, ModRevision: rev}
	metadata(obj)["resourceVersion"] = strconv.FormatInt(rev, 10)
	return obj, s.afterWrite(ctx, wr, obj)
}

// commitUpdate writes obj over live, the stored object it was computed
// from. An object being deleted whose last finalizer is gone is deleted
// instead, unless it is still in its grace period (a pod, which its kubelet
// deletes). As kube-apiserver, a write that would store the bytes already
// stored stores nothing: the answer keeps live's resourceVersion and no
// watcher hears of it, so a client that writes back what it read does not
// wake every informer.
func (s *registry) commitUpdate(ctx context.Context, rs *resourceStore, ns, name string, obj object, live store.KeyValue, isDryRun bool) (object, error) {
	res := rs.res
	expected := live.ModRevision
	key := rs.key(ns, name)
	if deleting(obj) && len(allFinalizers(rs.strategy, obj)) == 0 && int64Of(metadata(obj)["deletionGracePeriodSeconds"]) == 0 {
		if !isDryRun {
			rev, _, err := s.store.Delete(ctx, key, expected)
			if err != nil {
				return nil, storeError(res, name, err)
			}
			s.journalWrite(ctx, rs, key, expected, rev, obj, true)
		}
		// kube-apiserver answers with the object at the revision it read,
		// as its Go type encodes it.
		rs.omitEmpty(obj)
		metadata(obj)["resourceVersion"] = strconv.FormatInt(expected, 10)
		return obj, nil
	}
	value, err := rs.encode(obj)
	if err != nil {
		return nil, err
	}
	if isDryRun || bytes.Equal(value, live.Value) {
		// A dry run answers with the revision it would replace.
		metadata(obj)["resourceVersion"] = strconv.FormatInt(expected, 10)
		return obj, nil
	}
	rev, err := s.store.Update(ctx, key, value, expected)
	if err != nil {
		return nil, storeError(res, name, err)
	}
	metadata(obj)["resourceVersion"] = strconv.FormatInt(rev, 10)
	if deleting(obj) {
		s.journalWrite(ctx, rs, key, expected, rev, obj, false)
	}
	return obj, nil
}

// prepareUpdate carries over from old what an update through req cannot
// change: the status for the main resource of a type with a status
// subresource, what a subresource does not write for the others.
func (s *registry) prepareUpdate(req *request, obj, old object) object {
	if !req.store.writesStatus(req.subresource) {
		req.store.prepareForUpdate(req.subresource, obj, old)
		return obj
	}
	return s.subresourceWrite(req, obj, old)
}

// writesStatus reports whether an update through subresource writes (some
// of) the status: through /status, or a subresource the type's strategy
// writes through (a CertificateSigningRequest's /approval).
func (rs *resourceStore) writesStatus(subresource string) bool {
	return subresource == "status" || subresource != "" && rs.strategy.writeThrough != nil
}

// subresourceWrite is what an update through req writes of obj, sent to
// replace old: through a subresource that writes the status, what the
// status strategy says (statusOnly), then what the type's strategy adds.
func (s *registry) subresourceWrite(req *request, obj, old object) object {
	if !req.store.writesStatus(req.subresource) {
		return obj
	}
	obj = req.store.statusOnly(obj, old)
	if through := req.store.strategy.writeThrough; through != nil {
		obj = through(req.subresource, obj, old, s.now())
	}
	return obj
}

// statusOnly is the object an update of the status subresource writes, as
// the type's status strategy says: the new status, the stored spec (and
// whatever else is neither metadata nor status), and the new metadata but
// for what the strategy keeps as stored; or, for the types whose /status
// changes the status alone, the stored object with the new status (and
// the managedFields the field manager computed for the update, or the
// client sent). A strategy's own statusOnly replaces both.
func (rs *resourceStore) statusOnly(obj, old object) object {
	st := rs.strategy
	if st.statusOnly != nil {
		return st.statusOnly(rs, obj, old)
	}
	if !st.statusOnlyStatus {
		out, was := deepCopyObject(obj), deepCopyObject(old)
		for k := range desiredState(out) {
			delete(out, k)
		}
		maps.Copy(out, desiredState(was))
		md, oldMD := metadata(out), metadata(was)
		for _, k := range st.statusIgnoresMetadata {
			if v, ok := oldMD[k]; ok {
				md[k] = v
			} else {
				delete(md, k)
			}
		}
		rs.prepareForUpdate("status", out, old)
		return out
	}
	out := deepCopyObject(old)
	if status, ok := obj["status"]; ok {
		out["status"] = status
	} else {
		delete(out, "status")
	}
	md := metadata(out)
	md["resourceVersion"] = metadata(obj)["resourceVersion"]
	if mf, ok := metadata(obj)["managedFields"]; ok {
		md["managedFields"] = mf
	} else {
		delete(md, "managedFields")
	}
	return out
}

// withSentMetadata is what managedFields record of obj, an update through
// req of the object the client sent: through /status, obj with the
// metadata as sent, which kube-apiserver's field manager sees before the
// status strategy keeps some of it as stored (what it must not record is
// the strategy's resets).
func withSentMetadata(req *request, obj, sent object) object {
	if req.subresource != "status" {
		return obj
	}
	out := maps.Clone(obj)
	md := maps.Clone(metadata(obj))
	for _, k := range statusResetMetadata {
		if v, ok := metadata(sent)[k]; ok {
			md[k] = v
		} else {
			delete(md, k)
		}
	}
	out["metadata"] = md
	return out
}

// applyDefaults does what kube-apiserver's decoding does to an object
// before its field manager records who set what: a namespace's
// kubernetes.io/metadata.name label, a Secret's stringData folded into data,
// the fields Go types hold as structs present, and the built-in types'
// defaults (which read those structs and may add more).
func (rs *resourceStore) applyDefaults(obj object) error {
	gvk := rs.res.GroupVersionKind()
	if err := fieldmanager.Materialize(gvk, obj); err != nil {
		return apierrors.NewInternalError(err)
	}
	defaults.Apply(gvk, obj)
	if err := fieldmanager.Materialize(gvk, obj); err != nil {
		return apierrors.NewInternalError(err)
	}
	if normalize := rs.strategy.normalize; normalize != nil {
		normalize(obj)
	}
	if c := rs.conversion; c != nil && c.DecodesThroughStorage {
		rs.viaStorage(obj)
	}
	return nil
}

// prepareForCreate sets the metadata the server owns on a new object of
// rs, and applies the type's own rules for new objects.
func (s *registry) prepareForCreate(rs *resourceStore, obj object) {
	gvk, st := rs.res.GroupVersionKind(), rs.strategy
	md := metadata(obj)
	for _, k := range []string{"uid", "generation", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "selfLink"} {
		delete(md, k)
	}
	md["uid"] = string(uuid.NewUUID())
	md["creationTimestamp"] = s.now().UTC().Format("2006-01-02T15:04:05Z")
	if st.tracksGeneration {
		md["generation"] = int64(1)
	}
	if _, ok := obj["status"]; ok && rs.hasStatus && !st.keepsStatusOnCreate {
		obj["status"] = fieldmanager.NewObject(gvk)["status"]
	}
	defaults.PrepareForCreate(gvk, obj, s.now())
	if st.prepareForCreate != nil {
		st.prepareForCreate(obj)
	}
}

// prepareForUpdate carries over what an update of subresource ("" for the
// main resource) cannot change and bumps the generation when the object's
// desired state changed.
func (rs *resourceStore) prepareForUpdate(subresource string, obj, old object) {
	st := rs.strategy
	md, oldMD := metadata(obj), metadata(old)
	for _, k := range []string{"uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation"} {
		if v, ok := oldMD[k]; ok {
			md[k] = v
		} else {
			delete(md, k)
		}
	}
	delete(md, "selfLink")
	if rs.hasStatus && subresource != "status" {
		if status, ok := old["status"]; ok {
			obj["status"] = status
		} else {
			delete(obj, "status")
		}
	}
	if st.prepareForUpdate != nil {
		st.prepareForUpdate(subresource, obj, old)
	}
	defaults.PrepareForUpdate(rs.res.GroupVersionKind(), obj, old)
	// A Deployment's annotations once carried rollback requests; they
	// change through /status too, where kube-controller-manager writes them.
	annotationsChanged := st.annotationsAreDesiredState && subresource != "status" && !reflect.DeepEqual(md["annotations"], oldMD["annotations"])
	if st.tracksGeneration && (annotationsChanged || !reflect.DeepEqual(desiredState(obj), desiredState(old))) {
		md["generation"] = generationOf(oldMD) + 1
	}
}

// desiredState is an object without its metadata and status: what a change of
// generation tracks.
func desiredState(obj object) object {
	out := maps.Clone(obj)
	for _, k := range []string{"metadata", "status", "kind", "apiVersion"} {
		delete(out, k)
	}
	return out
}

func generationOf(md map[string]any) int64 { return int64Of(md["generation"]) }

// validateCreate validates a new object, its metadata.uid set: what
// package validation checks of every kind, then the strategy.
func (rs *resourceStore) validateCreate(ctx context.Context, obj object) (field.ErrorList, error) {
	errs, err := validation.Create(ctx, rs.res.GroupVersionKind(), obj)
	if err != nil {
		return nil, err
	}
	if rs.strategy.validate != nil {
		errs = append(errs, rs.strategy.validate(obj)...)
	}
	return errs, nil
}

// validateUpdate checks, before the update is prepared (so against what the
// client sent), what an update of the main resource may not change: no new
// finalizers or grace period on an object being deleted; and the type's
// own rules (see package validation and the strategy's validateUpdate). A
// subresource's update changes only its part, which prepareUpdate takes
// care of, and which the strategy's validateSubresource checks.
func (rs *resourceStore) validateUpdate(ctx context.Context, subresource string, obj, old object) (field.ErrorList, error) {
	r, st := rs.res, rs.strategy
	if subresource != "" {
		if st.validateSubresource == nil {
			return nil, nil
		}
		return st.validateSubresource(subresource, obj, old), nil
	}
	errs := validation.MetadataOnUpdate(obj, !st.updateSkipsMetadataChanges, !st.updateSkipsObjectMeta && r.Custom == nil, r.Custom == nil && !st.genericFinalizerNames)
	if r.Custom != nil {
		rs.finalizerErrors(ctx, obj) // its warnings; the errors are in errs
	}
	errs = append(errs, validateDeletingUpdate(obj, old)...)
	kindErrs, err := validation.Update(ctx, r.GroupVersionKind(), obj, old)
	if err != nil {
		return nil, err
	}
	errs = append(errs, kindErrs...)
	if st.validateUpdate != nil {
		errs = append(errs, st.validateUpdate(obj, old)...)
	}
	return errs, nil
}

// validateDeletingUpdate rejects, on an object being deleted, new
// finalizers and a different deletionGracePeriodSeconds, as kube-apiserver
// does. It checks object metadata twice on update (generic and
// type-specific validation), so it reports each error twice.
func validateDeletingUpdate(obj, old object) field.ErrorList {
	if !deleting(old) {
		return nil
	}
	if g, ok := metadata(obj)["deletionGracePeriodSeconds"]; ok && g != nil && int64Of(g) != int64Of(metadata(old)["deletionGracePeriodSeconds"]) {
		err := field.Invalid(field.NewPath("metadata", "deletionGracePeriodSeconds"), int64Of(g), "field is immutable")
		return field.ErrorList{err, err}
	}
	had := map[string]bool{}
	for _, f := range finalizers(old) {
		had[f] = true
	}
	var added []string
	for _, f := range finalizers(obj) {
		if !had[f] {
			added = append(added, f)
		}
	}
	if len(added) == 0 {
		return nil
	}
	err := field.Forbidden(field.NewPath("metadata", "finalizers"),
		fmt.Sprintf("no new finalizers can be added if the object is being deleted, found new finalizers %#v", added))
	return field.ErrorList{err, err}
}

// finalizerErrors checks a written object's finalizers: qualified names,
// not both cascade finalizers, and for a built-in type of most groups no
// domain-less name but the standard ones (a custom object is only warned).
func (rs *resourceStore) finalizerErrors(ctx context.Context, obj object) field.ErrorList {
	errs := validation.Finalizers(obj)
	switch names := validation.KubeFinalizerNames(obj); {
	case rs.res.Custom != nil:
		for _, e := range names {
			warn(ctx, fmt.Sprintf("%s: %q: prefer a domain-qualified finalizer name including a path (/) to avoid accidental conflicts with other finalizer writers", e.Field, e.BadValue))
		}
	case !rs.strategy.genericFinalizerNames:
		errs = append(errs, names...)
	}
	return errs
}

// validateName checks a name against the rule its type follows, with the
// messages kube-apiserver gives.
func validateName(r *catalog.Resource, name string, path *field.Path) field.ErrorList {
	var msgs []string
	switch catalog.NameRuleOf(r) {
	case catalog.DNSSubdomain:
		msgs = k8svalidation.IsDNS1123Subdomain(name)
	case catalog.LongName:
		msgs = content.IsDNS1123Subdomain(name)
	case catalog.DNSLabel:
		msgs = k8svalidation.IsDNS1123Label(name)
	case catalog.DNS1035Label:
		msgs = k8svalidation.IsDNS1035Label(name)
	case catalog.PathSegment:
		msgs = validation.PathSegmentName(name)
	case catalog.IPAddress:
		if _, err := netip.ParseAddr(name); err != nil {
			msgs = []string{"must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"}
		}
	}
	var errs field.ErrorList
	for _, m := range msgs {
		errs = append(errs, field.Invalid(path, name, m))
	}
	return errs
}

// maskTrailingDash lets a generateName end in "-", as kube-apiserver
// validates a prefix: the name it completes will not.
func maskTrailingDash(prefix string) string {
	if len(prefix) > 1 && strings.HasSuffix(prefix, "-") {
		return prefix[:len(prefix)-1] + "a"
	}
	return prefix
}

// errInvalid is the 422 for an object that failed validation.
func (rs *resourceStore) errInvalid(name string, errs field.ErrorList) error {
	kind := qualifiedKind(rs.res)
	if rs.strategy.coreInternalType {
		kind.Group = ""
	}
	return apierrors.NewInvalid(kind, name, errs)
}

// errInvalid is resourceStore.errInvalid for a caller that holds the
// resource alone.
func errInvalid(r *catalog.Resource, name string, errs field.ErrorList) error {
	return newResourceStore(r).errInvalid(name, errs)
}
