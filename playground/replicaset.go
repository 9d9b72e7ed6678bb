package playground

import (
	"context"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"kubeplay/internal/jsonmap"
	"kubeplay/server/inproc"
	"kubeplay/store"
)

// replicaSetController is kube-controller-manager's ReplicaSet controller:
// it makes or deletes pods until a ReplicaSet has as many as it wants, and
// writes its status. Its keys are "<namespace>/<name>" of ReplicaSets.
type replicaSetController struct {
	c *inproc.Client
}

func init() {
	registerController(controllerDef{name: "replicaSet", title: "replicaset controller", serviceAccount: "replicaset-controller",
		start: func(sb *Sandbox) reconciler {
			return &replicaSetController{c: inproc.New(sb.handler, controllerAgent("replicaset-controller"))}
		}})
}

var replicaSets = ownerKeys{owner: appsV1("replicasets"), owned: coreV1("pods"), kind: "ReplicaSet"}

func (rc *replicaSetController) resync(ctx context.Context, _ int64) ([]string, error) {
	return replicaSets.resync(ctx, rc.c, deleting)
}

func (rc *replicaSetController) keysOf(ev store.Event, q queue) { replicaSets.keysOf(ev, q) }

func (rc *replicaSetController) reconcile(ctx context.Context, key string) (time.Duration, error) {
	rs, owned, err := replicaSets.get(ctx, rc.c, key)
	if err != nil || rs == nil || deleting(rs) {
		return 0, err
	}
	return 0, rc.sync(ctx, rs, owned)
}

// syncReplicaSet makes or deletes pods until rs has as many (pods: those it
// controls) as it wants, and writes its status.
func (rc *replicaSetController) sync(ctx context.Context, rs jsonmap.Object, pods []jsonmap.Object) error {
	var active []jsonmap.Object
	for _, p := range pods {
		if !deleting(p) {
			active = append(active, p)
		}
	}
	desired := intOr(rs, 1, "spec", "replicas")
	for range desired - int64(len(active)) {
		if err := createPod(ctx, rc.c, rs, "apps/v1", "ReplicaSet", nil); err != nil {
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
			if err := rc.c.Do(ctx, "DELETE", objectPath("", "pods", p), nil, nil); err != nil && !apierrors.IsNotFound(err) {
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
	return putStatus(ctx, rc.c, objectPath("apps/v1", "replicasets", rs), before, rs)
}
