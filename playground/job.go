package playground

import (
	"context"
	"time"

	"kubeplay/internal/jsonmap"
	"kubeplay/server/inproc"
	"kubeplay/store"
)

// jobController is kube-controller-manager's Job controller: it makes pods
// for a Job until enough of them succeeded, and writes its status. Its keys
// are "<namespace>/<name>" of Jobs.
type jobController struct {
	c   *inproc.Client
	now func() time.Time
}

func init() {
	registerController(controllerDef{name: "job", title: "job controller", serviceAccount: "job-controller",
		start: func(sb *Sandbox) reconciler {
			return &jobController{c: inproc.New(sb.handler, controllerAgent("job-controller")), now: sb.clock.Now}
		}})
}

var jobs = ownerKeys{owner: batchV1("jobs"), owned: coreV1("pods"), kind: "Job"}

// finished reports whether the Job controller has nothing left to do for job.
func finished(job jsonmap.Object) bool {
	return deleting(job) || jsonmap.Child(job, "status")["completionTime"] != nil
}

func (jc *jobController) resync(ctx context.Context, _ int64) ([]string, error) {
	return jobs.resync(ctx, jc.c, finished)
}

func (jc *jobController) keysOf(ev store.Event, q queue) { jobs.keysOf(ev, q) }

func (jc *jobController) reconcile(ctx context.Context, key string) (time.Duration, error) {
	job, owned, err := jobs.get(ctx, jc.c, key)
	if err != nil || job == nil || finished(job) {
		return 0, err
	}
	return 0, jc.sync(ctx, job, owned)
}

// syncJob makes pods for job (pods: those it controls) until enough of
// them succeeded, and writes its status.
func (jc *jobController) sync(ctx context.Context, job jsonmap.Object, pods []jsonmap.Object) error {
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
			if _, err := createPod(ctx, jc.c, job, "batch/v1", "Job", labels); err != nil {
				return err
			}
			active++
		}
	}
	before := job
	job = copyMap(job)
	now := timestamp(jc.now)
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
	return putStatus(ctx, jc.c, objectPath("batch/v1", "jobs", job), before, job)
}
