package playground

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"kubeplay/internal/jsonmap"
	"kubeplay/server/inproc"
	"kubeplay/store"
)

// The workload controllers are simulated: they do, through the API, the
// visible part of what kube-controller-manager's Deployment, ReplicaSet and
// Job controllers, the scheduler and the kubelets do — objects, owner
// references, labels, status fields and conditions as a real cluster shows
// them — with no containers, nodes or scheduling behind them. Enough for
// kubectl create deployment, scale, rollout status and a cascading delete
// to look as they do in a cluster.

const (
	deploymentControllerAgent = "kube-controller-manager/v1.35.4 (linux/amd64) kubernetes/7b8c6cf/system:serviceaccount:kube-system:deployment-controller"
	replicaSetControllerAgent = "kube-controller-manager/v1.35.4 (linux/amd64) kubernetes/7b8c6cf/system:serviceaccount:kube-system:replicaset-controller"
	jobControllerAgent        = "kube-controller-manager/v1.35.4 (linux/amd64) kubernetes/7b8c6cf/system:serviceaccount:kube-system:job-controller"

	// podTemplateHashLabel ties a Deployment's ReplicaSets and pods to a
	// version of its pod template.
	podTemplateHashLabel = "pod-template-hash"
	revisionAnnotation   = "deployment.kubernetes.io/revision"
)

// Delays of the simulated pod lifecycle: a pod is scheduled at once, its
// containers run after startDelay, a Job's pods finish after runDelay.
const (
	startDelay = 500 * time.Millisecond
	runDelay   = time.Second
)

// workloads runs the simulated Deployment, ReplicaSet and Job controllers
// and the simulated pod lifecycle, as one reconciler whose keys are
// "<resource>/<namespace>/<name>" (the store key less objectsRoot: these
// resources are stored under their own names) of deployments, replicasets,
// jobs and pods: each look acts on what earlier ones wrote, as their writes
// name the keys they concern.
type workloads struct {
	deployments, replicaSets, jobs, pods *inproc.Client
	now                                  func() time.Time
	// podIPs numbers the pod IPs handed out.
	podIPs atomic.Uint32
}

func newWorkloads(api http.Handler, now func() time.Time) *workloads {
	return &workloads{deployments: inproc.New(api, deploymentControllerAgent), replicaSets: inproc.New(api, replicaSetControllerAgent),
		jobs: inproc.New(api, jobControllerAgent), pods: inproc.New(api, kubeletAgent), now: now}
}

// workloadControllers are, by the resource of what they control, the
// controllers (group and kind of an owner reference with controller: true)
// whose keys a change of it names, and their resources.
var workloadControllers = map[string]map[schema.GroupKind]string{
	"deployments": nil,
	"jobs":        nil,
	"replicasets": {{Group: "apps", Kind: "Deployment"}: "deployments"},
	"pods":        {{Group: "apps", Kind: "ReplicaSet"}: "replicasets", {Group: "batch", Kind: "Job"}: "jobs"},
}

// resync implements reconciler: every Deployment and ReplicaSet, and the
// Jobs and pods that may still have something to do.
func (wl *workloads) resync(ctx context.Context, _ int64) ([]string, error) {
	var keys []string
	for _, r := range []struct {
		c        *inproc.Client
		resource string
		path     string
		done     func(jsonmap.Object) bool
	}{
		{wl.deployments, "deployments", "/apis/apps/v1/deployments", deleting},
		{wl.replicaSets, "replicasets", "/apis/apps/v1/replicasets", deleting},
		{wl.jobs, "jobs", "/apis/batch/v1/jobs", func(j jsonmap.Object) bool { return deleting(j) || jsonmap.Child(j, "status")["completionTime"] != nil }},
		{wl.pods, "pods", "/api/v1/pods", podSettled},
	} {
		objs, err := list(ctx, r.c, r.path)
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			if !r.done(o) {
				keys = append(keys, r.resource+"/"+jsonmap.String(o, "metadata", "namespace")+"/"+jsonmap.String(o, "metadata", "name"))
			}
		}
	}
	return keys, nil
}

// keysOf implements reconciler: a change names its object (unless it is
// gone) and the object's controller, before and after the change.
func (wl *workloads) keysOf(ev store.Event, q queue) {
	key, ok := strings.CutPrefix(ev.KV.Key, objectsRoot)
	if !ok {
		return
	}
	resource, rest, _ := strings.Cut(key, "/")
	controllers, ok := workloadControllers[resource]
	if !ok {
		return
	}
	if ev.Type != store.Deleted {
		q.Add(key)
	}
	if controllers == nil {
		return
	}
	ns, _, _ := strings.Cut(rest, "/")
	if k := controllerKey(ev.KV.Value, ns, controllers); k != "" {
		q.Add(k)
	}
	if ev.Type == store.Updated && ev.Prev != nil {
		if k := controllerKey(ev.Prev.Value, ns, controllers); k != "" {
			q.Add(k)
		}
	}
}

// controllerKey is the key of the controller a stored object names in its
// owner references, if it is one of controllers; "" otherwise.
func controllerKey(value []byte, ns string, controllers map[schema.GroupKind]string) string {
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
		gv, _ := schema.ParseGroupVersion(ref.APIVersion)
		if resource, ok := controllers[schema.GroupKind{Group: gv.Group, Kind: ref.Kind}]; ok {
			return resource + "/" + ns + "/" + ref.Name
		}
		return ""
	}
	return ""
}

// reconcile implements reconciler.
func (wl *workloads) reconcile(ctx context.Context, key string) (time.Duration, error) {
	resource, rest, _ := strings.Cut(key, "/")
	ns, name, _ := strings.Cut(rest, "/")
	switch resource {
	case "deployments":
		d, err := get(ctx, wl.deployments, namedPath("apps/v1", "deployments", ns, name))
		if err != nil || d == nil || deleting(d) {
			return 0, err
		}
		rss, err := list(ctx, wl.deployments, workloadCollection("apps/v1", "replicasets", ns))
		if err != nil {
			return 0, err
		}
		return 0, wl.syncDeployment(ctx, d, owned(rss)[jsonmap.String(d, "metadata", "uid")])
	case "replicasets":
		rs, err := get(ctx, wl.replicaSets, namedPath("apps/v1", "replicasets", ns, name))
		if err != nil || rs == nil || deleting(rs) {
			return 0, err
		}
		pods, err := list(ctx, wl.replicaSets, workloadCollection("", "pods", ns))
		if err != nil {
			return 0, err
		}
		return 0, wl.syncReplicaSet(ctx, rs, owned(pods)[jsonmap.String(rs, "metadata", "uid")])
	case "jobs":
		job, err := get(ctx, wl.jobs, namedPath("batch/v1", "jobs", ns, name))
		if err != nil || job == nil || deleting(job) || jsonmap.Child(job, "status")["completionTime"] != nil {
			return 0, err
		}
		pods, err := list(ctx, wl.jobs, workloadCollection("", "pods", ns))
		if err != nil {
			return 0, err
		}
		return 0, wl.syncJob(ctx, job, owned(pods)[jsonmap.String(job, "metadata", "uid")])
	case "pods":
		p, err := get(ctx, wl.pods, namedPath("", "pods", ns, name))
		if err != nil || p == nil || deleting(p) {
			return 0, err
		}
		return wl.syncPod(ctx, p)
	}
	return 0, nil
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

// templateHash names a version of a pod template as the Deployment
// controller does: a 32-bit FNV-1a hash of the template, its decimal digits
// spelled in the alphabet of generated names.
func templateHash(template any) string {
	h := fnv.New32a()
	b, _ := json.Marshal(withoutNulls(template))
	h.Write(b)
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	digits := []byte(fmt.Sprint(h.Sum32()))
	for i, d := range digits {
		digits[i] = alphabet[int(d)%len(alphabet)]
	}
	return string(digits)
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

func (wl *workloads) timestamp() string { return wl.now().UTC().Format(time.RFC3339) }

// syncDeployment brings d's ReplicaSets (rss, those it controls) and its
// status to its spec.
func (wl *workloads) syncDeployment(ctx context.Context, d jsonmap.Object, rss []jsonmap.Object) error {
	template := jsonmap.Child(d, "spec", "template")
	hash := templateHash(template)
	desired := intOr(d, 1, "spec", "replicas")
	var current jsonmap.Object
	revision := int64(0)
	for _, rs := range rss {
		var r int64
		fmt.Sscan(jsonmap.String(rs, "metadata", "annotations", revisionAnnotation), &r)
		revision = max(revision, r)
		if jsonmap.String(rs, "metadata", "labels", podTemplateHashLabel) == hash || current == nil && sameTemplate(jsonmap.Child(rs, "spec", "template"), template) {
			current = rs
		}
	}
	name := jsonmap.String(d, "metadata", "name")
	ns := jsonmap.String(d, "metadata", "namespace")
	progress := "ReplicaSetUpdated"
	if current == nil {
		revision++
		rsTemplate := copyMap(template)
		labels := jsonmap.Child(rsTemplate, "metadata", "labels")
		if labels == nil {
			labels = jsonmap.Object{}
			jsonmap.Child(rsTemplate, "metadata")["labels"] = labels
		}
		labels[podTemplateHashLabel] = hash
		selector := copyMap(jsonmap.Child(d, "spec", "selector"))
		if selector == nil {
			selector = jsonmap.Object{}
		}
		ml := jsonmap.Child(selector, "matchLabels")
		if ml == nil {
			ml = jsonmap.Object{}
			selector["matchLabels"] = ml
		}
		ml[podTemplateHashLabel] = hash
		rs := jsonmap.Object{"apiVersion": "apps/v1", "kind": "ReplicaSet",
			"metadata": jsonmap.Object{"name": name + "-" + hash, "namespace": ns, "labels": labels,
				"annotations": jsonmap.Object{"deployment.kubernetes.io/desired-replicas": fmt.Sprint(desired),
					"deployment.kubernetes.io/max-replicas": fmt.Sprint(desired + (desired+3)/4), revisionAnnotation: fmt.Sprint(revision)},
				"ownerReferences": controllerRef(d, "apps/v1", "Deployment")},
			"spec": jsonmap.Object{"replicas": desired, "selector": selector, "template": rsTemplate}}
		if err := wl.deployments.Do(ctx, "POST", workloadCollection("apps/v1", "replicasets", ns), rs, &current); err != nil {
			return err
		}
		rss = append(rss, current)
		progress = "NewReplicaSetCreated"
	} else if rev := jsonmap.String(current, "metadata", "annotations", revisionAnnotation); intOr(current, 1, "spec", "replicas") != desired || rev != fmt.Sprint(revision) {
		current = copyMap(current)
		jsonmap.Child(current, "spec")["replicas"] = desired
		annotations := jsonmap.Child(current, "metadata", "annotations")
		if annotations == nil {
			annotations = jsonmap.Object{}
			jsonmap.Child(current, "metadata")["annotations"] = annotations
		}
		annotations["deployment.kubernetes.io/desired-replicas"] = fmt.Sprint(desired)
		if rev != fmt.Sprint(revision) {
			// An older template back (a rollout undo): its ReplicaSet
			// becomes the newest revision.
			revision++
			annotations[revisionAnnotation] = fmt.Sprint(revision)
		}
		if err := wl.deployments.Do(ctx, "PUT", objectPath("apps/v1", "replicasets", current), current, &current); err != nil {
			return err
		}
	}
	// The old ReplicaSets give way as the new one's pods become available.
	keep := max(0, desired-intOr(current, 0, "status", "availableReplicas"))
	var replicas, ready, available, updated int64
	for _, rs := range rss {
		replicas += intOr(rs, 0, "status", "replicas")
		ready += intOr(rs, 0, "status", "readyReplicas")
		available += intOr(rs, 0, "status", "availableReplicas")
		if jsonmap.String(rs, "metadata", "uid") == jsonmap.String(current, "metadata", "uid") {
			updated = intOr(rs, 0, "status", "replicas")
			continue
		}
		want := min(intOr(rs, 1, "spec", "replicas"), keep)
		keep -= want
		if intOr(rs, 1, "spec", "replicas") != want {
			rs = copyMap(rs)
			jsonmap.Child(rs, "spec")["replicas"] = want
			if err := wl.deployments.Do(ctx, "PUT", objectPath("apps/v1", "replicasets", rs), rs, nil); err != nil {
				return err
			}
		}
	}
	now := wl.timestamp()
	before := d
	d = copyMap(d)
	// The revision goes onto the Deployment through /status, as
	// kube-controller-manager writes it: a PUT of the Deployment would
	// bump its generation.
	annotations := jsonmap.Child(d, "metadata", "annotations")
	if annotations == nil {
		annotations = jsonmap.Object{}
		jsonmap.Child(d, "metadata")["annotations"] = annotations
	}
	annotations[revisionAnnotation] = jsonmap.String(current, "metadata", "annotations", revisionAnnotation)
	status := jsonmap.Object{"observedGeneration": intOr(d, 0, "metadata", "generation"), "replicas": replicas, "updatedReplicas": updated,
		"readyReplicas": ready, "availableReplicas": available}
	if unavailable := replicas - available; unavailable > 0 {
		status["unavailableReplicas"] = unavailable
	}
	conds, _ := jsonmap.Child(before, "status")["conditions"].([]any)
	conds = slices.Clone(conds)
	if available >= desired-desired/4 {
		conds = setCondition(conds, now, "Available", "True", "MinimumReplicasAvailable", "Deployment has minimum availability.", true)
	} else {
		conds = setCondition(conds, now, "Available", "False", "MinimumReplicasUnavailable", "Deployment does not have minimum availability.", true)
	}
	rsName := jsonmap.String(current, "metadata", "name")
	switch {
	case updated == desired && replicas == desired && available == desired:
		conds = setCondition(conds, now, "Progressing", "True", "NewReplicaSetAvailable", fmt.Sprintf("ReplicaSet %q has successfully progressed.", rsName), true)
	case progress == "NewReplicaSetCreated":
		conds = setCondition(conds, now, "Progressing", "True", progress, fmt.Sprintf("Created new replica set %q", rsName), true)
	default:
		conds = setCondition(conds, now, "Progressing", "True", progress, fmt.Sprintf("ReplicaSet %q is progressing.", rsName), true)
	}
	status["conditions"] = conds
	d["status"] = status
	return putStatus(ctx, wl.deployments, objectPath("apps/v1", "deployments", d), before, d)
}

// sameTemplate reports whether a ReplicaSet's pod template is the
// Deployment's, its pod-template-hash label aside: as the Deployment
// controller does, a rollout undo (which copies a ReplicaSet's template
// back, as the API server stored it) finds the old ReplicaSet again.
func sameTemplate(rsTemplate, template jsonmap.Object) bool {
	rsTemplate = withoutNulls(rsTemplate).(jsonmap.Object)
	if labels := jsonmap.Child(rsTemplate, "metadata", "labels"); labels != nil {
		delete(labels, podTemplateHashLabel)
		if len(labels) == 0 {
			delete(jsonmap.Child(rsTemplate, "metadata"), "labels")
		}
	}
	return jsonEqual(rsTemplate, withoutNulls(template))
}

// withoutNulls copies v without its null fields (a template sent with
// "creationTimestamp": null is the same template without it).
func withoutNulls(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if e != nil {
				out[k] = withoutNulls(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = withoutNulls(e)
		}
		return out
	}
	return v
}

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

// syncReplicaSet makes or deletes pods until rs has as many (pods: those it
// controls) as it wants, and writes its status.
func (wl *workloads) syncReplicaSet(ctx context.Context, rs jsonmap.Object, pods []jsonmap.Object) error {
	var active []jsonmap.Object
	for _, p := range pods {
		if !deleting(p) {
			active = append(active, p)
		}
	}
	desired := intOr(rs, 1, "spec", "replicas")
	for range desired - int64(len(active)) {
		if err := wl.createPod(ctx, wl.replicaSets, rs, "apps/v1", "ReplicaSet", nil); err != nil {
			return err
		}
	}
	if extra := int64(len(active)) - desired; extra > 0 {
		// Not yet running first, then the newest.
		slices.SortStableFunc(active, func(a, b jsonmap.Object) int {
			if ra, rb := podReady(a), podReady(b); ra != rb {
				if ra {
					return 1
				}
				return -1
			}
			return strings.Compare(jsonmap.String(b, "metadata", "creationTimestamp"), jsonmap.String(a, "metadata", "creationTimestamp"))
		})
		for _, p := range active[:extra] {
			if err := wl.replicaSets.Do(ctx, "DELETE", objectPath("", "pods", p), nil, nil); err != nil && !apierrors.IsNotFound(err) {
				return err
			}
		}
	}
	var ready int64
	for _, p := range active {
		if podReady(p) {
			ready++
		}
	}
	before := rs
	rs = copyMap(rs)
	status := jsonmap.Object{"replicas": int64(len(active)), "fullyLabeledReplicas": int64(len(active)), "observedGeneration": intOr(rs, 0, "metadata", "generation")}
	if ready > 0 {
		status["readyReplicas"], status["availableReplicas"] = ready, ready
	}
	rs["status"] = status
	return putStatus(ctx, wl.replicaSets, objectPath("apps/v1", "replicasets", rs), before, rs)
}

// createPod creates a pod from owner's template, named after owner as the
// controllers name theirs (generateName), controlled by owner.
func (wl *workloads) createPod(ctx context.Context, c *inproc.Client, owner jsonmap.Object, apiVersion, kind string, extraLabels map[string]string) error {
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
	if a := jsonmap.Child(md, "annotations"); a != nil {
		jsonmap.Child(pod, "metadata")["annotations"] = a
	}
	return c.Do(ctx, "POST", workloadCollection("", "pods", jsonmap.String(owner, "metadata", "namespace")), pod, nil)
}

// syncJob makes pods for job (pods: those it controls) until enough of
// them succeeded, and writes its status.
func (wl *workloads) syncJob(ctx context.Context, job jsonmap.Object, pods []jsonmap.Object) error {
	var active, ready, succeeded, failed int64
	for _, p := range pods {
		switch jsonmap.String(p, "status", "phase") {
		case "Succeeded":
			succeeded++
		case "Failed":
			failed++
		default:
			if !deleting(p) {
				active++
				if podReady(p) {
					ready++
				}
			}
		}
	}
	completions := intOr(job, 1, "spec", "completions")
	parallelism := intOr(job, 1, "spec", "parallelism")
	uid, name := jsonmap.String(job, "metadata", "uid"), jsonmap.String(job, "metadata", "name")
	labels := map[string]string{"batch.kubernetes.io/controller-uid": uid, "batch.kubernetes.io/job-name": name, "controller-uid": uid, "job-name": name}
	if succeeded < completions {
		for range min(parallelism, completions-succeeded) - active {
			if err := wl.createPod(ctx, wl.jobs, job, "batch/v1", "Job", labels); err != nil {
				return err
			}
			active++
		}
	}
	before := job
	job = copyMap(job)
	now := wl.timestamp()
	status := copyMap(jsonmap.Child(job, "status"))
	if status == nil {
		status = jsonmap.Object{}
	}
	if status["startTime"] == nil {
		status["startTime"] = now
	}
	status["active"], status["ready"], status["succeeded"], status["failed"], status["terminating"] = active, ready, succeeded, failed, int64(0)
	status["uncountedTerminatedPods"] = jsonmap.Object{}
	for k, v := range status {
		if n, ok := v.(int64); ok && n == 0 && k != "ready" && k != "terminating" {
			delete(status, k) // omitted when zero, as the Job API serves them
		}
	}
	if succeeded >= completions {
		conds, _ := status["conditions"].([]any)
		conds = setCondition(conds, now, "SuccessCriteriaMet", "True", "CompletionsReached", "Reached expected number of succeeded pods", false)
		conds = setCondition(conds, now, "Complete", "True", "CompletionsReached", "Reached expected number of succeeded pods", false)
		for _, c := range conds {
			if m, ok := c.(map[string]any); ok {
				m["lastProbeTime"] = now
			}
		}
		status["conditions"] = conds
		status["completionTime"] = now
	}
	job["status"] = status
	return putStatus(ctx, wl.jobs, objectPath("batch/v1", "jobs", job), before, job)
}

// syncPod moves a pod through its lifecycle as the scheduler and a kubelet
// would: Pending and scheduled at once, Running (ready) after startDelay,
// and for a Job's pod Succeeded runDelay later. It asks for another look
// when the pod's next phase is due.
func (wl *workloads) syncPod(ctx context.Context, p jsonmap.Object) (time.Duration, error) {
	now := wl.now()
	ts := wl.timestamp()
	status := copyMap(jsonmap.Child(p, "status"))
	if status == nil {
		status = jsonmap.Object{}
	}
	var due time.Duration
	switch jsonmap.String(p, "status", "phase") {
	case "":
		status["phase"] = "Pending"
		status["qosClass"] = "BestEffort"
		status["conditions"] = []any{map[string]any{"type": "PodScheduled", "status": "True", "lastProbeTime": nil, "lastTransitionTime": ts}}
		due = startDelay
	case "Pending":
		started := since(now, jsonmap.String(p, "metadata", "creationTimestamp"))
		if started < startDelay {
			return max(startDelay-started, 10*time.Millisecond), nil
		}
		wl.run(p, status, ts)
		if _, kind := controllerUID(p); kind == "Job" {
			due = runDelay
		}
	case "Running":
		if _, kind := controllerUID(p); kind != "Job" {
			return 0, nil
		}
		running := since(now, jsonmap.String(p, "status", "startTime"))
		if running < runDelay {
			return max(runDelay-running, 10*time.Millisecond), nil
		}
		wl.succeed(p, status, ts)
	default:
		return 0, nil
	}
	p = copyMap(p)
	p["status"] = status
	if err := wl.pods.Do(ctx, "PUT", objectPath("", "pods", p)+"/status", p, nil); err != nil && !apierrors.IsNotFound(err) {
		return 0, err
	}
	return due, nil
}

// podSettled reports whether syncPod has nothing left to do with p.
func podSettled(p jsonmap.Object) bool {
	if deleting(p) {
		return true
	}
	switch jsonmap.String(p, "status", "phase") {
	case "", "Pending":
		return false
	case "Running":
		_, kind := controllerUID(p)
		return kind != "Job"
	}
	return true
}

func since(now time.Time, timestamp string) time.Duration {
	t, err := time.Parse(time.RFC3339, timestamp)
	if err != nil {
		return 0
	}
	return now.Sub(t)
}

// run sets the status of a pod whose containers all started.
func (wl *workloads) run(p, status jsonmap.Object, ts string) {
	n := wl.podIPs.Add(1)
	ip := fmt.Sprintf("10.244.%d.%d", n/250, n%250+2)
	status["phase"] = "Running"
	status["hostIP"], status["hostIPs"] = "10.0.0.2", []any{map[string]any{"ip": "10.0.0.2"}}
	status["podIP"], status["podIPs"] = ip, []any{map[string]any{"ip": ip}}
	status["startTime"] = ts
	var conds []any
	for _, t := range []string{"PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled"} {
		conds = append(conds, map[string]any{"type": t, "status": "True", "lastProbeTime": nil, "lastTransitionTime": ts})
	}
	status["conditions"] = conds
	status["containerStatuses"] = containerStatuses(p, func(c jsonmap.Object) {
		c["ready"], c["started"] = true, true
		c["state"] = map[string]any{"running": map[string]any{"startedAt": ts}}
	})
}

// succeed sets the status of a pod whose containers all exited 0.
func (wl *workloads) succeed(p, status jsonmap.Object, ts string) {
	status["phase"] = "Succeeded"
	conds, _ := status["conditions"].([]any)
	for _, t := range []string{"PodReadyToStartContainers", "Ready", "ContainersReady"} {
		st, reason := "False", "PodCompleted"
		if t == "PodReadyToStartContainers" {
			reason = ""
		}
		for i, c := range conds {
			if m, _ := c.(map[string]any); m["type"] == t {
				m = copyMap(m)
				m["status"], m["lastTransitionTime"] = st, ts
				if reason != "" {
					m["reason"] = reason
				}
				conds[i] = m
			}
		}
	}
	status["conditions"] = conds
	started := jsonmap.String(p, "status", "startTime")
	status["containerStatuses"] = containerStatuses(p, func(c jsonmap.Object) {
		c["ready"], c["started"] = false, false
		c["state"] = map[string]any{"terminated": map[string]any{"exitCode": 0, "reason": "Completed",
			"startedAt": started, "finishedAt": ts, "containerID": c["containerID"]}}
	})
}

// containerStatuses describes each of p's containers, set by f.
func containerStatuses(p jsonmap.Object, f func(jsonmap.Object)) []any {
	var out []any
	containers, _ := jsonmap.Child(p, "spec")["containers"].([]any)
	for i, c := range containers {
		spec, _ := c.(map[string]any)
		h := fnv.New64a()
		fmt.Fprint(h, jsonmap.String(p, "metadata", "uid"), i)
		image, _ := spec["image"].(string)
		st := jsonmap.Object{"name": spec["name"], "image": image, "imageID": "", "restartCount": 0,
			"containerID": fmt.Sprintf("containerd://%016x", h.Sum64())}
		f(st)
		out = append(out, st)
	}
	return out
}
