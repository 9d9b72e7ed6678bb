package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/store"
)

// DeletionPhase names one step in the life of an object's deletion.
type DeletionPhase string

const (
	// PhaseDeleteRequested: a DELETE reached the object (Options says how).
	PhaseDeleteRequested DeletionPhase = "DeleteRequested"
	// PhaseMarked: the object got its deletionTimestamp and waits for its
	// finalizers (Finalizers) or its grace period.
	PhaseMarked DeletionPhase = "DeletionTimestampSet"
	// PhaseFinalizerRemoved: a write of Actor removed Finalizer.
	PhaseFinalizerRemoved DeletionPhase = "FinalizerRemoved"
	// PhaseRemoved: the object is gone from the store.
	PhaseRemoved DeletionPhase = "Removed"
	// PhaseDependentDeleted and PhaseDependentOrphaned are recorded by the
	// garbage collector on an owner: Dependent was deleted, or lost its
	// owner reference.
	PhaseDependentDeleted  DeletionPhase = "DependentDeleted"
	PhaseDependentOrphaned DeletionPhase = "DependentOrphaned"
)

// ObjectRef names an object.
type ObjectRef struct {
	Resource  schema.GroupResource `json:"resource"`
	Namespace string               `json:"namespace,omitempty"`
	Name      string               `json:"name"`
	UID       string               `json:"uid,omitempty"`
}

// DeletionEvent is one phase of one object's deletion, for the deletion
// journal. Dry-run requests record nothing.
type DeletionEvent struct {
	Time   time.Time     `json:"time"`
	Phase  DeletionPhase `json:"phase"`
	Object ObjectRef     `json:"object"`
	// Revision is the store's revision of the write the phase is (0 for a
	// request, or what the garbage collector records): writes racing each
	// other are journaled as their requests return, so a timeline is kept
	// in the order of the writes, not of their reports.
	Revision int64 `json:"revision,omitempty"`
	// Actor is who made the request: its User-Agent until kubeplay
	// authenticates users.
	Actor   string                `json:"actor,omitempty"`
	Options *metav1.DeleteOptions `json:"options,omitempty"`
	// Finalizers the object holds after this phase (for a namespace, its
	// spec.finalizers too); Finalizer is the one a phase is about.
	Finalizers        []string   `json:"finalizers,omitempty"`
	Finalizer         string     `json:"finalizer,omitempty"`
	DeletionTimestamp string     `json:"deletionTimestamp,omitempty"`
	GracePeriod       *int64     `json:"gracePeriodSeconds,omitempty"`
	Dependent         *ObjectRef `json:"dependent,omitempty"`
	Message           string     `json:"message,omitempty"`
}

type actorKey struct{}

// withActor records who makes a request, for the deletion journal.
func withActor(r *http.Request) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), actorKey{}, r.UserAgent()))
}

func actorOf(ctx context.Context) string {
	a, _ := ctx.Value(actorKey{}).(string)
	return a
}

// journal fills in ev from obj and hands it to the observer, if any.
func (s *registry) journal(ctx context.Context, rs *resourceStore, obj object, ev DeletionEvent) {
	if s.onDeletion == nil || ev.Options != nil && len(ev.Options.DryRun) > 0 {
		return
	}
	md := metadata(obj)
	ev.Time = s.now()
	ev.Object = ObjectRef{Resource: rs.res.GroupResource(), Namespace: str(md, "namespace"), Name: str(md, "name"), UID: str(md, "uid")}
	ev.Actor = actorOf(ctx)
	ev.Finalizers = allFinalizers(rs.strategy, obj)
	ev.DeletionTimestamp = str(md, "deletionTimestamp")
	if g, ok := md["deletionGracePeriodSeconds"]; ok {
		n := int64Of(g)
		ev.GracePeriod = &n
	}
	s.onDeletion(ev)
}

// allFinalizers is what holds obj back: metadata.finalizers and, for a
// namespace, spec.finalizers.
func allFinalizers(st *strategy, obj object) []string {
	out := finalizers(obj)
	if st.isNamespace {
		out = append(out, namespaceFinalizers(obj)...)
	}
	return out
}

// journalWrite records what the write at revision rev of an object being
// deleted did: each finalizer it removed (compared with the object at
// revision prev) and, if it was the last, the object's removal.
func (s *registry) journalWrite(ctx context.Context, rs *resourceStore, key string, prev, rev int64, obj object, removed bool) {
	if s.onDeletion == nil {
		return
	}
	kv, err := s.store.Get(ctx, key, prev)
	if err != nil {
		return // history compacted: nothing to compare with
	}
	old, err := rs.decode(kv)
	if err != nil {
		return
	}
	now := allFinalizers(rs.strategy, obj)
	for _, f := range allFinalizers(rs.strategy, old) {
		if !slices.Contains(now, f) {
			s.journal(ctx, rs, obj, DeletionEvent{Phase: PhaseFinalizerRemoved, Finalizer: f, Revision: rev})
		}
	}
	if removed {
		s.journal(ctx, rs, obj, DeletionEvent{Phase: PhaseRemoved, Revision: rev})
	}
}

// corruptError is kube-apiserver's answer for an object in the store that
// cannot be decoded. With the AllowUnsafeMalformedObjectDeletion feature
// gate it reports a corrupt object (which the unsafe deletion can remove);
// without, only the decoder's complaint.
func (s *registry) corruptError(kv store.KeyValue, decodeErr error) error {
	if _, ok := decodeErr.(apierrors.APIStatus); ok {
		return decodeErr // a conversion webhook failed: the object is sound
	}
	cause := decodeErr
	if errors.Unwrap(decodeErr) != nil {
		cause = errors.Unwrap(decodeErr)
	}
	var v any
	if err := json.Unmarshal(kv.Value, &v); err != nil {
		cause = err
	}
	msg := "couldn't get version/kind; json parse error: " + cause.Error()
	if !s.enabled(AllowUnsafeMalformedObjectDeletion) {
		return errBareInternal(msg)
	}
	return apierrors.NewInternalError(fmt.Errorf("StorageError: corrupt object, Code: 7, Key: %s, ResourceVersion: 0, AdditionalErrorMsg: object not decodable revision=%d: %s",
		strings.TrimPrefix(kv.Key, "/registry"), kv.ModRevision, msg))
}

// unsafeDeleteObject removes a corrupt object from the store without reading
// it (DeleteOptions.ignoreStoreReadErrorWithClusterBreakingPotential): no
// finalizer, no grace period, no garbage collection; kube-apiserver refuses
// it for an object that can be read.
func (s *registry) unsafeDeleteObject(ctx context.Context, rs *resourceStore, ns, name string) (int, any, error) {
	res, key := rs.res, rs.key(ns, name)
	notCorrupt := apierrors.NewInvalid(schema.GroupKind{Group: res.Group, Kind: res.Resource}, name, field.ErrorList{
		field.Invalid(field.NewPath("ignoreStoreReadErrorWithClusterBreakingPotential"), true, "is exclusively used to delete corrupt object(s), try again by removing this option")})
	kv, err := s.store.Get(ctx, key, 0)
	if errors.Is(err, store.ErrNotFound) {
		return 0, nil, notCorrupt
	}
	if err != nil {
		return 0, nil, storeError(res, name, err)
	}
	if _, err := rs.decode(kv); err == nil {
		return 0, nil, notCorrupt
	}
	rev, _, err := s.store.Delete(ctx, key, kv.ModRevision)
	if err != nil {
		return 0, nil, storeError(res, name, err)
	}
	s.journal(ctx, rs, object{"metadata": map[string]any{"namespace": ns, "name": name}},
		DeletionEvent{Phase: PhaseRemoved, Revision: rev, Message: "corrupt object deleted unsafely (ignoreStoreReadErrorWithClusterBreakingPotential)"})
	return http.StatusOK, &metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusSuccess, Code: http.StatusOK,
		Details: &metav1.StatusDetails{Name: name, Group: res.Group, Kind: res.Kind},
	}, nil
}

// PlantUndecodable stores value, which need not be a valid object, as the
// object ns/name of resource gvr, replacing what is there. It lets a
// playground show what a corrupt object does to reads, and its unsafe
// deletion; nothing a client sends can do this.
func (s *Server) PlantUndecodable(ctx context.Context, gvr schema.GroupVersionResource, ns, name string, value []byte) error {
	res := s.catalog.Lookup(gvr)
	if res == nil {
		return fmt.Errorf("server: %s is not served", gvr)
	}
	return s.reg.storeRaw(ctx, objectKey(res, ns, name), value)
}
