package playground

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
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
// identifies itself.
var garbageCollectorAgent = controllerAgent("generic-garbage-collector")

var garbageCollectorDef = controllerDef{name: "garbageCollector", title: "garbage collector", serviceAccount: "generic-garbage-collector",
	start: func(sb *Sandbox) reconciler {
		return newGarbageCollector(sb.handler, sb.api.Catalog(), sb.store, sb.deletions)
	}}

// garbageCollector does what kube-controller-manager's garbage collector
// does, through the API: it deletes objects all of whose owners are gone
// (Background), deletes the dependents of an owner deleted in the foreground
// and removes its foregroundDeletion finalizer once no dependent blocks it,
// and removes an orphaned owner's references from its dependents before
// removing its orphan finalizer.
//
// As kube-controller-manager's, it keeps the ownership graph of every
// object in memory, built from one list and kept current by the store's
// changes; a change queues the objects whose fate it may decide (the object,
// its owners, its dependents), by uid, and reconciling one reads the graph
// and acts through the API.
type garbageCollector struct {
	api     *inproc.Client
	store   store.Store
	journal *DeletionJournal
	keys    *storeKeys

	mu    sync.RWMutex // guards graph: the event goroutine writes, the worker reads
	graph *graph
	// warned holds the invalid owner references already reported by an
	// Event; only the worker uses it.
	warned map[string]bool
}

func newGarbageCollector(api http.Handler, cat *catalog.Catalog, st store.Store, j *DeletionJournal) *garbageCollector {
	return &garbageCollector{api: inproc.New(api, garbageCollectorAgent), store: st, journal: j, keys: newStoreKeys(cat),
		graph: newGraph(), warned: map[string]bool{}}
}

// node is one object of the ownership graph. A node is never modified once
// in the graph (a change replaces it), so the worker may keep one after
// releasing the lock.
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

func (n *node) path() string { return apiPath(n.res, n.ns, n.name) }

// needsCollector reports whether the collector may have something to do
// about n itself.
func (n *node) needsCollector() bool {
	if n.deleting {
		return n.has(server.FinalizerOrphan) || n.has(server.FinalizerForeground)
	}
	return len(n.owners) > 0
}

type nameKey struct {
	gr       schema.GroupResource
	ns, name string
}

type graph struct {
	byName     map[nameKey]*node
	byUID      map[string]*node
	dependents map[string]map[string]*node // owner uid -> dependent uid -> dependent
}

func newGraph() *graph {
	return &graph{byName: map[nameKey]*node{}, byUID: map[string]*node{}, dependents: map[string]map[string]*node{}}
}

func (g *graph) put(n *node) {
	if old := g.byName[nameKey{n.res.GroupResource(), n.ns, n.name}]; old != nil {
		g.remove(old)
	}
	if old := g.byUID[n.uid]; old != nil {
		g.remove(old)
	}
	g.byName[nameKey{n.res.GroupResource(), n.ns, n.name}] = n
	g.byUID[n.uid] = n
	for _, o := range n.owners {
		deps := g.dependents[string(o.UID)]
		if deps == nil {
			deps = map[string]*node{}
			g.dependents[string(o.UID)] = deps
		}
		deps[n.uid] = n
	}
}

func (g *graph) remove(n *node) {
	if g.byName[nameKey{n.res.GroupResource(), n.ns, n.name}] == n {
		delete(g.byName, nameKey{n.res.GroupResource(), n.ns, n.name})
	}
	if g.byUID[n.uid] == n {
		delete(g.byUID, n.uid)
	}
	for _, o := range n.owners {
		if deps := g.dependents[string(o.UID)]; deps[n.uid] == n {
			delete(deps, n.uid)
			if len(deps) == 0 {
				delete(g.dependents, string(o.UID))
			}
		}
	}
}

// dependentsOf returns a copy of the dependents of the object with uid.
func (g *graph) dependentsOf(uid string) []*node {
	deps := make([]*node, 0, len(g.dependents[uid]))
	for _, d := range g.dependents[uid] {
		deps = append(deps, d)
	}
	// The uid order makes a pass's requests the same every time.
	slices.SortFunc(deps, func(a, b *node) int { return strings.Compare(a.uid, b.uid) })
	return deps
}

// storedMeta is what the collector reads of a stored object.
type storedMeta struct {
	Metadata struct {
		UID                        string                  `json:"uid"`
		DeletionTimestamp          *metav1.Time            `json:"deletionTimestamp"`
		DeletionGracePeriodSeconds *int64                  `json:"deletionGracePeriodSeconds"`
		Finalizers                 []string                `json:"finalizers"`
		OwnerReferences            []metav1.OwnerReference `json:"ownerReferences"`
	} `json:"metadata"`
}

// nodeOf reads the object stored under key; nil for a key of no resource
// served, or a corrupt object (only the unsafe deletion can remove it).
func (gc *garbageCollector) nodeOf(key string, value []byte) *node {
	res, ns, name := gc.keys.locate(key)
	if res == nil {
		return nil
	}
	var obj storedMeta
	if json.Unmarshal(value, &obj) != nil {
		return nil
	}
	md := obj.Metadata
	n := &node{res: res, ns: ns, name: name, uid: md.UID, deleting: md.DeletionTimestamp != nil,
		finalizers: md.Finalizers, owners: md.OwnerReferences}
	if md.DeletionTimestamp != nil {
		n.deletionRequested = md.DeletionTimestamp.Time
		if g := md.DeletionGracePeriodSeconds; g != nil {
			n.deletionRequested = n.deletionRequested.Add(-time.Duration(*g) * time.Second)
		}
	}
	return n
}

func (gc *garbageCollector) resync(ctx context.Context, rev int64) ([]string, error) {
	list, err := gc.store.List(ctx, objectsRoot, "", 0, rev)
	if err != nil {
		return nil, err
	}
	g := newGraph()
	var keys []string
	for _, kv := range list.Items {
		if n := gc.nodeOf(kv.Key, kv.Value); n != nil {
			g.put(n)
			if n.needsCollector() {
				keys = append(keys, n.uid)
			}
		}
	}
	gc.mu.Lock()
	gc.graph = g
	gc.mu.Unlock()
	return keys, nil
}

// gcFields are the stored fields whose change can matter to the graph.
var gcFields = [][]byte{[]byte(`"ownerReferences"`), []byte(`"deletionTimestamp"`), []byte(`"finalizers"`)}

func mentionsGCFields(v []byte) bool {
	return slices.ContainsFunc(gcFields, func(f []byte) bool { return bytes.Contains(v, f) })
}

// keysOf brings the graph up to date with one change and names the objects
// whose fate it may decide: the object itself, the owners it had and has
// (a foreground deletion may be unblocked), and its dependents (an owner
// gone or going).
func (gc *garbageCollector) keysOf(ev store.Event, q queue) {
	if ev.Type == store.Updated && !mentionsGCFields(ev.KV.Value) && !mentionsGCFields(ev.Prev.Value) {
		return // an update of anything else changes nothing the graph holds
	}
	var n, old *node
	gc.mu.Lock()
	if ev.Type == store.Deleted {
		if res, ns, name := gc.keys.locate(ev.KV.Key); res != nil {
			old = gc.graph.byName[nameKey{res.GroupResource(), ns, name}]
		}
		if old != nil {
			gc.graph.remove(old)
		}
	} else if n = gc.nodeOf(ev.KV.Key, ev.KV.Value); n != nil {
		old = gc.graph.byName[nameKey{n.res.GroupResource(), n.ns, n.name}]
		gc.graph.put(n)
	}
	// The dependents' fate changes when their owner goes, is replaced by
	// another object of its name, or is being deleted.
	var deps []*node
	replaced := old != nil && n != nil && old.uid != n.uid
	if old != nil && (n == nil || replaced) {
		deps = append(deps, gc.graph.dependentsOf(old.uid)...)
	}
	if n != nil && (n.deleting || replaced) {
		deps = append(deps, gc.graph.dependentsOf(n.uid)...)
	}
	gc.mu.Unlock()
	for _, x := range []*node{old, n} {
		if x == nil {
			continue
		}
		for _, o := range x.owners {
			q.Add(string(o.UID))
		}
	}
	if n != nil && n.needsCollector() {
		q.Add(n.uid)
	}
	for _, d := range deps {
		if d.needsCollector() {
			q.Add(d.uid)
		}
	}
}

// reconcile decides, from the graph, what the object with uid needs, then
// does it through the API. A failure is retried with backoff; a conflict
// means the object changed, and that change queues it again anyway.
func (gc *garbageCollector) reconcile(ctx context.Context, uid string) (time.Duration, error) {
	gc.mu.RLock()
	var act func(context.Context) error
	if n := gc.graph.byUID[uid]; n != nil {
		act = gc.plan(n)
	}
	gc.mu.RUnlock()
	if act == nil {
		return 0, nil
	}
	err := act(ctx)
	if apierrors.IsNotFound(err) {
		err = nil
	}
	return 0, err
}

// plan returns what n needs, or nil; it requires gc.mu (read) and returns
// an action that runs without it.
func (gc *garbageCollector) plan(n *node) func(context.Context) error {
	switch {
	case n.deleting && n.has(server.FinalizerOrphan):
		deps := gc.graph.dependentsOf(n.uid)
		return func(ctx context.Context) error { return gc.orphanDependents(ctx, n, deps) }
	case n.deleting && n.has(server.FinalizerForeground):
		if gc.blocked(n) {
			return nil
		}
		return func(ctx context.Context) error {
			return gc.update(ctx, n, func(obj map[string]any) bool { return removeFinalizer(obj, server.FinalizerForeground) })
		}
	case !n.deleting && len(n.owners) > 0:
		return gc.planDependent(n)
	}
	return nil
}

// blocked reports whether a dependent still blocks the foreground deletion
// of owner; it requires gc.mu (read).
func (gc *garbageCollector) blocked(owner *node) bool {
	for _, d := range gc.graph.dependents[owner.uid] {
		for _, ref := range d.owners {
			if string(ref.UID) == owner.uid && ref.BlockOwnerDeletion != nil && *ref.BlockOwnerDeletion {
				if o, _, _ := gc.resolve(d, ref); o == owner {
					return true
				}
			}
		}
	}
	return false
}

// ownerState is what an owner reference points at.
type ownerState int

const (
	ownerSolid      ownerState = iota // the owner exists
	ownerDangling                     // no such owner (any more)
	ownerWaiting                      // the owner is deleted in the foreground
	ownerUnresolved                   // the reference cannot be resolved: leave the dependent alone
)

// resolve follows a dependent's owner reference; it requires gc.mu (read).
// A namespaced owner must be in its dependent's namespace; a cluster-scoped
// dependent cannot have a namespaced owner (the reference is then
// unresolvable). warnNS is the namespace of the Event that reports an
// invalid reference ("" for none).
func (gc *garbageCollector) resolve(dep *node, ref metav1.OwnerReference) (owner *node, state ownerState, warnNS string) {
	gv, _ := schema.ParseGroupVersion(ref.APIVersion)
	res := gc.keys.ofKind(schema.GroupKind{Group: gv.Group, Kind: ref.Kind})
	if res == nil {
		return nil, ownerUnresolved, ""
	}
	if res.Namespaced && !dep.res.Namespaced {
		return nil, ownerUnresolved, "default"
	}
	ns := ""
	if res.Namespaced {
		ns = dep.ns
	}
	owner = gc.graph.byName[nameKey{res.GroupResource(), ns, ref.Name}]
	if owner == nil || owner.uid != string(ref.UID) {
		if other := gc.graph.byUID[string(ref.UID)]; other != nil && res.Namespaced && other.ns != dep.ns {
			warnNS = dep.ns
		}
		return nil, ownerDangling, warnNS
	}
	if owner.deleting && owner.has(server.FinalizerForeground) {
		return owner, ownerWaiting, ""
	}
	return owner, ownerSolid, ""
}

// planDependent returns what a dependent none of whose owners remains
// needs: its deletion, or dropping its references to owners that are gone
// while another remains. It requires gc.mu (read).
func (gc *garbageCollector) planDependent(n *node) func(context.Context) error {
	var solid, gone, waiting []metav1.OwnerReference
	var waitingOwners, goneUIDs []string
	type warning struct {
		ref metav1.OwnerReference
		ns  string
	}
	var warnings []warning
	for _, ref := range n.owners {
		owner, state, warnNS := gc.resolve(n, ref)
		if warnNS != "" {
			warnings = append(warnings, warning{ref, warnNS})
		}
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
	// A dependent that is itself an owner being deleted in the foreground
	// would wait for this one while this one waits for it.
	cycle := slices.ContainsFunc(gc.graph.dependentsOf(n.uid), func(d *node) bool { return d.deleting && d.has(server.FinalizerForeground) })
	return func(ctx context.Context) error {
		for _, w := range warnings {
			gc.warnInvalid(ctx, n, w.ref, w.ns)
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
			// Break the cycle by making this one's owner references
			// non-blocking.
			if cycle {
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
}

func (gc *garbageCollector) deleteDependent(ctx context.Context, n *node, policy metav1.DeletionPropagation, owners []string) error {
	uid := types.UID(n.uid)
	opts := metav1.DeleteOptions{TypeMeta: metav1.TypeMeta{Kind: "DeleteOptions", APIVersion: "v1"},
		Preconditions: &metav1.Preconditions{UID: &uid}, PropagationPolicy: &policy}
	var deleted written
	if err := gc.api.Do(ctx, "DELETE", n.path(), opts, &deleted); err != nil {
		return err
	}
	rev := deleted.revision()
	if rev == 0 {
		// Removed at once, the answer is a Status: the revision of the
		// removal is the one the server journaled for the dependent
		// before answering.
		rev = gc.journal.removedAt(n.uid)
	}
	for _, o := range owners {
		gc.record(o, server.PhaseDependentDeleted, n, rev, "deleted with propagationPolicy "+string(policy))
	}
	return nil
}

// orphanDependents removes an owner's references from its dependents, then
// its orphan finalizer.
func (gc *garbageCollector) orphanDependents(ctx context.Context, owner *node, deps []*node) error {
	for _, d := range deps {
		rev, err := updateObject(ctx, gc.api, d.path(), d.uid, func(obj map[string]any) bool {
			return removeOwnerRefs(obj, func(uid string) bool { return uid == owner.uid })
		})
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		if err == nil && rev > 0 {
			gc.record(owner.uid, server.PhaseDependentOrphaned, d, rev, "owner reference removed")
		}
	}
	return gc.update(ctx, owner, func(obj map[string]any) bool { return removeFinalizer(obj, server.FinalizerOrphan) })
}

// record adds to the owner's deletion timeline what the collector did to a
// dependent, at the revision of that write: the API records the owner's own
// phases when its requests return, which may be after the collector, woken
// by the owner's change, has written.
func (gc *garbageCollector) record(ownerUID string, phase server.DeletionPhase, dep *node, rev int64, msg string) {
	owner := server.ObjectRef{UID: ownerUID}
	ref := dep.ref()
	gc.journal.record(server.DeletionEvent{Time: time.Now(), Phase: phase, Object: owner, Revision: rev,
		Actor: garbageCollectorAgent, Dependent: &ref, Message: msg})
}

// update changes n through the API (see updateObject); a conflict is
// returned for a retry.
func (gc *garbageCollector) update(ctx context.Context, n *node, change func(map[string]any) bool) error {
	_, err := updateObject(ctx, gc.api, n.path(), n.uid, change)
	return err
}

// written is the resourceVersion of an object an API write answers with.
type written struct {
	Metadata struct {
		ResourceVersion string `json:"resourceVersion"`
	} `json:"metadata"`
}

// revision is the write's revision, 0 if the answer has none (a Status).
func (w written) revision() int64 {
	rev, _ := strconv.ParseInt(w.Metadata.ResourceVersion, 10, 64)
	return rev
}

// updateObject reads the object at path through the API, applies change
// and writes it back if change reports a change, returning the revision
// of the write (0 if nothing was written). It does nothing if the object is
// not the one with uid (any object when uid is "").
func updateObject(ctx context.Context, api *inproc.Client, path, uid string, change func(map[string]any) bool) (int64, error) {
	var obj map[string]any
	if err := api.Get(ctx, path, &obj); err != nil {
		return 0, err
	}
	md, _ := obj["metadata"].(map[string]any)
	if md == nil || uid != "" && md["uid"] != uid || !change(obj) {
		return 0, nil
	}
	var out written
	if err := api.Do(ctx, "PUT", path, obj, &out); err != nil {
		return 0, err
	}
	return out.revision(), nil
}

// decodeMeta reads the metadata of an object decoded as JSON.
func decodeMeta(obj map[string]any, md *metav1.ObjectMeta) bool {
	b, err := json.Marshal(obj["metadata"])
	return err == nil && json.Unmarshal(b, md) == nil
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
