package playground

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/rand"

	"kubeplay/server/inproc"
)

// The history of a StatefulSet's or DaemonSet's pod template, kept as
// ControllerRevisions as kube-controller-manager's history package keeps
// it: each revision holds a patch that puts the template back, is named
// after its owner and the hash of that patch, and is numbered.

// controllerRevisionHashLabel labels a ControllerRevision with its hash.
const controllerRevisionHashLabel = "controller.kubernetes.io/hash"

// templatePatch is the data of a revision of owner (a typed StatefulSet or
// DaemonSet): a strategic merge patch that replaces its pod template.
func templatePatch(owner any) ([]byte, error) {
	b, err := json.Marshal(owner)
	if err != nil {
		return nil, err
	}
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, err
	}
	spec, _ := raw["spec"].(map[string]any)
	template, _ := spec["template"].(map[string]any)
	if template == nil {
		template = map[string]any{}
	}
	template["$patch"] = "replace"
	return json.Marshal(map[string]any{"spec": map[string]any{"template": template}})
}

// revisionHash is the hash naming a revision of data, with the owner's
// collision count.
func revisionHash(data []byte, collisionCount *int32) string {
	h := fnv.New32()
	h.Write(data)
	if collisionCount != nil {
		h.Write([]byte(strconv.FormatInt(int64(*collisionCount), 10)))
	}
	return rand.SafeEncodeString(fmt.Sprint(h.Sum32()))
}

// newControllerRevision is revision number revision of owner, of kind,
// holding data.
func newControllerRevision(owner metav1.Object, kind string, templateLabels map[string]string, data []byte, revision int64, collisionCount *int32) *appsv1.ControllerRevision {
	hash := revisionHash(data, collisionCount)
	prefix := owner.GetName()
	if len(prefix) > 223 {
		prefix = prefix[:223]
	}
	lbls := maps.Clone(templateLabels)
	if lbls == nil {
		lbls = map[string]string{}
	}
	lbls[controllerRevisionHashLabel] = hash
	yes := true
	return &appsv1.ControllerRevision{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "ControllerRevision"},
		ObjectMeta: metav1.ObjectMeta{Name: prefix + "-" + hash, Namespace: owner.GetNamespace(), Labels: lbls,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: kind, Name: owner.GetName(), UID: owner.GetUID(), Controller: &yes, BlockOwnerDeletion: &yes}}},
		Data: runtime.RawExtension{Raw: data}, Revision: revision}
}

// sameRevision reports whether two revisions hold the same data.
func sameRevision(a, b *appsv1.ControllerRevision) bool {
	if a.Labels[controllerRevisionHashLabel] != b.Labels[controllerRevisionHashLabel] {
		return false
	}
	var x, y any
	json.Unmarshal(a.Data.Raw, &x)
	json.Unmarshal(b.Data.Raw, &y)
	return jsonEqual(x, y)
}

// revisions lists the ControllerRevisions owner controls (claiming by its
// selector), sorted by number.
func revisions(ctx context.Context, c *inproc.Client, owner metav1.Object, kind, ownerPath string, sel labels.Selector) ([]*appsv1.ControllerRevision, error) {
	all, err := listTyped[appsv1.ControllerRevision](ctx, c, workloadCollection("apps/v1", "controllerrevisions", owner.GetNamespace()))
	if err != nil {
		return nil, err
	}
	m := &claimer{c: c, owner: owner, apiVersion: "apps/v1", kind: kind, selector: sel,
		ownedGroup: "apps/v1", ownedResource: "controllerrevisions", ownerPath: ownerPath}
	claimed, err := claim(ctx, m, all)
	slices.SortStableFunc(claimed, func(a, b *appsv1.ControllerRevision) int { return int(a.Revision - b.Revision) })
	return claimed, err
}

// nextRevisionNumber follows the newest of sorted revisions.
func nextRevisionNumber(revs []*appsv1.ControllerRevision) int64 {
	if len(revs) == 0 {
		return 1
	}
	return revs[len(revs)-1].Revision + 1
}

// ensureRevision finds or makes the revision want among revs: one of the
// same data becomes the newest (a rollback) if it is not; a new one is
// created, its name made unique by bumping collisionCount if taken.
func ensureRevision(ctx context.Context, c *inproc.Client, revs []*appsv1.ControllerRevision, want *appsv1.ControllerRevision,
	remake func(collisionCount *int32) *appsv1.ControllerRevision, collisionCount *int32) (*appsv1.ControllerRevision, error) {
	for i := len(revs) - 1; i >= 0; i-- {
		if !sameRevision(revs[i], want) {
			continue
		}
		if i == len(revs)-1 {
			return revs[i], nil
		}
		rev := revs[i].DeepCopy()
		rev.Revision = want.Revision
		var out appsv1.ControllerRevision
		err := c.Do(ctx, "PUT", namedPath("apps/v1", "controllerrevisions", rev.Namespace, rev.Name), rev, &out)
		return &out, err
	}
	for {
		var out appsv1.ControllerRevision
		err := c.Do(ctx, "POST", workloadCollection("apps/v1", "controllerrevisions", want.Namespace), want, &out)
		if !apierrors.IsAlreadyExists(err) {
			return &out, err
		}
		existing, getErr := getTyped[appsv1.ControllerRevision](ctx, c, namedPath("apps/v1", "controllerrevisions", want.Namespace, want.Name))
		if getErr != nil || existing == nil {
			return nil, err
		}
		if sameRevision(existing, want) {
			return existing, nil
		}
		*collisionCount++
		want = remake(collisionCount)
	}
}
