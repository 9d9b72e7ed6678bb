package playground

import (
	"bytes"
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"kubeplay/internal/jsonmap"
	"kubeplay/server/inproc"
	"kubeplay/store"
)

// What the workload controllers share: reading and writing objects as
// generic JSON through the API, owner references, conditions, and the keys
// of a controller that owns objects of another resource.

func coreV1(resource string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Version: "v1", Resource: resource}
}

func appsV1(resource string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: resource}
}

func batchV1(resource string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: resource}
}

// ownerKeys are the keys ("<namespace>/<name>") of a controller of owner
// objects that makes owned ones, each controlled by its owner (an owner
// reference of kind with controller: true): a change of an owner names it,
// a change of an owned object names its owner, before and after the change.
type ownerKeys struct {
	owner, owned schema.GroupVersionResource
	kind         string
}

// resync lists every owner not done.
func (k ownerKeys) resync(ctx context.Context, c *inproc.Client, done func(jsonmap.Object) bool) ([]string, error) {
	objs, err := list(ctx, c, allPath(k.owner))
	if err != nil {
		return nil, err
	}
	var keys []string
	for _, o := range objs {
		if !done(o) {
			keys = append(keys, jsonmap.String(o, "metadata", "namespace")+"/"+jsonmap.String(o, "metadata", "name"))
		}
	}
	return keys, nil
}

func (k ownerKeys) keysOf(ev store.Event, q queue) {
	if key, ok := strings.CutPrefix(ev.KV.Key, builtinKeyPrefix(k.owner)); ok {
		if ev.Type != store.Deleted {
			q.Add(key)
		}
		return
	}
	rest, ok := strings.CutPrefix(ev.KV.Key, builtinKeyPrefix(k.owned))
	if !ok {
		return
	}
	ns, _, _ := strings.Cut(rest, "/")
	if name := controllerName(ev.KV.Value, k.owner.Group, k.kind); name != "" {
		q.Add(ns + "/" + name)
	}
	if ev.Type == store.Updated && ev.Prev != nil {
		if name := controllerName(ev.Prev.Value, k.owner.Group, k.kind); name != "" {
			q.Add(ns + "/" + name)
		}
	}
}

// get reads the owner key names and the objects it controls; a nil owner
// if there is none.
func (k ownerKeys) get(ctx context.Context, c *inproc.Client, key string) (owner jsonmap.Object, controlled []jsonmap.Object, err error) {
	ns, name, _ := strings.Cut(key, "/")
	if owner, err = get(ctx, c, namedPath(pathGroup(k.owner), k.owner.Resource, ns, name)); err != nil || owner == nil {
		return nil, nil, err
	}
	objs, err := list(ctx, c, workloadCollection(pathGroup(k.owned), k.owned.Resource, ns))
	if err != nil {
		return nil, nil, err
	}
	return owner, owned(objs)[jsonmap.String(owner, "metadata", "uid")], nil
}

// allPath is the URL of every object of resource gvr.
func allPath(gvr schema.GroupVersionResource) string {
	if gvr.Group == "" {
		return "/api/v1/" + gvr.Resource
	}
	return "/apis/" + gvr.GroupVersion().String() + "/" + gvr.Resource
}

// pathGroup is how namedPath and workloadCollection name gvr's group
// version: "" for the core group.
func pathGroup(gvr schema.GroupVersionResource) string {
	if gvr.Group == "" {
		return ""
	}
	return gvr.GroupVersion().String()
}

// controllerName is the name of the controller a stored object names in
// its owner references, if it is of group and kind; "" otherwise.
func controllerName(value []byte, group, kind string) string {
	if !bytes.Contains(value, []byte(`"ownerReferences"`)) {
		return ""
	}
	var o struct {
		Metadata struct {
			OwnerReferences []metav1.OwnerReference `json:"ownerReferences"`
		} `json:"metadata"`
	}
	if json.Unmarshal(value, &o) != nil {
		return ""
	}
	for _, ref := range o.Metadata.OwnerReferences {
		if ref.Controller == nil || !*ref.Controller {
			continue
		}
		if gv, _ := schema.ParseGroupVersion(ref.APIVersion); gv.Group == group && ref.Kind == kind {
			return ref.Name
		}
		return ""
	}
	return ""
}

// get reads one object: nil if there is none.
func get(ctx context.Context, c *inproc.Client, path string) (jsonmap.Object, error) {
	var o jsonmap.Object
	if err := c.Get(ctx, path, &o); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	return o, nil
}

func list(ctx context.Context, c *inproc.Client, path string) ([]jsonmap.Object, error) {
	var l struct {
		Items []jsonmap.Object `json:"items"`
	}
	err := c.Get(ctx, path, &l)
	return l.Items, err
}

// intOr is the integer at path in o, def when there is none (as for a
// replica count the API defaults to 1, or a status not yet written).
func intOr(o jsonmap.Object, def int64, path ...string) int64 {
	if n, ok := jsonmap.Int(o, path...); ok {
		return n
	}
	return def
}

func meta(o jsonmap.Object) jsonmap.Object { return jsonmap.Child(o, "metadata") }

func deleting(o jsonmap.Object) bool { return meta(o)["deletionTimestamp"] != nil }

// controllerUID is the uid of o's controller (its owner reference with
// controller: true), "" if none.
func controllerUID(o jsonmap.Object) (uid, kind string) {
	refs, _ := meta(o)["ownerReferences"].([]any)
	for _, r := range refs {
		ref, _ := r.(map[string]any)
		if c, _ := ref["controller"].(bool); c {
			u, _ := ref["uid"].(string)
			k, _ := ref["kind"].(string)
			return u, k
		}
	}
	return "", ""
}

// controllerRef is the owner reference a controller puts on what it makes.
func controllerRef(owner jsonmap.Object, apiVersion, kind string) []any {
	return []any{map[string]any{"apiVersion": apiVersion, "kind": kind, "name": jsonmap.String(owner, "metadata", "name"),
		"uid": jsonmap.String(owner, "metadata", "uid"), "controller": true, "blockOwnerDeletion": true}}
}

// owned groups objects by their controller's uid.
func owned(objs []jsonmap.Object) map[string][]jsonmap.Object {
	by := map[string][]jsonmap.Object{}
	for _, o := range objs {
		if uid, _ := controllerUID(o); uid != "" {
			by[uid] = append(by[uid], o)
		}
	}
	return by
}

func objectPath(group, resource string, o jsonmap.Object) string {
	return namedPath(group, resource, jsonmap.String(o, "metadata", "namespace"), jsonmap.String(o, "metadata", "name"))
}

// namedPath is the URL of the object name in ns.
func namedPath(group, resource, ns, name string) string {
	return workloadCollection(group, resource, ns) + "/" + url.PathEscape(name)
}

func workloadCollection(group, resource, ns string) string {
	prefix := "/apis/" + group
	if group == "" {
		prefix = "/api/v1"
	}
	return prefix + "/namespaces/" + url.PathEscape(ns) + "/" + resource
}

func copyMap(m jsonmap.Object) jsonmap.Object {
	b, _ := json.Marshal(m)
	var c jsonmap.Object
	json.Unmarshal(b, &c)
	return c
}

// putStatus writes o's status (and annotations, which a Deployment's
// /status keeps) if they differ from the stored ones (before).
func putStatus(ctx context.Context, c *inproc.Client, path string, before, o jsonmap.Object) error {
	if jsonEqual(before["status"], o["status"]) && jsonEqual(jsonmap.Child(before, "metadata", "annotations"), jsonmap.Child(o, "metadata", "annotations")) {
		return nil
	}
	return c.Do(ctx, "PUT", path+"/status", o, nil)
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// setCondition sets the condition of type t in conds to status with reason
// and message; its lastTransitionTime changes only with its status.
func setCondition(conds []any, now string, t, status, reason, message string, withUpdateTime bool) []any {
	c := map[string]any{"type": t, "status": status, "reason": reason, "message": message, "lastTransitionTime": now}
	if withUpdateTime {
		c["lastUpdateTime"] = now
	}
	for i, old := range conds {
		o, _ := old.(map[string]any)
		if o["type"] != t {
			continue
		}
		if o["status"] == status {
			c["lastTransitionTime"] = o["lastTransitionTime"]
			if o["reason"] == reason && o["message"] == message && withUpdateTime {
				c["lastUpdateTime"] = o["lastUpdateTime"]
			}
		}
		conds[i] = c
		return conds
	}
	return append(conds, c)
}

// timestamp is now as the API writes times.
func timestamp(now func() time.Time) string { return now().UTC().Format(time.RFC3339) }

// podReady reports whether a pod's Ready condition is True.
func podReady(p jsonmap.Object) bool {
	conds, _ := jsonmap.Child(p, "status")["conditions"].([]any)
	for _, c := range conds {
		if m, _ := c.(map[string]any); m["type"] == "Ready" {
			return m["status"] == "True"
		}
	}
	return false
}

// createPod creates a pod from owner's template, named after owner as the
// controllers name theirs (generateName), controlled by owner, and returns
// it as created.
func createPod(ctx context.Context, c *inproc.Client, owner jsonmap.Object, apiVersion, kind string, extraLabels map[string]string) (jsonmap.Object, error) {
	template := copyMap(jsonmap.Child(owner, "spec", "template"))
	md := jsonmap.Child(template, "metadata")
	if md == nil {
		md = jsonmap.Object{}
	}
	labels := jsonmap.Child(md, "labels")
	if labels == nil {
		labels = jsonmap.Object{}
	}
	for k, v := range extraLabels {
		labels[k] = v
	}
	pod := jsonmap.Object{"apiVersion": "v1", "kind": "Pod",
		"metadata": jsonmap.Object{"generateName": jsonmap.String(owner, "metadata", "name") + "-", "namespace": jsonmap.String(owner, "metadata", "namespace"),
			"labels": labels, "ownerReferences": controllerRef(owner, apiVersion, kind)},
		"spec": jsonmap.Child(template, "spec")}
	for _, k := range []string{"annotations", "finalizers"} {
		if v := md[k]; v != nil {
			jsonmap.Child(pod, "metadata")[k] = v
		}
	}
	var made jsonmap.Object
	err := c.Do(ctx, "POST", workloadCollection("", "pods", jsonmap.String(owner, "metadata", "namespace")), pod, &made)
	return made, err
}
