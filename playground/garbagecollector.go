package playground

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"kubeplay/server"
	"kubeplay/server/catalog"
	"kubeplay/server/inproc"
	"kubeplay/store"
)

// garbageCollectorAgent is how kube-controller-manager's garbage collector
// identifies itself to the API server.
const garbageCollectorAgent = "kube-controller-manager/v1.35.4 (linux/amd64) kubernetes/7b8c6cf/system:serviceaccount:kube-system:generic-garbage-collector"

// garbageCollector does what kube-controller-manager's garbage collector
// does, through the API: it deletes objects all of whose owners are gone
// (Background), deletes the dependents of an owner deleted in the foreground
// and removes its foregroundDeletion finalizer once no dependent blocks it,
// and removes an orphaned owner's references from its dependents before
// removing its orphan finalizer. It reads the ownership graph straight from
// the store on every pass, which is simple and fast enough for a sandbox.
type garbageCollector struct {
	api     *inproc.Client
	store   store.Store
	journal *DeletionJournal
	catalog *catalog.Catalog
	// byPrefix maps a store key prefix to its resource; byKind an owner
	// reference's group and kind to the resource it names (see index).
	prefixes []string
	byPrefix map[string]*catalog.Resource
	byKind   map[schema.GroupKind]*catalog.Resource
	// warned holds the invalid owner references already reported by an Event.
	warned map[string]bool
}

func newGarbageCollector(api http.Handler, cat *catalog.Catalog, st store.Store, j *DeletionJournal) *garbageCollector {
	gc := &garbageCollector{api: inproc.New(api, garbageCollectorAgent), catalog: cat, store: st, journal: j, warned: map[string]bool{}}
	gc.index()
	return gc
}

// index maps store keys and kinds to the resources served now: custom
// resources come and go with their CRDs.
func (gc *garbageCollector) index() {
	gc.prefixes = nil
	gc.byPrefix, gc.byKind = map[string]*catalog.Resource{}, map[schema.GroupKind]*catalog.Resource{}
	for _, r := range gc.catalog.All() {
		p := "/registry/" + catalog.StorageOf(r).Prefix + "/"
		if _, ok := gc.byPrefix[p]; !ok {
			gc.byPrefix[p] = r
			gc.prefixes = append(gc.prefixes, p)
		}
		gk := schema.GroupKind{Group: r.Group, Kind: r.Kind}
		if _, ok := gc.byKind[gk]; !ok {
			gc.byKind[gk] = r
		}
	}
	// Longest first, so "services/specs/" wins over a shorter prefix.
	slices.SortFunc(gc.prefixes, func(a, b string) int { return len(b) - len(a) })
}

// relevant reports whether a change can matter to the ownership graph: a
// removal (of an owner, or a dependent that blocked one), or an object with
// owner references or being deleted. A cheap look at the stored bytes spares
// a pass over the whole store for every other write.
func (gc *garbageCollector) relevant(ev store.Event) bool {
	if ev.Type == store.Deleted {
		return true
	}
	v := ev.KV.Value
	return bytes.Contains(v, []byte(`"ownerReferences"`)) || bytes.Contains(v, []byte(`"deletionTimestamp"`)) ||
		ev.Prev != nil && bytes.Contains(ev.Prev.Value, []byte(`"ownerReferences"`))
}

// node is one object of the ownership graph.
type node struct {
	res      *catalog.Resource
	ns, name string
	uid      string
	deleting bool
	// deletionRequested is when the deletion was asked for: the
	// deletionTimestamp less the grace period.
	deletionRequested time.Time
	finalizers        []string
	owners            []metav1.OwnerReference
}

func (n *node) ref() server.ObjectRef {
	return server.ObjectRef{Resource: n.res.GroupResource(), Namespace: n.ns, Name: n.name, UID: n.uid}
}

func (n *node) has(finalizer string) bool { return slices.Contains(n.finalizers, finalizer) }

func (n *node) path() string {
	p := "/api/v1"
	if n.res.Group != "" {
		p = "/apis/" + n.res.Group + "/" + n.res.Version
	}
	if n.res.Namespaced {
		p += "/namespaces/" + n.ns
	}
	return p + "/" + n.res.Resource + "/" + n.name
}

type nameKey struct {
	gr       schema.GroupResource
	ns, name string
}

type graph struct {
	nodes      []*node
	byName     map[nameKey]*node
	byUID      map[string]*node
	dependents map[string][]*node // by owner uid
}

func (gc *garbageCollector) snapshot(ctx context.Context) (*graph, error) {
	gc.index()
	list, err := gc.store.List(ctx, "/registry/", "", 0, 0)
	if err != nil {
		return nil, err
	}
	g := &graph{byName: map[nameKey]*node{}, byUID: map[string]*node{}, dependents: map[string][]*node{}}
	for _, kv := range list.Items {
		res, rest := gc.locate(kv.Key)
		if res == nil {
			continue
		}
		var obj struct {
			Metadata metav1.ObjectMeta `json:"metadata"`
		}
		if json.Unmarshal(kv.Value, &obj) != nil {
			continue // a corrupt object: only the unsafe deletion can remove it
		}
		md := obj.Metadata
		n := &node{res: res, name: rest, uid: string(md.UID), deleting: md.DeletionTimestamp != nil,
			finalizers: md.Finalizers, owners: md.OwnerReferences}
		if md.DeletionTimestamp != nil {
			n.deletionRequested = md.DeletionTimestamp.Time
			if g := md.DeletionGracePeriodSeconds; g != nil {
				n.deletionRequested = n.deletionRequested.Add(-time.Duration(*g) * time.Second)
			}
		}
		if res.Namespaced {
			n.ns, n.name, _ = strings.Cut(rest, "/")
		}
		g.nodes = append(g.nodes, n)
		g.byName[nameKey{res.GroupResource(), n.ns, n.name}] = n
		g.byUID[n.uid] = n
		for _, o := range n.owners {
			g.dependents[string(o.UID)] = append(g.dependents[string(o.UID)], n)
		}
	}
	return g, nil
}

func (gc *garbageCollector) locate(key string) (*catalog.Resource, string) {
	for _, p := range gc.prefixes {
		if rest, ok := strings.CutPrefix(key, p); ok {
			return gc.byPrefix[p], rest
		}
	}
	return nil, ""
}

// ownerState is what an owner reference points at.
type ownerState int

const (
	ownerSolid      ownerState = iota // the owner exists
	ownerDangling                     // no such owner (any more)
	ownerWaiting                      // the owner is deleted in the foreground
	ownerUnresolved                   // the reference cannot be resolved: leave the dependent alone
)

// resolve follows a dependent's owner reference. A namespaced owner must be
// in its dependent's namespace; a cluster-scoped dependent cannot have a
// namespaced owner (the reference is then unresolvable).
func (gc *garbageCollector) resolve(ctx context.Context, g *graph, dep *node, ref metav1.OwnerReference) (*node, ownerState) {
	gv, _ := schema.ParseGroupVersion(ref.APIVersion)
	res := gc.byKind[schema.GroupKind{Group: gv.Group, Kind: ref.Kind}]
	if res == nil {
		return nil, ownerUnresolved
	}
	if res.Namespaced && !dep.res.Namespaced {
		gc.warnInvalid(ctx, dep, ref, "default")
		return nil, ownerUnresolved
	}
	ns := ""
	if res.Namespaced {
		ns = dep.ns
	}
	owner := g.byName[nameKey{res.GroupResource(), ns, ref.Name}]
	if owner == nil || owner.uid != string(ref.UID) {
		if other := g.byUID[string(ref.UID)]; other != nil && res.Namespaced && other.ns != dep.ns {
			gc.warnInvalid(ctx, dep, ref, dep.ns)
		}
		return nil, ownerDangling
	}
	if owner.deleting && owner.has(server.FinalizerForeground) {
		return owner, ownerWaiting
	}
	return owner, ownerSolid
}

// sync makes one pass over the graph; it asks to be run again soon if an
// action failed.
func (gc *garbageCollector) sync(ctx context.Context) time.Duration {
	g, err := gc.snapshot(ctx)
	if err != nil {
		slog.Warn("garbage collector", "err", err)
		return retryInterval
	}
	failed := false
	for _, n := range g.nodes {
		var err error
		switch {
		case n.deleting && n.has(server.FinalizerOrphan):
			err = gc.orphanDependents(ctx, g, n)
		case n.deleting && n.has(server.FinalizerForeground):
			err = gc.processDeletingDependents(ctx, g, n)
		case !n.deleting && len(n.owners) > 0:
			err = gc.attemptToDelete(ctx, g, n)
		}
		if err != nil && !apierrors.IsNotFound(err) {
			if !apierrors.IsConflict(err) {
				slog.Warn("garbage collector", "object", n.path(), "err", err)
			}
			failed = true
		}
	}
	if failed {
		return retryInterval
	}
	return 0
}

// attemptToDelete deletes a dependent none of whose owners remains, or drops
// its references to owners that are gone while another remains.
func (gc *garbageCollector) attemptToDelete(ctx context.Context, g *graph, n *node) error {
	var solid, gone, waiting []metav1.OwnerReference
	var waitingOwners, goneUIDs []string
	for _, ref := range n.owners {
		owner, state := gc.resolve(ctx, g, n, ref)
		switch state {
		case ownerSolid, ownerUnresolved:
			solid = append(solid, ref)
		case ownerDangling:
			gone = append(gone, ref)
			goneUIDs = append(goneUIDs, string(ref.UID))
		case ownerWaiting:
			waiting = append(waiting, ref)
			waitingOwners = append(waitingOwners, owner.uid)
		}
	}
	switch {
	case len(solid) > 0:
		if len(gone)+len(waiting) == 0 {
			return nil
		}
		drop := append(gone, waiting...)
		return gc.update(ctx, n, func(obj map[string]any) bool {
			return removeOwnerRefs(obj, func(uid string) bool {
				return slices.ContainsFunc(drop, func(r metav1.OwnerReference) bool { return string(r.UID) == uid })
			})
		})
	case len(waiting) > 0:
		// A dependent that is itself an owner being deleted in the
		// foreground would wait for this one while this one waits for it:
		// break the cycle by making this one's owner references non-blocking.
		if slices.ContainsFunc(g.dependents[n.uid], func(d *node) bool { return d.deleting && d.has(server.FinalizerForeground) }) {
			if err := gc.update(ctx, n, unblockOwnerRefs); err != nil {
				return err
			}
		}
		return gc.deleteDependent(ctx, n, metav1.DeletePropagationForeground, waitingOwners)
	default:
		policy := metav1.DeletePropagationBackground
		switch {
		case n.has(server.FinalizerOrphan):
			policy = metav1.DeletePropagationOrphan
		case n.has(server.FinalizerForeground):
			policy = metav1.DeletePropagationForeground
		}
		return gc.deleteDependent(ctx, n, policy, goneUIDs)
	}
}

func (gc *garbageCollector) deleteDependent(ctx context.Context, n *node, policy metav1.DeletionPropagation, owners []string) error {
	uid := types.UID(n.uid)
	opts := metav1.DeleteOptions{TypeMeta: metav1.TypeMeta{Kind: "DeleteOptions", APIVersion: "v1"},
		Preconditions: &metav1.Preconditions{UID: &uid}, PropagationPolicy: &policy}
	if err := gc.api.Do(ctx, "DELETE", n.path(), opts, nil); err != nil {
		return err
	}
	for _, o := range owners {
		gc.record(o, server.PhaseDependentDeleted, n, "deleted with propagationPolicy "+string(policy))
	}
	return nil
}

// processDeletingDependents removes the foregroundDeletion finalizer of an
// owner once none of its dependents blocks its deletion any more.
func (gc *garbageCollector) processDeletingDependents(ctx context.Context, g *graph, owner *node) error {
	for _, d := range g.dependents[owner.uid] {
		for _, ref := range d.owners {
			if string(ref.UID) == owner.uid && ref.BlockOwnerDeletion != nil && *ref.BlockOwnerDeletion {
				if o, _ := gc.resolve(ctx, g, d, ref); o == owner {
					return nil // still blocked
				}
			}
		}
	}
	return gc.update(ctx, owner, func(obj map[string]any) bool { return removeFinalizer(obj, server.FinalizerForeground) })
}

// orphanDependents removes an owner's references from its dependents, then
// its orphan finalizer.
func (gc *garbageCollector) orphanDependents(ctx context.Context, g *graph, owner *node) error {
	for _, d := range g.dependents[owner.uid] {
		err := gc.update(ctx, d, func(obj map[string]any) bool {
			return removeOwnerRefs(obj, func(uid string) bool { return uid == owner.uid })
		})
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		if err == nil {
			gc.record(owner.uid, server.PhaseDependentOrphaned, d, "owner reference removed")
		}
	}
	return gc.update(ctx, owner, func(obj map[string]any) bool { return removeFinalizer(obj, server.FinalizerOrphan) })
}

func (gc *garbageCollector) record(ownerUID string, phase server.DeletionPhase, dep *node, msg string) {
	owner := server.ObjectRef{UID: ownerUID}
	ref := dep.ref()
	gc.journal.record(server.DeletionEvent{Time: time.Now(), Phase: phase, Object: owner,
		Actor: garbageCollectorAgent, Dependent: &ref, Message: msg})
}

// update reads n through the API, applies change and writes it back if
// change reports a change. A conflict is returned for the next pass.
func (gc *garbageCollector) update(ctx context.Context, n *node, change func(map[string]any) bool) error {
	var obj map[string]any
	if err := gc.api.Get(ctx, n.path(), &obj); err != nil {
		return err
	}
	md, _ := obj["metadata"].(map[string]any)
	if md == nil || md["uid"] != n.uid || !change(obj) {
		return nil
	}
	return gc.api.Do(ctx, "PUT", n.path(), obj, nil)
}

func removeFinalizer(obj map[string]any, f string) bool {
	md := obj["metadata"].(map[string]any)
	list, _ := md["finalizers"].([]any)
	kept := slices.DeleteFunc(slices.Clone(list), func(v any) bool { return v == f })
	if len(kept) == len(list) {
		return false
	}
	md["finalizers"] = kept
	return true
}

func removeOwnerRefs(obj map[string]any, drop func(uid string) bool) bool {
	md := obj["metadata"].(map[string]any)
	list, _ := md["ownerReferences"].([]any)
	kept := slices.DeleteFunc(slices.Clone(list), func(v any) bool {
		ref, _ := v.(map[string]any)
		uid, _ := ref["uid"].(string)
		return drop(uid)
	})
	if len(kept) == len(list) {
		return false
	}
	if len(kept) == 0 {
		delete(md, "ownerReferences")
	} else {
		md["ownerReferences"] = kept
	}
	return true
}

func unblockOwnerRefs(obj map[string]any) bool {
	md := obj["metadata"].(map[string]any)
	list, _ := md["ownerReferences"].([]any)
	changed := false
	for _, v := range list {
		if ref, ok := v.(map[string]any); ok && ref["blockOwnerDeletion"] == true {
			ref["blockOwnerDeletion"] = false
			changed = true
		}
	}
	return changed
}

// warnInvalid reports an owner reference the garbage collector cannot honour
// with a Warning Event, once, as kube-controller-manager does.
func (gc *garbageCollector) warnInvalid(ctx context.Context, dep *node, ref metav1.OwnerReference, eventNS string) {
	key := dep.uid + "/" + string(ref.UID)
	if gc.warned[key] {
		return
	}
	gc.warned[key] = true
	// The owner is looked for in the dependent's namespace ("" for a
	// cluster-scoped dependent), which the message says.
	msg := fmt.Sprintf("ownerRef [%s/%s, namespace: %s, name: %s, uid: %s] does not exist in namespace %q", ref.APIVersion, ref.Kind, dep.ns, ref.Name, ref.UID, dep.ns)
	now := time.Now().UTC().Format(time.RFC3339)
	ev := map[string]any{
		"apiVersion": "v1", "kind": "Event",
		"metadata": map[string]any{"generateName": dep.name + ".", "namespace": eventNS},
		"involvedObject": map[string]any{"apiVersion": dep.res.APIVersion(), "kind": dep.res.Kind, "name": dep.name,
			"namespace": dep.ns, "uid": dep.uid},
		"reason": "OwnerRefInvalidNamespace", "message": msg, "type": "Warning",
		"source":         map[string]any{"component": "garbage-collector-controller"},
		"firstTimestamp": now, "lastTimestamp": now, "count": 1,
	}
	if err := gc.api.Do(ctx, "POST", "/api/v1/namespaces/"+eventNS+"/events", ev, nil); err != nil {
		slog.Warn("garbage collector: event", "err", err)
	}
}
