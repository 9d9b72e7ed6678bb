package playground

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"kubeplay/internal/jsonmap"
	"kubeplay/server/inproc"
	"kubeplay/store"
)

// What the apps controllers (ReplicaSet, ReplicationController, Deployment,
// StatefulSet, DaemonSet) share: typed reads through the API, and owning by
// label selector — an owner adopts the orphans its selector matches and
// releases what it controls but no longer matches, as client-go's
// controller ref manager does.

// getTyped reads one object into a T: nil if there is none.
func getTyped[T any](ctx context.Context, c *inproc.Client, path string) (*T, error) {
	var o T
	if err := c.Get(ctx, path, &o); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	return &o, nil
}

// listTyped reads a collection's items into Ts.
func listTyped[T any](ctx context.Context, c *inproc.Client, path string) ([]*T, error) {
	var l struct {
		Items []*T `json:"items"`
	}
	err := c.Get(ctx, path, &l)
	return l.Items, err
}

// selectorKeys are the keys ("<namespace>/<name>") of a controller of
// owner objects that own objects of another resource by label selector.
// Besides what ownerKeys names, a change of an orphan names every owner
// whose selector matches it (one that may adopt it); the owners' selectors
// are remembered from the store's changes.
type selectorKeys struct {
	ownerKeys
	// selectorOf is the selector of an owner, nil if it selects nothing.
	selectorOf func(owner jsonmap.Object) labels.Selector

	mu sync.Mutex
	// selectors are the owners' selectors by namespace and name.
	selectors map[string]map[string]labels.Selector
}

func newSelectorKeys(owner, owned schema.GroupVersionResource, kind string, selectorOf func(jsonmap.Object) labels.Selector) *selectorKeys {
	return &selectorKeys{ownerKeys: ownerKeys{owner: owner, owned: owned, kind: kind}, selectorOf: selectorOf}
}

// labelSelectorOf reads the selector at spec.selector, as a
// metav1.LabelSelector; nil if there is none or it is not valid.
func labelSelectorOf(o jsonmap.Object) labels.Selector {
	var ls metav1.LabelSelector
	b, _ := json.Marshal(jsonmap.Child(o, "spec", "selector"))
	if json.Unmarshal(b, &ls) != nil {
		return nil
	}
	sel, err := metav1.LabelSelectorAsSelector(&ls)
	if err != nil || sel.Empty() {
		return nil
	}
	return sel
}

// resync lists every owner, remembering its selector, and returns those not
// done.
func (k *selectorKeys) resync(ctx context.Context, c *inproc.Client, done func(jsonmap.Object) bool) ([]string, error) {
	objs, err := list(ctx, c, allPath(k.owner))
	if err != nil {
		return nil, err
	}
	k.mu.Lock()
	k.selectors = map[string]map[string]labels.Selector{}
	k.mu.Unlock()
	var keys []string
	for _, o := range objs {
		ns, name := jsonmap.String(o, "metadata", "namespace"), jsonmap.String(o, "metadata", "name")
		k.remember(ns, name, k.selectorOf(o))
		if !done(o) {
			keys = append(keys, ns+"/"+name)
		}
	}
	return keys, nil
}

func (k *selectorKeys) remember(ns, name string, sel labels.Selector) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.selectors == nil {
		k.selectors = map[string]map[string]labels.Selector{}
	}
	if sel == nil {
		delete(k.selectors[ns], name)
		return
	}
	if k.selectors[ns] == nil {
		k.selectors[ns] = map[string]labels.Selector{}
	}
	k.selectors[ns][name] = sel
}

func (k *selectorKeys) keysOf(ev store.Event, q queue) {
	if key, ok := strings.CutPrefix(ev.KV.Key, builtinKeyPrefix(k.owner)); ok {
		ns, name, _ := strings.Cut(key, "/")
		if ev.Type == store.Deleted {
			k.remember(ns, name, nil)
			return
		}
		var o jsonmap.Object
		if json.Unmarshal(ev.KV.Value, &o) == nil {
			k.remember(ns, name, k.selectorOf(o))
		}
		q.Add(key)
		return
	}
	k.ownerKeys.keysOf(ev, q)
	rest, ok := strings.CutPrefix(ev.KV.Key, builtinKeyPrefix(k.owned))
	if !ok || ev.Type == store.Deleted {
		return
	}
	ns, _, _ := strings.Cut(rest, "/")
	k.orphanKeys(ns, ev.KV.Value, q)
	if ev.Prev != nil {
		k.orphanKeys(ns, ev.Prev.Value, q)
	}
}

// orphanKeys queues the owners that may adopt the stored object value, if
// it has no controller.
func (k *selectorKeys) orphanKeys(ns string, value []byte, q queue) {
	var o struct {
		Metadata metav1.ObjectMeta `json:"metadata"`
	}
	if json.Unmarshal(value, &o) != nil || metav1.GetControllerOfNoCopy(&o.Metadata) != nil || o.Metadata.DeletionTimestamp != nil {
		return
	}
	set := labels.Set(o.Metadata.Labels)
	k.mu.Lock()
	defer k.mu.Unlock()
	for name, sel := range k.selectors[ns] {
		if sel.Matches(set) {
			q.Add(ns + "/" + name)
		}
	}
}

// claimer claims objects for an owner: it keeps those it controls and its
// selector matches, adopts the orphans its selector matches, and releases
// those it controls that its selector no longer matches.
type claimer struct {
	c          *inproc.Client
	owner      metav1.Object
	apiVersion string
	kind       string
	selector   labels.Selector
	// ownedGroup and ownedResource name the claimed objects' resource (""
	// group for the core group).
	ownedGroup, ownedResource string
	// ownerPath is the owner's URL: before adopting, the owner is read
	// again, so that an owner deleted meanwhile adopts nothing.
	ownerPath string
	recheck   *bool
	// finalizers are put on the objects adopted and taken off those
	// released (a Job's tracking finalizer).
	finalizers []string
}

func (m *claimer) controllerRef() metav1.OwnerReference {
	yes := true
	return metav1.OwnerReference{APIVersion: m.apiVersion, Kind: m.kind, Name: m.owner.GetName(), UID: m.owner.GetUID(),
		Controller: &yes, BlockOwnerDeletion: &yes}
}

// canAdopt reports whether the owner, as stored now, is the one claiming
// and is not being deleted; it reads it once per claim.
func (m *claimer) canAdopt(ctx context.Context) (bool, error) {
	if m.recheck != nil {
		return *m.recheck, nil
	}
	fresh, err := getTyped[metav1.PartialObjectMetadata](ctx, m.c, m.ownerPath)
	if err != nil {
		return false, err
	}
	ok := fresh != nil && fresh.UID == m.owner.GetUID() && fresh.DeletionTimestamp == nil
	m.recheck = &ok
	return ok, nil
}

// claim returns the objects of objs the owner controls once adoptions and
// releases are done.
func claim[T metav1.Object](ctx context.Context, m *claimer, objs []T) ([]T, error) {
	var claimed []T
	ownerDeleting := m.owner.GetDeletionTimestamp() != nil
	for _, o := range objs {
		matches := m.selector != nil && m.selector.Matches(labels.Set(o.GetLabels()))
		if ref := metav1.GetControllerOfNoCopy(o); ref != nil {
			if ref.UID != m.owner.GetUID() {
				continue
			}
			if matches {
				claimed = append(claimed, o)
				continue
			}
			if ownerDeleting {
				continue
			}
			if err := m.release(ctx, o); err != nil {
				return nil, err
			}
			continue
		}
		if ownerDeleting || !matches || o.GetDeletionTimestamp() != nil || o.GetNamespace() != m.owner.GetNamespace() {
			continue
		}
		if ok, err := m.canAdopt(ctx); err != nil || !ok {
			return claimed, err
		}
		if err := m.adopt(ctx, o); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return nil, err
		}
		claimed = append(claimed, o)
	}
	return claimed, nil
}

func (m *claimer) path(o metav1.Object) string {
	return namedPath(m.ownedGroup, m.ownedResource, o.GetNamespace(), o.GetName())
}

// adopt makes o the owner's, by a patch that fails if o was replaced by
// another object of its name.
func (m *claimer) adopt(ctx context.Context, o metav1.Object) error {
	md := map[string]any{"ownerReferences": []metav1.OwnerReference{m.controllerRef()}, "uid": o.GetUID()}
	if len(m.finalizers) > 0 {
		md["finalizers"] = m.finalizers
	}
	if err := m.c.Patch(ctx, m.path(o), "application/strategic-merge-patch+json", map[string]any{"metadata": md}, nil); err != nil {
		return err
	}
	o.SetOwnerReferences(append(o.GetOwnerReferences(), m.controllerRef()))
	for _, f := range m.finalizers {
		if !slices.Contains(o.GetFinalizers(), f) {
			o.SetFinalizers(append(o.GetFinalizers(), f))
		}
	}
	return nil
}

// release removes the owner's reference from o.
func (m *claimer) release(ctx context.Context, o metav1.Object) error {
	md := map[string]any{"ownerReferences": []any{map[string]any{"$patch": "delete", "uid": m.owner.GetUID()}}, "uid": o.GetUID()}
	if len(m.finalizers) > 0 {
		md["$deleteFromPrimitiveList/finalizers"] = m.finalizers
	}
	patch := map[string]any{"metadata": md}
	err := m.c.Patch(ctx, m.path(o), "application/strategic-merge-patch+json", patch, nil)
	if apierrors.IsNotFound(err) || apierrors.IsInvalid(err) {
		return nil // gone, or the owner's reference is already gone
	}
	return err
}

// podIsReady reports whether p's Ready condition is True.
func podIsReady(p *corev1.Pod) bool { return podReadySince(p) != nil }

// podReadySince is when p became ready; nil if it is not.
func podReadySince(p *corev1.Pod) *metav1.Time {
	for i := range p.Status.Conditions {
		if c := &p.Status.Conditions[i]; c.Type == corev1.PodReady {
			if c.Status != corev1.ConditionTrue {
				return nil
			}
			return &c.LastTransitionTime
		}
	}
	return nil
}

// podAvailableIn is how long until p, ready, has been so for
// minReadySeconds: 0 if it is available, < 0 if it is not ready.
func podAvailableIn(p *corev1.Pod, minReadySeconds int32, now time.Time) time.Duration {
	since := podReadySince(p)
	if since == nil {
		return -1
	}
	if minReadySeconds == 0 {
		return 0
	}
	return max(0, since.Add(time.Duration(minReadySeconds)*time.Second).Sub(now))
}

// podActive reports whether p runs or may run: not finished, not being
// deleted.
func podActive(p *corev1.Pod) bool {
	return p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed && p.DeletionTimestamp == nil
}

// podTerminating reports whether p is being deleted and not yet finished.
func podTerminating(p *corev1.Pod) bool {
	return p.DeletionTimestamp != nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed
}

// podDeletionOrder sorts pods the way the ReplicaSet controller picks those
// to delete first: unscheduled before scheduled, Pending before Unknown
// before Running, not ready before ready, ready for less time before
// longer, more restarts before fewer, newer before older.
func podDeletionOrder(a, b *corev1.Pod) int {
	if (a.Spec.NodeName == "") != (b.Spec.NodeName == "") {
		return boolOrder(a.Spec.NodeName == "")
	}
	phase := map[corev1.PodPhase]int{corev1.PodPending: 0, corev1.PodUnknown: 1, corev1.PodRunning: 2}
	if pa, pb := phase[a.Status.Phase], phase[b.Status.Phase]; pa != pb {
		return pa - pb
	}
	ra, rb := podReadySince(a), podReadySince(b)
	if (ra == nil) != (rb == nil) {
		return boolOrder(ra == nil)
	}
	if ra != nil && !ra.Equal(rb) {
		return boolOrder(rb.Before(ra))
	}
	if ca, cb := maxRestarts(a), maxRestarts(b); ca != cb {
		return boolOrder(ca > cb)
	}
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return boolOrder(b.CreationTimestamp.Before(&a.CreationTimestamp))
	}
	return 0
}

// boolOrder is -1 when the first of two compared things comes first.
func boolOrder(firstFirst bool) int {
	if firstFirst {
		return -1
	}
	return 1
}

func maxRestarts(p *corev1.Pod) int32 {
	var n int32
	for _, c := range p.Status.ContainerStatuses {
		n = max(n, c.RestartCount)
	}
	return n
}

// typedRef refers an Event to a typed object.
func typedRef(o metav1.Object, apiVersion, kind string) objectRef {
	return objectRef{APIVersion: apiVersion, Kind: kind, Namespace: o.GetNamespace(), Name: o.GetName(), UID: string(o.GetUID()), ResourceVersion: o.GetResourceVersion()}
}

// asJSONMap is a typed object as generic JSON (for the helpers that take
// one).
func asJSONMap(v any) jsonmap.Object {
	b, _ := json.Marshal(v)
	var o jsonmap.Object
	json.Unmarshal(b, &o)
	return o
}

// decodeInto reads generic JSON into a typed object.
func decodeInto(o jsonmap.Object, out any) error {
	b, err := json.Marshal(o)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}
