package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"kubeplay/server/catalog"
	"kubeplay/store"
)

// The registry's deletion, as kube-apiserver's generic registry's: an
// object that finalizers or a grace period hold is marked, the others
// removed; the garbage collector's finalizers are set by the propagation
// policy; a strategy may mark objects itself (markDeleted) or give them a
// grace period (gracefulDelete).

// gcFinalizers computes the finalizers obj gets on DELETE with opts: an
// explicit orphanDependents or propagationPolicy decides; else an orphan or
// foregroundDeletion finalizer already there; else the type's default.
// changed is false when the set of finalizers stays the same.
func gcFinalizers(st *strategy, obj object, opts *metav1.DeleteOptions) (out []string, changed bool) {
	old := finalizers(obj)
	orphan, foreground := st.orphansByDefault, false
	switch {
	case opts.OrphanDependents != nil:
		orphan, foreground = *opts.OrphanDependents, false
	case opts.PropagationPolicy != nil:
		orphan = *opts.PropagationPolicy == metav1.DeletePropagationOrphan
		foreground = *opts.PropagationPolicy == metav1.DeletePropagationForeground
	case slices.Contains(old, FinalizerOrphan):
		orphan = true
	case slices.Contains(old, FinalizerForeground):
		orphan, foreground = false, true
	}
	for _, f := range old {
		if f != FinalizerOrphan && f != FinalizerForeground {
			out = append(out, f)
		}
	}
	if orphan {
		out = append(out, FinalizerOrphan)
	}
	if foreground {
		out = append(out, FinalizerForeground)
	}
	return out, !sameSet(old, out)
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

func setFinalizers(obj object, list []string) {
	md := metadata(obj)
	if len(list) == 0 {
		delete(md, "finalizers")
		return
	}
	anys := make([]any, len(list))
	for i, f := range list {
		anys[i] = f
	}
	md["finalizers"] = anys
}

func formatTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// delete is a DELETE of one object: deleteObject, then the strategy's
// afterDelete unless it is a dry run.
func (s *registry) delete(ctx context.Context, rs *resourceStore, ns, name string, opts *metav1.DeleteOptions) (int, any, error) {
	code, out, err := s.deleteObject(ctx, rs, ns, name, opts)
	if err == nil && len(opts.DryRun) == 0 {
		err = s.afterDelete(ctx, rs)
	}
	return code, out, err
}

// deleteObject deletes one object as kube-apiserver's registry does: an
// object with finalizers (or, for a pod, a grace period) is only marked as
// being deleted (deletionTimestamp) and returned; otherwise it is removed.
func (s *registry) deleteObject(ctx context.Context, rs *resourceStore, ns, name string, opts *metav1.DeleteOptions) (int, any, error) {
	// As kube-apiserver, a delete that lost a race with another write reads
	// the object again and retries, rather than answering 409.
	for attempt := 1; ; attempt++ {
		code, out, err := s.deleteObjectOnce(ctx, rs, ns, name, opts)
		if !errors.Is(err, store.ErrConflict) || attempt == maxDeleteAttempts {
			return code, out, err
		}
	}
}

// maxDeleteAttempts bounds the retries of a delete under constant
// contention.
const maxDeleteAttempts = 10

// afterDelete runs the strategy's afterDelete once a request's deletions
// are done.
func (s *registry) afterDelete(ctx context.Context, rs *resourceStore) error {
	if hook := rs.strategy.afterDelete; hook != nil {
		return hook(s, ctx, rs.res)
	}
	return nil
}

// deletion is one object's DELETE under way: the object as found, marked
// in place as the deletion goes.
type deletion struct {
	res      *catalog.Resource
	store    *resourceStore // res's
	ns, name string
	obj      object
	live     store.KeyValue
	opts     *metav1.DeleteOptions
	dryRun   bool
	// wasDeleting: the object was marked before this request.
	wasDeleting bool
	// code is the answer's status code.
	code int
	// modified: the deletion changed the object; graceful: the object
	// waits for its grace period.
	modified, graceful bool
}

// answer is the deletion's answer with the object as it is.
func (d *deletion) answer() (int, any, error) { return d.code, d.obj, nil }

func (s *registry) deleteObjectOnce(ctx context.Context, rs *resourceStore, ns, name string, opts *metav1.DeleteOptions) (int, any, error) {
	res, st := rs.res, rs.strategy
	if unsafeDelete(opts) {
		return s.unsafeDeleteObject(ctx, rs, ns, name)
	}
	obj, kv, err := s.get(ctx, rs, ns, name)
	if err != nil {
		return 0, nil, err
	}
	checkPre := checkPreconditions
	if st.deletePreconditions != nil {
		checkPre = st.deletePreconditions
	}
	if err := checkPre(res, name, metadata(obj), opts.Preconditions); err != nil {
		return 0, nil, err
	}
	// Admission of a delete runs on the object found, once the
	// preconditions held.
	if st.admitDelete != nil {
		if err := st.admitDelete(ctx, res, name); err != nil {
			return 0, nil, err
		}
	}
	d := &deletion{res: res, store: rs, ns: ns, name: name, obj: obj, live: kv, opts: opts, dryRun: len(opts.DryRun) > 0, wasDeleting: deleting(obj), code: http.StatusOK}
	ar := &request{res: res, store: rs, namespace: ns, name: name, verb: "delete", deleteOptions: opts}
	if err := s.admission.admitDeletion(ctx, ar, obj, d.dryRun); err != nil {
		return 0, nil, err
	}
	s.journal(ctx, rs, obj, DeletionEvent{Phase: PhaseDeleteRequested, Options: opts})
	if opts.OrphanDependents != nil && !*opts.OrphanDependents {
		// kube-apiserver's answer for a cascading delete that has not
		// finished: 202, kept for old clients that asked for it this way.
		d.code = http.StatusAccepted
	}
	if st.markDeleted != nil {
		return st.markDeleted(s, ctx, d)
	}
	return s.deleteMarked(ctx, d)
}

// deleteMarked is the generic deletion: an object that something holds
// (finalizers, a grace period) is marked as being deleted; else it is
// removed.
func (s *registry) deleteMarked(ctx context.Context, d *deletion) (int, any, error) {
	md := metadata(d.obj)
	if graceful := d.store.strategy.gracefulDelete; graceful != nil && graceful(d, s.now()) {
		return d.answer()
	}
	list, changed := gcFinalizers(d.store.strategy, d.obj, d.opts)
	if changed {
		setFinalizers(d.obj, list)
		d.modified = true
	}
	if len(list) > 0 || d.graceful {
		if !deleting(d.obj) {
			md["deletionTimestamp"] = formatTime(s.now())
			md["deletionGracePeriodSeconds"] = int64(0)
			bumpGeneration(md)
			d.modified = true
		}
		if !d.modified {
			return d.answer() // nothing changes: no write, same resourceVersion
		}
		return s.writeDeleting(ctx, d)
	}

	// Delete now. What the deletion changed is written first, so watchers
	// see it (MODIFIED: a pod's deletionTimestamp) before the object goes
	// (DELETED), as they do with kube-apiserver.
	key, rev := d.store.key(d.ns, d.name), d.live.ModRevision
	if !d.dryRun && d.modified {
		value, err := d.store.encode(d.obj)
		if err != nil {
			return 0, nil, err
		}
		if rev, err = s.store.Update(ctx, key, value, rev); err != nil {
			return 0, nil, storeError(d.res, d.name, err)
		}
	}
	if !d.dryRun {
		drev, _, err := s.store.Delete(ctx, key, rev)
		switch {
		case errors.Is(err, store.ErrNotFound) && d.modified:
			// Removed by another since this deletion's write (the pod
			// garbage collector, seeing a pod terminating): the object is
			// gone as asked, and kube-apiserver answers with it as last
			// written, not 404.
			md["resourceVersion"] = strconv.FormatInt(rev, 10)
		case err != nil:
			return 0, nil, storeError(d.res, d.name, err)
		default:
			md["resourceVersion"] = strconv.FormatInt(drev, 10)
			s.journal(ctx, d.store, d.obj, DeletionEvent{Phase: PhaseRemoved, Revision: drev})
		}
	}
	if d.store.strategy.returnsDeletedObject {
		return d.answer()
	}
	return http.StatusOK, &metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusSuccess,
		Details: &metav1.StatusDetails{
			Name: d.name, Group: d.res.Group, Kind: d.res.Resource, UID: typesUID(str(md, "uid")),
		},
	}, nil
}

// writeDeleting stores an object marked for deletion and answers with it.
func (s *registry) writeDeleting(ctx context.Context, d *deletion) (int, any, error) {
	out, err := s.commitUpdate(ctx, d.store, d.ns, d.name, d.obj, d.live, d.dryRun)
	if err != nil {
		return 0, nil, err
	}
	// commitUpdate removes at once what nothing holds (a namespace without
	// finalizers): that is journaled as its removal, not as marked.
	stays := len(allFinalizers(d.store.strategy, out)) > 0 || int64Of(metadata(out)["deletionGracePeriodSeconds"]) > 0
	if !d.dryRun && !d.wasDeleting && stays {
		rev, _ := strconv.ParseInt(str(metadata(out), "resourceVersion"), 10, 64)
		s.journal(ctx, d.store, out, DeletionEvent{Phase: PhaseMarked, Revision: rev})
	}
	return d.code, out, nil
}

func bumpGeneration(md map[string]any) {
	if g := generationOf(md); g > 0 {
		md["generation"] = g + 1
	}
}

// checkPreconditions answers 409 when a DELETE's preconditions do not hold;
// kube-apiserver names the object by its kind in these messages.
func checkPreconditions(res *catalog.Resource, name string, md map[string]any, pre *metav1.Preconditions) error {
	if pre == nil {
		return nil
	}
	kind := schema.GroupResource{Group: res.Group, Resource: res.Kind}
	if pre.UID != nil && string(*pre.UID) != str(md, "uid") {
		return apierrors.NewConflict(kind, name, fmt.Errorf("the UID in the precondition (%s) does not match the UID in record (%s). The object might have been deleted and then recreated", *pre.UID, str(md, "uid")))
	}
	if pre.ResourceVersion != nil && *pre.ResourceVersion != str(md, "resourceVersion") {
		return apierrors.NewConflict(kind, name, fmt.Errorf("the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%s). The object might have been modified", *pre.ResourceVersion, str(md, "resourceVersion")))
	}
	return nil
}

// deleteCollection deletes the objects of res in ns that sel selects, one
// by one as delete does, and lists them as they were before.
func (s *registry) deleteCollection(ctx context.Context, rs *resourceStore, ns string, sel selectors, opts *metav1.DeleteOptions) (*objectList, error) {
	list, err := s.listObjects(ctx, rs.res, ns, sel, listOptions{}, false)
	if err != nil {
		return nil, err
	}
	deleted := []object{}
	for _, item := range list.items {
		md := metadata(item)
		_, _, err := s.deleteObject(ctx, rs, str(md, "namespace"), str(md, "name"), opts)
		if apierrors.IsNotFound(err) {
			continue // deleted meanwhile
		}
		if err != nil {
			return nil, err
		}
		deleted = append(deleted, item)
	}
	if len(opts.DryRun) == 0 {
		if err := s.afterDelete(ctx, rs); err != nil {
			return nil, err
		}
	}
	list.items = deleted
	return list, nil
}
