package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"kubeplay/server/audit"
	"kubeplay/server/catalog"
	"kubeplay/server/conversion"
	"kubeplay/server/encoding"
	"kubeplay/server/fieldmanager"
	"kubeplay/store"
)

// The registry's storage: where objects are kept (their keys), how they
// are encoded for the store and decoded from it, the reads of one object,
// the watch, the store's health and revision, the entries that are no API
// object, and the Status errors of the store's.

// watch watches the objects of res in ns (all namespaces when ns is "")
// changed after revision after; store.ErrCompacted when that is no longer
// kept.
func (s *registry) watch(ctx context.Context, res *catalog.Resource, ns string, after int64) (store.Watcher, error) {
	return s.store.Watch(ctx, collectionPrefix(res, ns), after)
}

// currentRevision is the store's revision, 0 when it cannot be read.
func (s *registry) currentRevision(ctx context.Context) int64 {
	rev, _ := s.store.CurrentRevision(ctx)
	return rev
}

// storeHealth is nil when the store answers, else why it does not.
func (s *registry) storeHealth(ctx context.Context) error {
	_, err := s.store.CurrentRevision(ctx)
	return err
}

// ownEntry returns the entry stored under key, one of the server's own
// (the cluster CA, the ServiceAccount signing key) that is no API object.
// A missing one is made by newValue and stored, unless another process
// sharing the store did first (then that one is returned); with no
// newValue, it is store.ErrNotFound.
func (s *registry) ownEntry(ctx context.Context, key string, newValue func() ([]byte, error)) (store.KeyValue, error) {
	kv, err := s.store.Get(ctx, key, 0)
	if !errors.Is(err, store.ErrNotFound) || newValue == nil {
		return kv, err
	}
	value, err := newValue()
	if err != nil {
		return store.KeyValue{}, err
	}
	_, err = s.store.Create(ctx, key, value)
	if errors.Is(err, store.ErrExists) {
		return s.store.Get(ctx, key, 0)
	}
	return store.KeyValue{Key: key, Value: value}, err
}

// storeRaw stores value under key as it is, replacing what is there,
// bypassing everything that makes it an object (see PlantUndecodable).
func (s *registry) storeRaw(ctx context.Context, key string, value []byte) error {
	_, err := s.store.Create(ctx, key, value)
	if errors.Is(err, store.ErrExists) {
		_, err = s.store.Update(ctx, key, value, 0)
	}
	return err
}

// A resourceStore is the registry's store of one resource, as
// kube-apiserver builds its generic registry.Store per resource: where its
// objects are kept (storeKeys), how they are encoded for storage (codec),
// its strategy and whether its status is a subresource, resolved once when
// a request names the resource (request.store). A write asks these of it
// and looks none of them up again.
type resourceStore struct {
	storeKeys
	codec
	strategy *strategy
	// hasStatus: the status is written through a /status subresource, so
	// that writes of the main resource leave it alone.
	hasStatus bool
}

// newResourceStore resolves the store of r.
func newResourceStore(r *catalog.Resource) *resourceStore {
	return &resourceStore{storeKeys: storeKeysOf(r), codec: codecOf(r), strategy: strategyOf(r), hasStatus: hasSubresource(r, "status")}
}

// storeKeys are where a resource's objects are kept: under prefix, by
// namespace if they are namespaced.
type storeKeys struct {
	prefix     string
	namespaced bool
}

func storeKeysOf(r *catalog.Resource) storeKeys {
	return storeKeys{prefix: "/registry/" + catalog.StorageOf(r).Prefix + "/", namespaced: r.Namespaced}
}

// collection is the store key prefix of the objects in ns (all namespaces
// when ns is "").
func (k storeKeys) collection(ns string) string {
	if k.namespaced && ns != "" {
		return k.prefix + ns + "/"
	}
	return k.prefix
}

// key is the store key of the object ns/name.
func (k storeKeys) key(ns, name string) string {
	if !k.namespaced {
		ns = ""
	}
	return k.collection(ns) + name
}

// collectionPrefix is the store key prefix of r's objects in ns (all
// namespaces when ns is "").
func collectionPrefix(r *catalog.Resource, ns string) string { return storeKeysOf(r).collection(ns) }

func objectKey(r *catalog.Resource, ns, name string) string { return storeKeysOf(r).key(ns, name) }

// A codec turns a resource's objects into what is stored and back.
type codec struct {
	res *catalog.Resource
	// conversion converts built-in objects to and from storage, nil for
	// those stored as they are served.
	conversion *conversion.Conversion
	// storageAPIVersion and storageKind are what the objects are stored as.
	storageAPIVersion, storageKind string
}

func codecOf(r *catalog.Resource) codec {
	st := catalog.StorageOf(r)
	return codec{res: r, conversion: conversionOf(r), storageAPIVersion: schemaAPIVersion(st.Group, st.Version), storageKind: st.Kind}
}

// decode turns a stored value into the object served, with its
// resourceVersion filled in from the store revision.
func (c codec) decode(kv store.KeyValue) (object, error) {
	r := c.res
	obj, err := encoding.DecodeObject(encoding.JSON, kv.Value)
	if err != nil {
		return nil, fmt.Errorf("stored object %s is corrupt: %w", kv.Key, err)
	}
	if cr := r.Custom; cr != nil && cr.Convert != nil && str(obj, "apiVersion") != r.APIVersion() {
		// A conversion webhook is called outside any request's context
		// here, bounded by its own timeout.
		if obj, err = cr.Convert(context.Background(), obj, r.APIVersion()); err != nil {
			return nil, err
		}
	}
	c.fromStorage(obj)
	metadata(obj)["resourceVersion"] = strconv.FormatInt(kv.ModRevision, 10)
	return obj, nil
}

// decodeStored turns a stored value into the object served as r (see
// codec.decode).
func decodeStored(r *catalog.Resource, kv store.KeyValue) (object, error) {
	return codecOf(r).decode(kv)
}

// omitEmpty drops from a built-in object, as its Go type does when it is
// encoded, the fields with omitempty that are empty: the answer to a write
// is what was stored.
func (c codec) omitEmpty(obj object) {
	if c.res.Custom == nil {
		_ = fieldmanager.OmitEmpty(c.res.GroupVersionKind(), obj) // an error means the embedded schemas are broken
	}
}

// encode serialises obj in the storage version, without the
// resourceVersion (which is the store's revision). Its error is an API
// error.
func (c codec) encode(obj object) ([]byte, error) {
	r := c.res
	c.omitEmpty(obj)
	if cr := r.Custom; cr != nil && cr.Convert != nil && cr.StorageVersion != r.Version {
		return c.encodeConverted(obj)
	}
	if r.Custom != nil && r.Custom.StorageVersion != r.Version {
		// Stored in another version, what that version's schema does not
		// know is dropped, in obj too: as kube-apiserver's, the answer is
		// what was stored (after managedFields recorded what was sent).
		r.Custom.StorageSchema.Prune(obj)
	}
	stored := c.toStorage(obj)
	delete(metadata(stored), "resourceVersion")
	value, err := encoding.MarshalObject(stored)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	return value, nil
}

// encodeConverted is encode for a custom resource whose CRD has a
// conversion webhook: the webhook converts obj to the storage version, and
// what was stored back, for the answer (in obj), as kube-apiserver answers
// what it stored.
func (c codec) encodeConverted(obj object) ([]byte, error) {
	r := c.res
	sent := deepCopyObject(obj)
	sent["apiVersion"], sent["kind"] = r.APIVersion(), r.Kind
	delete(metadata(sent), "resourceVersion")
	stored, err := r.Custom.Convert(context.Background(), sent, c.storageAPIVersion)
	if err != nil {
		return nil, err
	}
	r.Custom.StorageSchema.Prune(stored)
	value, err := encoding.MarshalObject(stored)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	back, err := r.Custom.Convert(context.Background(), deepCopyObject(stored), r.APIVersion())
	if err != nil {
		return nil, err
	}
	c.fromStorage(back)
	replaceObject(obj, back)
	return value, nil
}

// toStorage returns obj in the storage encoding. It never modifies obj:
// the result is a copy at the top level and in metadata, and a deep copy
// when a conversion applies.
func (c codec) toStorage(obj object) object {
	out := maps.Clone(obj)
	out["metadata"] = maps.Clone(metadata(obj))
	if c.conversion != nil {
		out = deepCopyObject(out)
		c.conversion.ToStorage(out)
	}
	out["apiVersion"] = c.storageAPIVersion
	out["kind"] = c.storageKind
	return out
}

// fromStorage converts a freshly decoded stored object, in place, to the
// resource's version. As kube-apiserver, a custom object is read through
// its version's schema as it is now: what it does not know is dropped, its
// defaults are set.
func (c codec) fromStorage(obj object) {
	r := c.res
	if r.Custom != nil {
		r.Custom.Schema.Prune(obj)
		r.Custom.Schema.ApplyDefaults(obj)
	} else if c.conversion != nil {
		c.conversion.FromStorage(obj)
	}
	obj["apiVersion"] = r.APIVersion()
	obj["kind"] = r.Kind
}

// viaStorage converts obj, in place, to the storage version and back, as
// kube-apiserver decodes a request of a version it does not store into its
// internal type before the field manager sees it: the object then holds
// the other version's defaults and what the conversion carries (HPA v1's
// annotations), which its managedFields record. obj's metadata map stays
// the same map.
func (c codec) viaStorage(obj object) {
	back := c.toStorage(obj)
	c.fromStorage(back)
	replaceObject(obj, back)
}

// storeError turns a store error on an object into the Status kube-apiserver gives.
func storeError(r *catalog.Resource, name string, err error) error {
	gr := r.GroupResource()
	switch {
	case errors.Is(err, store.ErrNotFound):
		return apierrors.NewNotFound(gr, name)
	case errors.Is(err, store.ErrExists):
		return apierrors.NewAlreadyExists(gr, name)
	case errors.Is(err, store.ErrConflict):
		return storeConflict{apierrors.NewConflict(gr, name, errors.New(registryConflictMessage))}
	case errors.Is(err, store.ErrCompacted):
		return apierrors.NewResourceExpired("The resourceVersion for the provided watch is too old.")
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return apierrors.NewTimeoutError("request did not complete within requested timeout - context canceled", 0)
	}
	return apierrors.NewInternalError(err)
}

// storeConflict is the 409 of a write that lost its compare-and-swap to a
// concurrent one. It unwraps to store.ErrConflict, so that a request that
// may simply try again (kube-apiserver retries deletes) can tell it from a
// failed precondition, which is a 409 too.
type storeConflict struct{ *apierrors.StatusError }

const registryConflictMessage = "the object has been modified; please apply your changes to the latest version and try again"

// get reads the object ns/name of rs.
func (s *registry) get(ctx context.Context, rs *resourceStore, ns, name string) (object, store.KeyValue, error) {
	kv, err := s.store.Get(ctx, rs.key(ns, name), 0)
	if err != nil {
		return nil, kv, storeError(rs.res, name, err)
	}
	obj, err := rs.decode(kv)
	if err != nil {
		return nil, kv, s.corruptError(kv, err)
	}
	return obj, kv, nil
}

// getObject is get for a caller that holds the resource alone.
func (s *registry) getObject(ctx context.Context, res *catalog.Resource, ns, name string) (object, store.KeyValue, error) {
	return s.get(ctx, newResourceStore(res), ns, name)
}

// getStored is getObject for an answer sent as stored.
func (s *registry) getStored(ctx context.Context, res *catalog.Resource, ns, name string) (storedObject, error) {
	kv, err := s.store.Get(ctx, objectKey(res, ns, name), 0)
	if err != nil {
		return storedObject{}, storeError(res, name, err)
	}
	o, err := readStored(res, kv)
	if err != nil {
		return o, s.corruptError(kv, err)
	}
	return o, nil
}

// requireNamespace is the NamespaceLifecycle admission plugin: the
// namespace of a new object must exist and not be being deleted.
func (s *registry) requireNamespace(ctx context.Context, res *catalog.Resource, ns, name string) error {
	return audit.FromContext(ctx).Ran(audit.Stage{Phase: audit.Mutating, Plugin: "NamespaceLifecycle"}, s.namespaceLifecycle(ctx, res, ns, name))
}

func (s *registry) namespaceLifecycle(ctx context.Context, res *catalog.Resource, ns, name string) error {
	nsRes := catalog.LookupBuiltin(namespacesGVR)
	kv, err := s.store.Get(ctx, objectKey(nsRes, "", ns), 0)
	if err != nil {
		return storeError(nsRes, ns, err)
	}
	// Every create reads its namespace: a namespace whose stored JSON does
	// not name a deletion timestamp is not decoded at all, and otherwise
	// only the deletion timestamp is.
	if !bytes.Contains(kv.Value, []byte(`"deletionTimestamp"`)) {
		return nil
	}
	var stored struct {
		Metadata struct {
			DeletionTimestamp any `json:"deletionTimestamp"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(kv.Value, &stored); err != nil {
		return s.corruptError(kv, fmt.Errorf("stored object %s is corrupt: %w", kv.Key, err))
	}
	if stored.Metadata.DeletionTimestamp != nil {
		err := apierrors.NewForbidden(res.GroupResource(), name,
			fmt.Errorf("unable to create new content in namespace %s because it is being terminated", ns))
		err.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: "NamespaceTerminating", Field: "metadata.namespace", Message: "namespace " + ns + " is being terminated"}}
		return err
	}
	return nil
}

// getLive reads the object a write changes, shaped as kube-apiserver's Go
// types shape what it reads (see applyDefaults): a field the stored JSON
// lacks but the new object has by default is then no change of anyone's.
func (s *registry) getLive(ctx context.Context, rs *resourceStore, ns, name string) (object, store.KeyValue, error) {
	obj, kv, err := s.get(ctx, rs, ns, name)
	if err != nil {
		return nil, kv, err
	}
	if err := rs.applyDefaults(obj); err != nil {
		return nil, kv, err
	}
	return obj, kv, nil
}

func (e storeConflict) Unwrap() error { return store.ErrConflict }
