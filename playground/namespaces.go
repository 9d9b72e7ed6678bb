package playground

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"kubeplay/server/catalog"
	"kubeplay/server/inproc"
	"kubeplay/store"
)

var namespaceDef = controllerDef{name: "namespace", title: "namespace controller", serviceAccount: "namespace-controller",
	start: func(sb *Sandbox) reconciler { return newNamespaceController(sb.handler, sb.api.Catalog()) }}

// namespaceController does what kube-controller-manager's namespace
// controller does: when a namespace is being deleted, it deletes everything
// in it through the API, and once nothing is left it removes the
// "kubernetes" finalizer through /finalize, which lets the API server remove
// the namespace. Its keys are namespace names. Where kube-controller-manager
// looks again at a namespace whose content is held by finalizers every few
// seconds, this one looks again when that content changes: a namespace
// stuck in Terminating costs nothing.
type namespaceController struct {
	api     *inproc.Client
	catalog *catalog.Catalog
	keys    *storeKeys
	// terminating holds the namespaces being deleted, as the changes seen
	// so far tell; only the event goroutine uses it.
	terminating map[string]bool
}

func newNamespaceController(api http.Handler, cat *catalog.Catalog) *namespaceController {
	return &namespaceController{api: inproc.New(api, controllerAgent("namespace-controller")), catalog: cat, keys: newStoreKeys(cat)}
}

// namespaceKeyPrefix is where the store keeps namespaces.
var namespaceKeyPrefix = builtinKeyPrefix(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"})

// contentSettle is how long after a change to a terminating namespace's
// content the controller looks at the namespace again. A pass deletes and
// lists every namespaced type (some 90 requests), and its own deletions,
// and the garbage collector's, arrive as a stream of changes: taking them
// together makes a deletion cost a pass or two, however slowly the changes
// reach the controller (kube-controller-manager looks again every few
// seconds instead, whatever changed).
const contentSettle = 250 * time.Millisecond

// namespaceList is what the controller reads of namespaces.
type namespaceList struct {
	Items []namespaceObject `json:"items"`
}

type namespaceObject struct {
	Metadata metav1.ObjectMeta `json:"metadata"`
	Spec     struct {
		Finalizers []string `json:"finalizers"`
	} `json:"spec"`
}

func (ns *namespaceObject) waitsForContent() bool {
	return ns.Metadata.DeletionTimestamp != nil && slices.Contains(ns.Spec.Finalizers, "kubernetes")
}

func (c *namespaceController) resync(ctx context.Context, _ int64) ([]string, error) {
	var list namespaceList
	if err := c.api.Get(ctx, "/api/v1/namespaces", &list); err != nil {
		return nil, err
	}
	c.terminating = map[string]bool{}
	var keys []string
	for _, ns := range list.Items {
		if ns.Metadata.DeletionTimestamp != nil {
			c.terminating[ns.Metadata.Name] = true
			keys = append(keys, ns.Metadata.Name)
		}
	}
	return keys, nil
}

// keysOf names a namespace when it changes, and a terminating namespace
// when its content does.
func (c *namespaceController) keysOf(ev store.Event, q queue) {
	if name, ok := strings.CutPrefix(ev.KV.Key, namespaceKeyPrefix); ok {
		if ev.Type == store.Deleted {
			delete(c.terminating, name)
			return
		}
		// Only the change that starts the deletion matters here: later
		// ones (the conditions this controller writes) change nothing it
		// acts on.
		marked := []byte(`"deletionTimestamp"`)
		if bytes.Contains(ev.KV.Value, marked) && (ev.Prev == nil || !bytes.Contains(ev.Prev.Value, marked)) {
			c.terminating[name] = true
			q.Add(name)
		}
		return
	}
	if len(c.terminating) == 0 || ev.Type == store.Created {
		return
	}
	if res, ns, _ := c.keys.locate(ev.KV.Key); res != nil && res.Namespaced && c.terminating[ns] {
		q.AddAfter(ns, contentSettle)
	}
}

// reconcile deletes the content of a terminating namespace and finalizes it
// once nothing is left. Content held by finalizers is not an error: the
// change that releases it names the namespace again.
func (c *namespaceController) reconcile(ctx context.Context, name string) (time.Duration, error) {
	var ns namespaceObject
	if err := c.api.Get(ctx, "/api/v1/namespaces/"+name, &ns); err != nil {
		if apierrors.IsNotFound(err) {
			return 0, nil
		}
		return 0, err
	}
	if !ns.waitsForContent() {
		return 0, nil
	}
	return 0, c.sync(ctx, name)
}

// backgroundDeletion is how the namespace controller deletes content: the
// garbage collector then deletes the dependents, whatever the type's default.
var backgroundDeletion = func() metav1.DeleteOptions {
	p := metav1.DeletePropagationBackground
	return metav1.DeleteOptions{TypeMeta: metav1.TypeMeta{Kind: "DeleteOptions", APIVersion: "v1"}, PropagationPolicy: &p}
}()

// sync deletes the content of a terminating namespace, reports what remains
// in the namespace's status conditions and, once nothing remains, finalizes
// the namespace. It fails when content could not be deleted. Pods go first
// (OrderedNamespaceDeletion, on since 1.34): the rest of the content is
// deleted once no pod remains, so that no pod outlives what it uses.
func (c *namespaceController) sync(ctx context.Context, ns string) error {
	remaining := map[string]int{}  // by "resource.group"
	finalizers := map[string]int{} // by finalizer
	var contentErrs []string
	pods := c.catalog.Lookup(schema.GroupVersionResource{Version: "v1", Resource: "pods"})
	if pods != nil {
		contentErrs = c.deleteContent(ctx, pods, ns, remaining, finalizers)
		if len(remaining) > 0 {
			// As kube-controller-manager reports it meanwhile: deletion
			// errors only, the content's counts come once pods are gone.
			if err := c.reportConditions(ctx, ns, nil, nil, contentErrs); err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("status: %w", err)
			}
			if len(contentErrs) > 0 {
				return fmt.Errorf("failed to delete pods for namespace: %s, %s", ns, strings.Join(contentErrs, ", "))
			}
			return nil
		}
	}
	for _, r := range c.catalog.All() {
		if r != pods && r.Namespaced && r.HasVerb("list") && r.HasVerb("delete") {
			contentErrs = append(contentErrs, c.deleteContent(ctx, r, ns, remaining, finalizers)...)
		}
	}
	if err := c.reportConditions(ctx, ns, remaining, finalizers, contentErrs); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("status: %w", err)
	}
	if len(contentErrs) > 0 {
		return fmt.Errorf("failed to delete all resource types, %d remaining: %s", len(contentErrs), strings.Join(contentErrs, ", "))
	}
	if len(remaining) > 0 {
		return nil
	}
	finalize := map[string]any{
		"apiVersion": "v1", "kind": "Namespace",
		"metadata": map[string]any{"name": ns},
		"spec":     map[string]any{"finalizers": []string{}},
	}
	err := c.api.Do(ctx, "PUT", "/api/v1/namespaces/"+ns+"/finalize", finalize, nil)
	if apierrors.IsNotFound(err) {
		err = nil
	}
	return err
}

// deleteContent deletes the objects of resource r in ns (a delete of the
// collection, then each one left without a deletionTimestamp), counts in
// remaining and finalizers those still there, and returns what failed.
func (c *namespaceController) deleteContent(ctx context.Context, r *catalog.Resource, ns string, remaining, finalizers map[string]int) []string {
	base := collectionPath(r, ns)
	if r.HasVerb("deletecollection") {
		if err := c.api.Do(ctx, "DELETE", base, backgroundDeletion, nil); err != nil && !apierrors.IsNotFound(err) {
			return []string{err.Error()}
		}
	}
	var left struct {
		Items []struct {
			Metadata metav1.ObjectMeta `json:"metadata"`
		} `json:"items"`
	}
	if err := c.api.Get(ctx, base, &left); err != nil {
		return []string{err.Error()}
	}
	var errs []string
	for _, it := range left.Items {
		if it.Metadata.DeletionTimestamp == nil {
			err := c.api.Do(ctx, "DELETE", base+"/"+it.Metadata.Name, backgroundDeletion, nil)
			if err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, err.Error())
			}
		}
		for _, f := range it.Metadata.Finalizers {
			finalizers[f]++
		}
	}
	if len(left.Items) > 0 {
		remaining[r.Resource+"."+r.Group] += len(left.Items)
	}
	return errs
}

// collectionPath is the URL of a resource's objects in ns.
func collectionPath(r *catalog.Resource, ns string) string {
	var b strings.Builder
	if r.Group == "" {
		b.WriteString("/api/v1")
	} else {
		b.WriteString("/apis/" + r.Group + "/" + r.Version)
	}
	b.WriteString("/namespaces/" + ns + "/" + r.Resource)
	return b.String()
}

// namespaceConditionTypes are the conditions the namespace controller keeps
// on a terminating namespace, in the order it writes them.
var namespaceConditionTypes = []string{"NamespaceDeletionDiscoveryFailure", "NamespaceDeletionGroupVersionParsingFailure",
	"NamespaceDeletionContentFailure", "NamespaceContentRemaining", "NamespaceFinalizersRemaining"}

// namespaceConditions are the conditions kube-controller-manager's namespace
// controller reports for what remains in a terminating namespace, with its
// reasons and messages. Discovery cannot fail here: the catalog is the
// discovery.
func namespaceConditions(remaining, finalizers map[string]int, contentErrs []string) map[string]metav1.Condition {
	out := map[string]metav1.Condition{
		"NamespaceDeletionDiscoveryFailure":           {Status: "False", Reason: "ResourcesDiscovered", Message: "All resources successfully discovered"},
		"NamespaceDeletionGroupVersionParsingFailure": {Status: "False", Reason: "ParsedGroupVersions", Message: "All legacy kube types successfully parsed"},
		"NamespaceDeletionContentFailure":             {Status: "False", Reason: "ContentDeleted", Message: "All content successfully deleted, may be waiting on finalization"},
		"NamespaceContentRemaining":                   {Status: "False", Reason: "ContentRemoved", Message: "All content successfully removed"},
		"NamespaceFinalizersRemaining":                {Status: "False", Reason: "ContentHasNoFinalizers", Message: "All content-preserving finalizers finished"},
	}
	if len(contentErrs) > 0 {
		slices.Sort(contentErrs)
		out["NamespaceDeletionContentFailure"] = metav1.Condition{Status: "True", Reason: "ContentDeletionFailed",
			Message: "Failed to delete all resource types, " + strconv.Itoa(len(contentErrs)) + " remaining: " + strings.Join(contentErrs, ", ")}
	}
	if len(remaining) > 0 {
		out["NamespaceContentRemaining"] = metav1.Condition{Status: "True", Reason: "SomeResourcesRemain",
			Message: "Some resources are remaining: " + countList(remaining, "%s has %d resource instances")}
	}
	if len(finalizers) > 0 {
		out["NamespaceFinalizersRemaining"] = metav1.Condition{Status: "True", Reason: "SomeFinalizersRemain",
			Message: "Some content in the namespace has finalizers remaining: " + countList(finalizers, "%s in %d resource instances")}
	}
	return out
}

func countList(counts map[string]int, format string) string {
	keys := slices.Sorted(maps.Keys(counts))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf(format, k, counts[k])
	}
	return strings.Join(parts, ", ")
}

// reportConditions writes the namespace's status conditions through
// /status when they changed, keeping lastTransitionTime for a condition
// whose status did not change.
func (c *namespaceController) reportConditions(ctx context.Context, ns string, remaining, finalizers map[string]int, contentErrs []string) error {
	var obj map[string]any
	path := "/api/v1/namespaces/" + ns + "/status"
	if err := c.api.Get(ctx, path, &obj); err != nil {
		return err
	}
	status, _ := obj["status"].(map[string]any)
	if status == nil {
		status = map[string]any{}
		obj["status"] = status
	}
	old := map[string]map[string]any{}
	oldList, _ := status["conditions"].([]any)
	for _, v := range oldList {
		if m, ok := v.(map[string]any); ok {
			old[fmt.Sprint(m["type"])] = m
		}
	}
	want := namespaceConditions(remaining, finalizers, contentErrs)
	now := time.Now().UTC().Format(time.RFC3339)
	list := make([]any, 0, len(namespaceConditionTypes))
	changed := len(oldList) != len(namespaceConditionTypes)
	for _, t := range namespaceConditionTypes {
		w := want[t]
		cond := map[string]any{"type": t, "status": w.Status, "lastTransitionTime": now, "reason": w.Reason, "message": w.Message}
		// The old values are JSON strings; compare them as such (an any
		// holding a ConditionStatus never equals one holding a string).
		status := string(w.Status)
		cond["status"] = status
		if o := old[t]; o != nil && o["status"] == status {
			cond["lastTransitionTime"] = o["lastTransitionTime"]
		}
		if o := old[t]; o == nil || o["status"] != status || o["reason"] != w.Reason || o["message"] != w.Message {
			changed = true
		}
		list = append(list, cond)
	}
	if !changed {
		return nil
	}
	status["conditions"] = list
	return c.api.Do(ctx, "PUT", path, obj, nil)
}
