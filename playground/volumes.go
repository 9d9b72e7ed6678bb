package playground

import (
	"context"
	"encoding/json"
	"net/url"
	"slices"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"

	"kubeplay/internal/jsonmap"
	"kubeplay/server/inproc"
)

// What the volume controllers (the PersistentVolume binder, the simulated
// provisioner, the protection controllers) share: how a claim and a volume
// are read, matched and bound, by the rules of kube-controller-manager's
// persistentvolume controller.

// The annotations of claims and volumes that binding and provisioning use.
const (
	annBindCompleted          = "pv.kubernetes.io/bind-completed"
	annBoundByController      = "pv.kubernetes.io/bound-by-controller"
	annSelectedNode           = "volume.kubernetes.io/selected-node"
	annStorageProvisioner     = "volume.kubernetes.io/storage-provisioner"
	annBetaStorageProvisioner = "volume.beta.kubernetes.io/storage-provisioner"
	annProvisionedBy          = "pv.kubernetes.io/provisioned-by"
	annBetaStorageClass       = "volume.beta.kubernetes.io/storage-class"
	annDefaultClass           = "storageclass.kubernetes.io/is-default-class"
	annBetaDefaultClass       = "storageclass.beta.kubernetes.io/is-default-class"
)

var storageClassesV1 = schema.GroupVersionResource{Group: "storage.k8s.io", Version: "v1", Resource: "storageclasses"}

func claimPath(ns, name string) string { return namedPath("", "persistentvolumeclaims", ns, name) }

func volumePath(name string) string { return "/api/v1/persistentvolumes/" + url.PathEscape(name) }

func classPath(name string) string {
	return "/apis/storage.k8s.io/v1/storageclasses/" + url.PathEscape(name)
}

func annotations(o jsonmap.Object) map[string]any {
	a, _ := meta(o)["annotations"].(map[string]any)
	return a
}

func hasAnnotation(o jsonmap.Object, key string) bool {
	_, ok := annotations(o)[key]
	return ok
}

func annotation(o jsonmap.Object, key string) string {
	s, _ := annotations(o)[key].(string)
	return s
}

func setAnnotation(o jsonmap.Object, key, value string) {
	jsonmap.Ensure(meta(o), "annotations")[key] = value
}

// claimClass is the class a claim asks for: the beta annotation's, else
// spec.storageClassName ("" for none).
func claimClass(claim jsonmap.Object) string {
	if a := annotations(claim); a != nil {
		if class, ok := a[annBetaStorageClass].(string); ok {
			return class
		}
	}
	return jsonmap.String(claim, "spec", "storageClassName")
}

// claimHasClass reports whether a claim asks for a class, even "" (no
// class): one that does not gets the default class.
func claimHasClass(claim jsonmap.Object) bool {
	_, named := jsonmap.Child(claim, "spec")["storageClassName"]
	return named || hasAnnotation(claim, annBetaStorageClass)
}

// volumeClass is the class of a volume: the beta annotation's, else
// spec.storageClassName.
func volumeClass(pv jsonmap.Object) string {
	if a := annotations(pv); a != nil {
		if class, ok := a[annBetaStorageClass].(string); ok {
			return class
		}
	}
	return jsonmap.String(pv, "spec", "storageClassName")
}

func isDefaultClass(class jsonmap.Object) bool {
	return annotation(class, annDefaultClass) == "true" || annotation(class, annBetaDefaultClass) == "true"
}

// defaultClass is the default StorageClass of classes: of those annotated
// as default, the newest, and of those created in the same second the
// first by name (classes come sorted by name); nil if none is.
func defaultClass(classes []jsonmap.Object) jsonmap.Object {
	var def jsonmap.Object
	for _, c := range classes {
		if isDefaultClass(c) && (def == nil || jsonmap.String(c, "metadata", "creationTimestamp") > jsonmap.String(def, "metadata", "creationTimestamp")) {
			def = c
		}
	}
	return def
}

// delaysBinding reports whether class binds its claims only once a pod
// that uses them is scheduled.
func delaysBinding(class jsonmap.Object) bool {
	return jsonmap.String(class, "volumeBindingMode") == "WaitForFirstConsumer"
}

// storageOf is the storage quantity at path (a claim's request, a volume's
// capacity); zero if none.
func storageOf(o jsonmap.Object, path ...string) resource.Quantity {
	q, _ := jsonmap.Quantity(jsonmap.Child(o, path...)["storage"])
	return q
}

// volumeModeOf is the volumeMode of a claim's or a volume's spec,
// Filesystem when unset.
func volumeModeOf(o jsonmap.Object) string {
	if m := jsonmap.String(o, "spec", "volumeMode"); m != "" {
		return m
	}
	return "Filesystem"
}

// hasAccessModes reports whether the volume offers every access mode the
// claim asks for.
func hasAccessModes(claim, pv jsonmap.Object) bool {
	offered := jsonmap.Strings(pv, "spec", "accessModes")
	for _, m := range jsonmap.Strings(claim, "spec", "accessModes") {
		if !slices.Contains(offered, m) {
			return false
		}
	}
	return true
}

// claimRef is a volume's spec.claimRef, nil if none.
func claimRef(pv jsonmap.Object) jsonmap.Object { return jsonmap.Child(pv, "spec", "claimRef") }

// boundToClaim reports whether the volume names the claim in its
// claimRef, by a uid that is the claim's or by none (pre-bound by a user).
func boundToClaim(pv, claim jsonmap.Object) bool {
	ref := claimRef(pv)
	if ref == nil || jsonmap.String(ref, "name") != jsonmap.String(claim, "metadata", "name") ||
		jsonmap.String(ref, "namespace") != jsonmap.String(claim, "metadata", "namespace") {
		return false
	}
	uid := jsonmap.String(ref, "uid")
	return uid == "" || uid == jsonmap.String(claim, "metadata", "uid")
}

// referenceTo is the claimRef a volume bound to claim carries.
func referenceTo(claim jsonmap.Object) jsonmap.Object {
	md := meta(claim)
	return jsonmap.Object{"kind": "PersistentVolumeClaim", "namespace": md["namespace"], "name": md["name"],
		"uid": md["uid"], "apiVersion": "v1", "resourceVersion": md["resourceVersion"]}
}

// bindVolumeTo sets claim in pv's claimRef (and marks the binding as the
// controller's when the volume did not name the claim yet); it reports
// whether pv changed.
func bindVolumeTo(pv, claim jsonmap.Object) bool {
	dirty := false
	byController := !boundToClaim(pv, claim)
	ref := claimRef(pv)
	if ref == nil || jsonmap.String(ref, "name") != jsonmap.String(claim, "metadata", "name") ||
		jsonmap.String(ref, "namespace") != jsonmap.String(claim, "metadata", "namespace") ||
		jsonmap.String(ref, "uid") != jsonmap.String(claim, "metadata", "uid") {
		jsonmap.Child(pv, "spec")["claimRef"] = referenceTo(claim)
		dirty = true
	}
	if byController && !hasAnnotation(pv, annBoundByController) {
		setAnnotation(pv, annBoundByController, "yes")
		dirty = true
	}
	return dirty
}

// matchesNode reports whether pv's required node affinity admits a node
// with nodeLabels.
func matchesNode(pv jsonmap.Object, nodeLabels map[string]string) bool {
	terms := jsonmap.Items(jsonmap.Child(pv, "spec", "nodeAffinity", "required")["nodeSelectorTerms"])
	if len(terms) == 0 {
		return true
	}
	for _, term := range terms {
		if matchesTerm(term, nodeLabels) {
			return true
		}
	}
	return false
}

// matchesTerm reports whether a node selector term's label expressions all
// hold of nodeLabels (a term of none matches no node).
func matchesTerm(term jsonmap.Object, nodeLabels map[string]string) bool {
	exprs := jsonmap.Items(term["matchExpressions"])
	if len(exprs) == 0 {
		return false
	}
	ops := map[string]selection.Operator{"In": selection.In, "NotIn": selection.NotIn, "Exists": selection.Exists,
		"DoesNotExist": selection.DoesNotExist, "Gt": selection.GreaterThan, "Lt": selection.LessThan}
	sel := labels.NewSelector()
	for _, e := range exprs {
		op, ok := ops[jsonmap.String(e, "operator")]
		if !ok {
			return false
		}
		r, err := labels.NewRequirement(jsonmap.String(e, "key"), op, jsonmap.Strings(e, "values"))
		if err != nil {
			return false
		}
		sel = sel.Add(*r)
	}
	return sel.Matches(labels.Set(nodeLabels))
}

// findVolumeFor is the best volume of pvs for claim, as the persistentvolume
// controller and the scheduler choose it: one pre-bound to the claim, else
// the smallest available one of the claim's class, mode and access modes,
// big enough, that the claim's selector matches. With delay (the class
// waits for a consumer) and no node, only a pre-bound volume is chosen;
// with a node (nodeLabels not nil), the volume's node affinity must admit it.
func findVolumeFor(claim jsonmap.Object, pvs []jsonmap.Object, delay bool, nodeLabels map[string]string) jsonmap.Object {
	requested := storageOf(claim, "spec", "resources", "requests")
	var selector labels.Selector
	if s := jsonmap.Child(claim, "spec", "selector"); s != nil {
		var ls metav1.LabelSelector
		if err := decodeInto(s, &ls); err != nil {
			return nil
		}
		sel, err := metav1.LabelSelectorAsSelector(&ls)
		if err != nil {
			return nil
		}
		selector = sel
	}
	var best jsonmap.Object
	var bestSize resource.Quantity
	for _, pv := range pvs {
		if claimRef(pv) != nil && !boundToClaim(pv, claim) {
			continue
		}
		size := storageOf(pv, "spec", "capacity")
		if size.Cmp(requested) < 0 || volumeModeOf(pv) != volumeModeOf(claim) || deleting(pv) ||
			jsonmap.String(pv, "spec", "volumeAttributesClassName") != jsonmap.String(claim, "spec", "volumeAttributesClassName") ||
			!hasAccessModes(claim, pv) {
			continue
		}
		nodeOK := nodeLabels == nil || matchesNode(pv, nodeLabels)
		if boundToClaim(pv, claim) {
			if !nodeOK {
				return nil
			}
			return pv
		}
		if nodeLabels == nil && delay {
			continue
		}
		if jsonmap.String(pv, "status", "phase") != "Available" || selector != nil && !selector.Matches(labels.Set(stringMap(jsonmap.Child(pv, "metadata", "labels")))) ||
			volumeClass(pv) != claimClass(claim) || !nodeOK {
			continue
		}
		if best == nil || bestSize.Cmp(size) > 0 {
			best, bestSize = pv, size
		}
	}
	return best
}

func stringMap(m map[string]any) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k], _ = v.(string)
	}
	return out
}

// podClaims are the names of the claims pod uses: those its volumes name,
// and those its ephemeral volumes make (named "<pod>-<volume>").
func podClaims(pod jsonmap.Object) []string {
	var names []string
	for _, v := range jsonmap.Items(jsonmap.Child(pod, "spec")["volumes"]) {
		if name := jsonmap.String(v, "persistentVolumeClaim", "claimName"); name != "" {
			names = append(names, name)
		} else if jsonmap.Child(v, "ephemeral") != nil {
			names = append(names, jsonmap.String(pod, "metadata", "name")+"-"+jsonmap.String(v, "name"))
		}
	}
	return names
}

// podTerminated reports whether pod will run no more: it ended, or it is
// being deleted and none of its containers runs.
func podTerminated(pod jsonmap.Object) bool {
	switch jsonmap.String(pod, "status", "phase") {
	case "Succeeded", "Failed":
		return true
	}
	if !deleting(pod) {
		return false
	}
	for _, list := range []string{"initContainerStatuses", "containerStatuses", "ephemeralContainerStatuses"} {
		for _, s := range jsonmap.Items(jsonmap.Child(pod, "status")[list]) {
			state := jsonmap.Child(s, "state")
			if state["terminated"] == nil && state["waiting"] == nil {
				return false
			}
		}
	}
	return true
}

// nodeLabelsOf are the labels of the node name; a node that does not exist
// has only its hostname label, as the node a local volume names would.
func nodeLabelsOf(ctx context.Context, c *inproc.Client, name string) (map[string]string, error) {
	node, err := get(ctx, c, "/api/v1/nodes/"+url.PathEscape(name))
	if err != nil {
		return nil, err
	}
	if node == nil {
		return map[string]string{"kubernetes.io/hostname": name}, nil
	}
	return stringMap(jsonmap.Child(node, "metadata", "labels")), nil
}

// decodeObject decodes a stored object.
func decodeObject(value []byte) (jsonmap.Object, error) {
	var o jsonmap.Object
	err := json.Unmarshal(value, &o)
	return o, err
}
