package playground

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"slices"
	"time"

	"kubeplay/internal/jsonmap"
	"kubeplay/server/inproc"
	"kubeplay/store"
)

// podTemplateHashLabel ties a Deployment's ReplicaSets and pods to a version
// of its pod template.
const (
	podTemplateHashLabel = "pod-template-hash"
	revisionAnnotation   = "deployment.kubernetes.io/revision"
)

// deploymentController is kube-controller-manager's Deployment controller:
// it keeps a ReplicaSet per version of a Deployment's pod template, scales
// the newest up and the older ones down, and writes the Deployment's
// status. Its keys are "<namespace>/<name>" of Deployments.
type deploymentController struct {
	c   *inproc.Client
	now func() time.Time
}

func init() {
	registerController(controllerDef{name: "deployment", title: "deployment controller", serviceAccount: "deployment-controller",
		start: func(sb *Sandbox) reconciler {
			return &deploymentController{c: inproc.New(sb.handler, controllerAgent("deployment-controller")), now: sb.clock.Now}
		}})
}

var deployments = ownerKeys{owner: appsV1("deployments"), owned: appsV1("replicasets"), kind: "Deployment"}

func (dc *deploymentController) resync(ctx context.Context, _ int64) ([]string, error) {
	return deployments.resync(ctx, dc.c, deleting)
}

func (dc *deploymentController) keysOf(ev store.Event, q queue) { deployments.keysOf(ev, q) }

func (dc *deploymentController) reconcile(ctx context.Context, key string) (time.Duration, error) {
	d, owned, err := deployments.get(ctx, dc.c, key)
	if err != nil || d == nil || deleting(d) {
		return 0, err
	}
	return 0, dc.sync(ctx, d, owned)
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

// syncDeployment brings d's ReplicaSets (rss, those it controls) and its
// status to its spec.
func (dc *deploymentController) sync(ctx context.Context, d jsonmap.Object, rss []jsonmap.Object) error {
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
		if err := dc.c.Do(ctx, "POST", workloadCollection("apps/v1", "replicasets", ns), rs, &current); err != nil {
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
		if err := dc.c.Do(ctx, "PUT", objectPath("apps/v1", "replicasets", current), current, &current); err != nil {
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
			if err := dc.c.Do(ctx, "PUT", objectPath("apps/v1", "replicasets", rs), rs, nil); err != nil {
				return err
			}
		}
	}
	now := timestamp(dc.now)
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
	return putStatus(ctx, dc.c, objectPath("apps/v1", "deployments", d), before, d)
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
