package playground

import (
	"context"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"kubeplay/server/inproc"
	"kubeplay/store"
)

// ttlAfterFinishedController is kube-controller-manager's
// ttl-after-finished controller: it deletes a finished Job (and, in the
// foreground, its pods) once spec.ttlSecondsAfterFinished have passed on
// the sandbox clock since it finished. Its keys are "<namespace>/<name>"
// of Jobs.
type ttlAfterFinishedController struct {
	c   *inproc.Client
	now func() time.Time
}

var ttlAfterFinishedDef = controllerDef{name: "ttlAfterFinished", title: "ttl-after-finished controller", serviceAccount: "ttl-after-finished-controller",
	start: func(sb *Sandbox) reconciler {
		return &ttlAfterFinishedController{c: inproc.New(sb.handler, controllerAgent("ttl-after-finished-controller")), now: sb.clock.Now}
	}}

var jobKeyPrefix = builtinKeyPrefix(batchV1("jobs"))

func (tc *ttlAfterFinishedController) resync(ctx context.Context, _ int64) ([]string, error) {
	all, err := listAs[batchv1.Job](ctx, tc.c, allPath(batchV1("jobs")))
	var keys []string
	for _, j := range all {
		if needsCleanup(&j) {
			keys = append(keys, j.Namespace+"/"+j.Name)
		}
	}
	return keys, err
}

func (tc *ttlAfterFinishedController) keysOf(ev store.Event, q queue) {
	if key, ok := strings.CutPrefix(ev.KV.Key, jobKeyPrefix); ok && ev.Type != store.Deleted {
		q.Add(key)
	}
}

func (tc *ttlAfterFinishedController) reconcile(ctx context.Context, key string) (time.Duration, error) {
	ns, name, _ := strings.Cut(key, "/")
	job, err := getTyped[batchv1.Job](ctx, tc.c, namedPath("batch/v1", "jobs", ns, name))
	if err != nil || job == nil || !needsCleanup(job) {
		return 0, err
	}
	finished := jobFinishedCondition(job).LastTransitionTime
	if finished.IsZero() {
		return 0, nil // no time to count from
	}
	if left := finished.Add(time.Duration(*job.Spec.TTLSecondsAfterFinished) * time.Second).Sub(tc.now()); left > 0 {
		return left, nil
	}
	foreground := metav1.DeletePropagationForeground
	opts := metav1.DeleteOptions{TypeMeta: metav1.TypeMeta{Kind: "DeleteOptions", APIVersion: "v1"},
		PropagationPolicy: &foreground, Preconditions: &metav1.Preconditions{UID: &job.UID}}
	if err := tc.c.Do(ctx, "DELETE", namedPath("batch/v1", "jobs", ns, name), opts, nil); err != nil && !apierrors.IsNotFound(err) {
		return 0, err
	}
	return 0, nil
}

// needsCleanup reports whether the Job asks to be deleted some time after
// it finished, and has finished.
func needsCleanup(j *batchv1.Job) bool {
	return j.DeletionTimestamp == nil && j.Spec.TTLSecondsAfterFinished != nil && jobFinished(j)
}
