package playground

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"kubeplay/internal/jsonmap"
	"kubeplay/server/inproc"
	"kubeplay/store"
)

// jobController is kube-controller-manager's Job controller: it runs a
// Job's pods until enough of them succeeded (or its failure policies say it
// failed), tracking each finished pod through the job-tracking finalizer and
// status.uncountedTerminatedPods, and writes the Job's status, conditions
// and events as the real one does. Its keys are "<namespace>/<name>" of Jobs.
type jobController struct {
	c      *inproc.Client
	now    func() time.Time
	events *eventRecorder
	// backoff holds, per Job, the pod failures since its last success,
	// which delay the next pod (exponentially). Like the real controller's,
	// it lives in memory: a restart forgets it. Only the one worker
	// goroutine touches it.
	backoff map[types.UID]jobBackoff
	keys    *selectorKeys
}

// jobBackoff is a Job's pod failures since its last pod success.
type jobBackoff struct {
	failures    int
	lastFailure time.Time
}

var jobDef = controllerDef{name: "job", title: "job controller", serviceAccount: "job-controller",
	start: func(sb *Sandbox) reconciler {
		c := inproc.New(sb.handler, controllerAgent("job-controller"))
		return &jobController{c: c, now: sb.clock.Now, events: newEventRecorder(c, "job-controller", "", sb.clock.Now),
			backoff: map[types.UID]jobBackoff{}, keys: newSelectorKeys(batchV1("jobs"), coreV1("pods"), "Job", labelSelectorOf)}
	}}

const (
	jobTrackingFinalizer     = batchv1.JobTrackingFinalizer
	completionIndexKey       = batchv1.JobCompletionIndexAnnotation
	indexFailureCountKey     = batchv1.JobIndexFailureCountAnnotation
	indexIgnoredFailuresKey  = batchv1.JobIndexIgnoredFailureCountAnnotation
	jobControllerManagerName = batchv1.JobControllerName
	// podFailureBackoff is the delay before a Job's pod replaces a failed
	// one, doubled with each failure since the last success, up to
	// maxPodFailureBackoff.
	podFailureBackoff    = 10 * time.Second
	maxPodFailureBackoff = 10 * time.Minute
	// maxUncountedPods bounds the pods counted in one look, as upstream
	// bounds status.uncountedTerminatedPods.
	maxUncountedPods = 500
)

// resync looks at every Job not finished, and at the Job of every finished
// pod that still holds the tracking finalizer.
func (jc *jobController) resync(ctx context.Context, _ int64) ([]string, error) {
	keys, err := jc.keys.resync(ctx, jc.c, func(o jsonmap.Object) bool {
		var job batchv1.Job
		return decodeInto(o, &job) == nil && jobFinished(&job)
	})
	if err != nil {
		return nil, err
	}
	pods, err := listAs[corev1.Pod](ctx, jc.c, allPath(coreV1("pods")))
	if err != nil {
		return nil, err
	}
	for _, p := range pods {
		if ref := metav1.GetControllerOf(&p); ref != nil && ref.Kind == "Job" && hasTrackingFinalizer(&p) && (podEnded(&p) || p.DeletionTimestamp != nil) {
			keys = append(keys, p.Namespace+"/"+ref.Name)
		}
	}
	return keys, nil
}

func (jc *jobController) keysOf(ev store.Event, q queue) { jc.keys.keysOf(ev, q) }

func (jc *jobController) reconcile(ctx context.Context, key string) (time.Duration, error) {
	ns, name, _ := strings.Cut(key, "/")
	job, err := getTyped[batchv1.Job](ctx, jc.c, namedPath("batch/v1", "jobs", ns, name))
	if err != nil {
		return 0, err
	}
	all, err := listAs[corev1.Pod](ctx, jc.c, workloadCollection("", "pods", ns))
	if err != nil {
		return 0, err
	}
	var candidates, orphans []*corev1.Pod
	for i := range all {
		p := &all[i]
		ref := metav1.GetControllerOf(p)
		if ref == nil {
			candidates = append(candidates, p) // one the Job may adopt
			continue
		}
		if ref.Kind != "Job" || !strings.HasPrefix(ref.APIVersion, "batch/") || ref.Name != name {
			continue
		}
		if job != nil && ref.UID == job.UID {
			candidates = append(candidates, p)
		} else if hasTrackingFinalizer(p) {
			orphans = append(orphans, p)
		}
	}
	// A pod whose Job is gone is counted by nobody: let it go.
	if _, err := jc.removeFinalizers(ctx, orphans); err != nil || job == nil {
		return 0, err
	}
	if job.Spec.ManagedBy != nil && *job.Spec.ManagedBy != jobControllerManagerName {
		return 0, nil // another controller's
	}
	pods, err := jc.claimPods(ctx, job, candidates)
	if err != nil {
		return 0, err
	}
	if jobFinished(job) {
		delete(jc.backoff, job.UID)
		var held []*corev1.Pod
		for _, p := range pods {
			if hasTrackingFinalizer(p) {
				held = append(held, p)
			}
		}
		_, err := jc.removeFinalizers(ctx, held)
		return 0, err
	}
	return jc.sync(ctx, job, pods)
}

// claimPods returns the pods job controls once it has adopted the orphans
// its selector matches (adding the tracking finalizer, as the pods it makes
// have) and released those it controls that its selector no longer matches
// (removing it: nobody counts them any more).
func (jc *jobController) claimPods(ctx context.Context, job *batchv1.Job, pods []*corev1.Pod) ([]*corev1.Pod, error) {
	sel, err := metav1.LabelSelectorAsSelector(job.Spec.Selector)
	if err != nil || sel.Empty() {
		sel = nil // it selects nothing
	}
	m := &claimer{c: jc.c, owner: job, apiVersion: "batch/v1", kind: "Job", selector: sel, ownedResource: "pods",
		ownerPath: namedPath("batch/v1", "jobs", job.Namespace, job.Name), finalizers: []string{jobTrackingFinalizer}}
	return claim(ctx, m, pods)
}

// jobLook is what one look at a Job found and decided.
type jobLook struct {
	job         *batchv1.Job
	pods        []*corev1.Pod
	active      []*corev1.Pod
	ready       int32
	terminating int32
	// uncountedSucceeded and uncountedFailed are the uids in
	// status.uncountedTerminatedPods as the look began.
	uncountedSucceeded, uncountedFailed map[types.UID]bool
	succeeded                           int32
	backoff                             jobBackoff
	// succeededIndexes and failedIndexes are an Indexed Job's, counting
	// the pods of this look; prevSucceeded those the status held.
	prevSucceeded, succeededIndexes indexIntervals
	failedIndexes                   *indexIntervals
	// finished is the condition the Job reaches (FailureTarget,
	// SuccessCriteriaMet, then Failed or Complete); nil while it runs.
	finished *batchv1.JobCondition
	// after asks for another look then (a deadline, a backoff ends).
	after time.Duration
}

func (l *jobLook) lookAgain(d time.Duration) {
	if d > 0 && (l.after == 0 || d < l.after) {
		l.after = d
	}
}

// sync is one pass of the Job controller over job and the pods it controls.
func (jc *jobController) sync(ctx context.Context, job *batchv1.Job, pods []*corev1.Pod) (time.Duration, error) {
	now := jc.now()
	st := &job.Status
	if st.UncountedTerminatedPods == nil {
		st.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{}
	}
	l := &jobLook{job: job, pods: pods, uncountedSucceeded: uidSet(st.UncountedTerminatedPods.Succeeded), uncountedFailed: uidSet(st.UncountedTerminatedPods.Failed)}
	for _, p := range pods {
		switch {
		case podEnded(p):
		case p.DeletionTimestamp != nil:
			l.terminating++
		default:
			l.active = append(l.active, p)
			if podIsReady(p) {
				l.ready++
			}
		}
	}
	var newSucceeded, newFailed []*corev1.Pod
	for _, p := range pods {
		if !hasTrackingFinalizer(p) {
			continue
		}
		if p.Status.Phase == corev1.PodSucceeded && !l.uncountedSucceeded[p.UID] {
			newSucceeded = append(newSucceeded, p)
		} else if podFailed(p, job) && !l.uncountedFailed[p.UID] {
			newFailed = append(newFailed, p)
		}
	}
	l.succeeded = st.Succeeded + int32(len(newSucceeded)+len(l.uncountedSucceeded))
	failed := st.Failed + int32(countedFailures(job, newFailed)+len(l.uncountedFailed))
	if st.StartTime == nil && !jobSuspended(job) {
		st.StartTime = &metav1.Time{Time: now}
	}
	l.backoff = nextBackoff(jc.backoff[job.UID], newSucceeded, newFailed)

	// The end states, in upstream's order: what an earlier look decided,
	// the failure policies, the backoff limit and deadline, then success.
	if c := findJobCondition(job, batchv1.JobSuccessCriteriaMet); c != nil && c.Status == corev1.ConditionTrue {
		l.finished = c
	} else if c := findJobCondition(job, batchv1.JobFailureTarget); c != nil && c.Status == corev1.ConditionTrue {
		l.finished = jobCondition(batchv1.JobFailed, c.Reason, c.Message, now)
	} else if msg := failJobMessage(job, pods); msg != "" {
		l.finished = jobCondition(batchv1.JobFailureTarget, batchv1.JobReasonPodFailurePolicy, msg, now)
	}
	if l.finished == nil {
		switch {
		case failed > ptrOr(job.Spec.BackoffLimit, 6) || pastBackoffLimitOnFailure(job, pods):
			l.finished = jobCondition(batchv1.JobFailureTarget, batchv1.JobReasonBackoffLimitExceeded, "Job has reached the specified backoff limit", now)
		case job.Spec.ActiveDeadlineSeconds != nil && st.StartTime != nil && !jobSuspended(job):
			left := time.Duration(*job.Spec.ActiveDeadlineSeconds)*time.Second - now.Sub(st.StartTime.Time)
			if left <= 0 {
				l.finished = jobCondition(batchv1.JobFailureTarget, batchv1.JobReasonDeadlineExceeded, "Job was active longer than specified deadline", now)
			} else {
				l.lookAgain(left)
			}
		}
	}
	if indexedJob(job) {
		completions := int(ptrOr(job.Spec.Completions, 1))
		l.prevSucceeded = parseIndexes(st.CompletedIndexes, completions)
		l.succeededIndexes = l.prevSucceeded
		for _, p := range pods {
			if ix := completionIndex(p); p.Status.Phase == corev1.PodSucceeded && ix >= 0 && ix < completions && hasTrackingFinalizer(p) {
				l.succeededIndexes = l.succeededIndexes.withIndexes(ix)
			}
		}
		l.succeeded = int32(l.succeededIndexes.total())
		if job.Spec.BackoffLimitPerIndex != nil {
			failedIx := parseIndexes(ptrOr(st.FailedIndexes, ""), completions)
			for _, p := range pods {
				if ix := completionIndex(p); ix >= 0 && ix < completions && hasTrackingFinalizer(p) && indexFailed(job, p) {
					failedIx = failedIx.withIndexes(ix)
				}
			}
			l.failedIndexes = &failedIx
			if l.finished == nil {
				if job.Spec.MaxFailedIndexes != nil && failedIx.total() > int(*job.Spec.MaxFailedIndexes) {
					l.finished = jobCondition(batchv1.JobFailureTarget, batchv1.JobReasonMaxFailedIndexesExceeded, "Job has exceeded the specified maximal number of failed indexes", now)
				} else if failedIx.total() > 0 && failedIx.total()+l.succeededIndexes.total() >= completions {
					l.finished = jobCondition(batchv1.JobFailureTarget, batchv1.JobReasonFailedIndexes, "Job has failed indexes", now)
				}
			}
		}
		if l.finished == nil {
			if msg, met := matchSuccessPolicy(job, l.succeededIndexes); met {
				l.finished = jobCondition(batchv1.JobSuccessCriteriaMet, batchv1.JobReasonSuccessPolicy, msg, now)
			}
		}
	}

	var manageErr error
	suspendChanged := false
	if l.finished != nil {
		// A Job that ends stops its pods; their finalizers go below.
		deleted, deletedReady, err := jc.deletePods(ctx, job, l.active, false)
		if deleted != len(l.active) {
			l.finished = nil // not yet: pods remain
		}
		l.terminating += int32(deleted)
		l.ready -= int32(deletedReady)
		l.active = l.active[deleted:]
		manageErr = err
	} else {
		managed := job.DeletionTimestamp == nil
		if managed {
			manageErr = jc.manage(ctx, l)
		}
		var complete bool
		if job.Spec.Completions == nil {
			complete = l.succeeded > 0 && len(l.active) == 0
		} else {
			complete = l.succeeded >= *job.Spec.Completions && len(l.active) == 0
		}
		switch {
		case complete:
			l.finished = jobCondition(batchv1.JobSuccessCriteriaMet, batchv1.JobReasonCompletionsReached, "Reached expected number of succeeded pods", now)
		case managed && jobSuspended(job):
			if setJobCondition(job, batchv1.JobSuspended, corev1.ConditionTrue, "JobSuspended", "Job suspended", now) {
				suspendChanged = true
				jc.jobEvent(ctx, job, corev1.EventTypeNormal, "Suspended", "Job suspended")
				st.StartTime = nil
			}
		case managed:
			if setJobCondition(job, batchv1.JobSuspended, corev1.ConditionFalse, "JobResumed", "Job resumed", now) {
				suspendChanged = true
				jc.jobEvent(ctx, job, corev1.EventTypeNormal, "Resumed", "Job resumed")
				// The deadline counts the time a Job runs, from its resumption.
				st.StartTime = &metav1.Time{Time: now}
			}
		}
	}
	needsFlush := suspendChanged || int32(len(l.active)) != st.Active || st.Ready == nil || *st.Ready != l.ready ||
		st.Terminating == nil || *st.Terminating != l.terminating
	st.Active, st.Ready, st.Terminating = int32(len(l.active)), &l.ready, &l.terminating
	if err := jc.track(ctx, l, needsFlush); err != nil {
		return 0, err
	}
	if manageErr != nil {
		return 0, manageErr
	}
	if jobFinished(l.job) {
		return 0, nil
	}
	return l.after, nil
}

// manage creates or deletes pods so that as many run as the Job wants:
// parallelism, bounded by the completions left; none while suspended.
func (jc *jobController) manage(ctx context.Context, l *jobLook) error {
	job := l.job
	active := len(l.active)
	if jobSuspended(job) {
		deleted, deletedReady, err := jc.deletePods(ctx, job, rankForRemoval(job, l.active, active), true)
		l.dropActive(deleted, deletedReady)
		return err
	}
	parallelism := int(ptrOr(job.Spec.Parallelism, 1))
	var want int
	if job.Spec.Completions == nil {
		want = parallelism
		if l.succeeded > 0 {
			want = active // one success: let the rest finish
		}
	} else {
		want = max(0, min(int(*job.Spec.Completions-l.succeeded), parallelism))
	}
	if remove := rankForRemoval(job, l.active, max(0, active-want)); len(remove) > 0 {
		deleted, deletedReady, err := jc.deletePods(ctx, job, remove, true)
		l.dropActive(deleted, deletedReady)
		return err
	}
	if active >= want {
		return nil
	}
	if wait := l.backoff.remaining(jc.now()); wait > 0 {
		l.lookAgain(wait)
		return nil
	}
	diff := want - active
	if onlyReplaceFailed(job) {
		diff -= int(l.terminating)
	}
	if diff <= 0 {
		return nil
	}
	indexes := []int{-1}
	if indexedJob(job) {
		indexes = jc.pendingIndexes(l, diff)
	} else {
		indexes = slices.Repeat(indexes, diff)
	}
	for _, ix := range indexes {
		pod := newJobPod(job, ix)
		if job.Spec.BackoffLimitPerIndex != nil {
			failures, ignored := indexFailureCounts(job, lastFailedPod(l.pods, ix))
			pod.Annotations[indexFailureCountKey] = strconv.Itoa(failures)
			if ignored > 0 {
				pod.Annotations[indexIgnoredFailuresKey] = strconv.Itoa(ignored)
			}
		}
		var created corev1.Pod
		if err := jc.c.Do(ctx, "POST", workloadCollection("", "pods", job.Namespace), pod, &created); err != nil {
			if apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
				return nil // the namespace goes, and the Job with it
			}
			jc.jobEvent(ctx, job, corev1.EventTypeWarning, "FailedCreate", fmt.Sprintf("Error creating: %v", err))
			return err
		}
		jc.jobEvent(ctx, job, corev1.EventTypeNormal, "SuccessfulCreate", "Created pod: "+created.Name)
		l.active = append(l.active, &created)
	}
	return nil
}

// dropActive takes the first n of l.active, just deleted, out of it.
func (l *jobLook) dropActive(n, ready int) {
	gone := l.active[:n]
	l.active = l.active[n:]
	l.ready -= int32(ready)
	l.terminating += int32(len(gone))
}

// pendingIndexes are up to n indexes of an Indexed Job that no pod runs
// and that neither succeeded nor failed, lowest first, leaving out those
// whose last pod failed too recently (per-index backoff).
func (jc *jobController) pendingIndexes(l *jobLook, n int) []int {
	job := l.job
	completions := int(ptrOr(job.Spec.Completions, 1))
	busy := map[int]bool{}
	for _, p := range l.active {
		busy[completionIndex(p)] = true
	}
	if onlyReplaceFailed(job) {
		for _, p := range l.pods {
			if p.DeletionTimestamp != nil && !podEnded(p) {
				busy[completionIndex(p)] = true
			}
		}
	}
	var out []int
	for ix := 0; ix < completions && len(out) < n; ix++ {
		if busy[ix] || l.succeededIndexes.has(ix) || (l.failedIndexes != nil && l.failedIndexes.has(ix)) {
			continue
		}
		if job.Spec.BackoffLimitPerIndex != nil {
			if last := lastFailedPod(l.pods, ix); last != nil {
				failures, _ := indexFailureCounts(job, last)
				b := jobBackoff{failures: failures, lastFailure: podFinishTime(last)}
				if wait := b.remaining(jc.now()); wait > 0 {
					l.lookAgain(wait)
					continue
				}
			}
		}
		out = append(out, ix)
	}
	return out
}

// deletePods deletes pods (ranked first to go first) and counts those
// deleted and, of them, the ready ones. dropFinalizer removes the tracking
// finalizer first, so that they are not counted as failures (a Job
// suspended or scaled down).
func (jc *jobController) deletePods(ctx context.Context, job *batchv1.Job, pods []*corev1.Pod, dropFinalizer bool) (deleted, ready int, err error) {
	for _, p := range pods {
		if dropFinalizer && hasTrackingFinalizer(p) {
			if _, err := jc.removeFinalizers(ctx, []*corev1.Pod{p}); err != nil {
				return deleted, ready, err
			}
		}
		if err := jc.c.Do(ctx, "DELETE", namedPath("", "pods", p.Namespace, p.Name), nil, nil); err != nil && !apierrors.IsNotFound(err) {
			jc.jobEvent(ctx, job, corev1.EventTypeWarning, "FailedDelete", fmt.Sprintf("Error deleting: %v", err))
			return deleted, ready, err
		}
		jc.jobEvent(ctx, job, corev1.EventTypeNormal, "SuccessfulDelete", "Deleted pod: "+p.Name)
		deleted++
		if podIsReady(p) {
			ready++
		}
	}
	return deleted, ready, nil
}

// track counts the Job's finished pods as upstream does, so that none is
// counted twice or lost: it notes them in status.uncountedTerminatedPods,
// removes their tracking finalizers, then moves them to the counters; and
// once no pod is left uncounted or terminating, it sets the Complete or
// Failed condition.
func (jc *jobController) track(ctx context.Context, l *jobLook, needsFlush bool) error {
	job, now := l.job, jc.now()
	st := &job.Status
	uncounted := st.UncountedTerminatedPods
	indexed := indexedJob(job)
	completions := int(ptrOr(job.Spec.Completions, 1))
	if indexed {
		slices.SortStableFunc(l.pods, func(a, b *corev1.Pod) int { return cmp.Compare(completionIndex(a), completionIndex(b)) })
	}
	held := map[types.UID]bool{}
	for _, p := range l.pods {
		if hasTrackingFinalizer(p) {
			held[p.UID] = true
		}
	}
	if countUncounted(st, held) {
		needsFlush = true
	}
	var release []*corev1.Pod
	var newSucceededIndexes []int
	tooMany := false
	for _, p := range l.pods {
		if !hasTrackingFinalizer(p) {
			continue
		}
		failed := podFailed(p, job)
		if job.DeletionTimestamp == nil && l.finished == nil && p.Status.Phase != corev1.PodSucceeded && !failed {
			continue
		}
		release = append(release, p)
		ix := completionIndex(p)
		if p.Status.Phase == corev1.PodSucceeded && !l.uncountedFailed[p.UID] {
			if indexed {
				if ix >= 0 && ix < completions && !l.prevSucceeded.has(ix) {
					newSucceededIndexes = append(newSucceededIndexes, ix)
					needsFlush = true
				}
			} else if !l.uncountedSucceeded[p.UID] {
				uncounted.Succeeded = append(uncounted.Succeeded, p.UID)
				needsFlush = true
			}
		} else if failed || (l.finished != nil && l.finished.Type != batchv1.JobSuccessCriteriaMet) {
			// A Job that ends counts its unfinished pods as failed.
			if !l.uncountedFailed[p.UID] && (!indexed || (ix >= 0 && ix < completions)) {
				if _, counts, _ := matchPodFailurePolicy(job.Spec.PodFailurePolicy, p); counts {
					uncounted.Failed = append(uncounted.Failed, p.UID)
					needsFlush = true
				}
			}
		}
		if len(newSucceededIndexes)+len(uncounted.Succeeded)+len(uncounted.Failed) >= maxUncountedPods {
			tooMany = true // the status writes below name the Job again
			break
		}
	}
	if indexed {
		l.succeededIndexes = l.succeededIndexes.withIndexes(newSucceededIndexes...)
		if s := l.succeededIndexes.String(); s != st.CompletedIndexes {
			st.CompletedIndexes = s
			needsFlush = true
		}
		st.Succeeded = int32(l.succeededIndexes.total())
		var failedIndexes *string
		if l.failedIndexes != nil {
			failedIndexes = new(l.failedIndexes.String())
		}
		if !samePtr(failedIndexes, st.FailedIndexes) {
			st.FailedIndexes = failedIndexes
			needsFlush = true
		}
	}
	// The interim condition is written before the finalizers go, the
	// final one after.
	switch {
	case l.finished != nil && l.finished.Type == batchv1.JobFailureTarget:
		st.Conditions = append(st.Conditions, *l.finished)
		needsFlush = true
		l.finished = jobCondition(batchv1.JobFailed, l.finished.Reason, l.finished.Message, now)
	case l.finished != nil && l.finished.Type == batchv1.JobSuccessCriteriaMet:
		if findJobCondition(job, batchv1.JobSuccessCriteriaMet) == nil {
			st.Conditions = append(st.Conditions, *l.finished)
			needsFlush = true
		}
		l.finished = jobCondition(batchv1.JobComplete, l.finished.Reason, l.finished.Message, now)
	}
	if needsFlush {
		if err := jc.putStatus(ctx, job); err != nil {
			return err
		}
		jc.backoff[job.UID] = l.backoff
		needsFlush = false
	}
	released, rmErr := jc.removeFinalizers(ctx, release)
	for _, uid := range released {
		delete(held, uid)
	}
	if countUncounted(st, held) {
		needsFlush = true
	}
	if rmErr != nil {
		if needsFlush {
			if err := jc.putStatus(ctx, job); err != nil {
				return err
			}
		}
		return rmErr
	}
	finishedNow := !tooMany && l.finished != nil && len(uncounted.Succeeded)+len(uncounted.Failed) == 0 && *st.Terminating == 0
	if finishedNow {
		c := l.finished
		setJobCondition(job, c.Type, c.Status, c.Reason, c.Message, now)
		if c.Type == batchv1.JobComplete {
			st.CompletionTime = &c.LastTransitionTime
		}
		needsFlush = true
	}
	if !needsFlush {
		return nil
	}
	if err := jc.putStatus(ctx, job); err != nil {
		return err
	}
	if finishedNow {
		delete(jc.backoff, job.UID)
		if l.finished.Type == batchv1.JobComplete {
			if job.Spec.Completions != nil && st.Succeeded > *job.Spec.Completions {
				jc.jobEvent(ctx, job, corev1.EventTypeWarning, "TooManySucceededPods", "Too many succeeded pods running after completion count reached")
			}
			jc.jobEvent(ctx, job, corev1.EventTypeNormal, "Completed", "Job completed")
		} else {
			jc.jobEvent(ctx, job, corev1.EventTypeWarning, l.finished.Reason, l.finished.Message)
		}
	}
	return nil
}

// countUncounted moves the pods of status.uncountedTerminatedPods that no
// longer hold the finalizer (held) to the counters; it reports a change.
func countUncounted(st *batchv1.JobStatus, held map[types.UID]bool) bool {
	keep := func(uids []types.UID) []types.UID {
		var out []types.UID
		for _, uid := range uids {
			if held[uid] {
				out = append(out, uid)
			}
		}
		return out
	}
	u := st.UncountedTerminatedPods
	succeeded, failed := keep(u.Succeeded), keep(u.Failed)
	changed := len(succeeded) != len(u.Succeeded) || len(failed) != len(u.Failed)
	st.Succeeded += int32(len(u.Succeeded) - len(succeeded))
	st.Failed += int32(len(u.Failed) - len(failed))
	u.Succeeded, u.Failed = succeeded, failed
	return changed
}

// putStatus writes job's status and keeps what the API answered (its new
// resourceVersion) in job.
func (jc *jobController) putStatus(ctx context.Context, job *batchv1.Job) error {
	job.APIVersion, job.Kind = "batch/v1", "Job"
	return jc.c.Do(ctx, "PUT", namedPath("batch/v1", "jobs", job.Namespace, job.Name)+"/status", job, job)
}

// removeFinalizers removes the tracking finalizer from pods, as the real
// controller does with a strategic merge patch; it returns the uids of the
// pods that no longer hold it (a pod gone holds nothing).
func (jc *jobController) removeFinalizers(ctx context.Context, pods []*corev1.Pod) ([]types.UID, error) {
	patch := map[string]any{"metadata": map[string]any{"$deleteFromPrimitiveList/finalizers": []string{jobTrackingFinalizer}}}
	var done []types.UID
	for _, p := range pods {
		err := jc.c.Patch(ctx, namedPath("", "pods", p.Namespace, p.Name), "application/strategic-merge-patch+json", patch, nil)
		if err != nil && !apierrors.IsNotFound(err) {
			return done, err
		}
		done = append(done, p.UID)
	}
	return done, nil
}

func (jc *jobController) jobEvent(ctx context.Context, job *batchv1.Job, eventType, reason, message string) {
	ref := objectRef{APIVersion: "batch/v1", Kind: "Job", Namespace: job.Namespace, Name: job.Name, UID: string(job.UID), ResourceVersion: job.ResourceVersion}
	jc.events.event(ctx, ref, eventType, reason, message)
}

// newJobPod is a pod of job's template for completion index ix (-1 for a
// NonIndexed Job), controlled by job and held by the tracking finalizer.
func newJobPod(job *batchv1.Job, ix int) *corev1.Pod {
	t := job.Spec.Template.DeepCopy()
	pod := &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{GenerateName: job.Name + "-", Namespace: job.Namespace, Labels: t.Labels, Annotations: t.Annotations,
			Finalizers:      append(t.Finalizers, jobTrackingFinalizer),
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(job, batchv1.SchemeGroupVersion.WithKind("Job"))}},
		Spec: t.Spec}
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	if ix < 0 {
		return pod
	}
	s := strconv.Itoa(ix)
	suffix := "-" + s + "-"
	// A generated name keeps 5 characters of the 63 for its random part.
	pod.GenerateName = job.Name[:min(len(job.Name), 58-len(suffix))] + suffix
	pod.Annotations[completionIndexKey] = s
	if pod.Labels == nil {
		pod.Labels = map[string]string{}
	}
	pod.Labels[completionIndexKey] = s
	if pod.Spec.Hostname == "" {
		pod.Spec.Hostname = job.Name + "-" + s
	}
	env := corev1.EnvVar{Name: "JOB_COMPLETION_INDEX", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{
		FieldPath: "metadata.annotations['" + completionIndexKey + "']"}}}
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			if !slices.ContainsFunc(cs[i].Env, func(e corev1.EnvVar) bool { return e.Name == env.Name }) {
				cs[i].Env = append(cs[i].Env, env)
			}
		}
	}
	return pod
}

// rankForRemoval picks n of active to delete: for an Indexed Job first the
// pods of an index out of range or run twice, then the least advanced
// (unscheduled, pending, not ready, newest).
func rankForRemoval(job *batchv1.Job, active []*corev1.Pod, n int) []*corev1.Pod {
	if n <= 0 && !indexedJob(job) {
		return nil
	}
	var extra, rest []*corev1.Pod
	if indexedJob(job) {
		completions := int(ptrOr(job.Spec.Completions, 1))
		seen := map[int]bool{}
		for _, p := range active {
			if ix := completionIndex(p); ix < 0 || ix >= completions || seen[ix] {
				extra = append(extra, p)
			} else {
				seen[ix] = true
				rest = append(rest, p)
			}
		}
	} else {
		rest = slices.Clone(active)
	}
	slices.SortStableFunc(rest, func(a, b *corev1.Pod) int {
		rank := func(p *corev1.Pod) []int {
			progress := 0 // unscheduled or of no known phase
			if p.Spec.NodeName != "" && p.Status.Phase == corev1.PodPending {
				progress = 1
			} else if p.Spec.NodeName != "" && p.Status.Phase == corev1.PodRunning {
				progress = 2
			}
			return []int{progress, boolInt(podIsReady(p)), -int(p.CreationTimestamp.Unix())}
		}
		return slices.Compare(rank(a), rank(b))
	})
	return append(extra, rest[:min(len(rest), max(0, n-len(extra)))]...)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// nextBackoff is b after pods newly succeeded or failed: a success starts
// the count again from the failures after it.
func nextBackoff(b jobBackoff, succeeded, failed []*corev1.Pod) jobBackoff {
	if len(succeeded) == 0 && len(failed) == 0 {
		return b
	}
	var lastSuccess time.Time
	if len(succeeded) > 0 {
		b = jobBackoff{}
		for _, p := range succeeded {
			if t := podFinishTime(p); t.After(lastSuccess) {
				lastSuccess = t
			}
		}
	}
	for _, p := range failed {
		if t := podFinishTime(p); t.After(lastSuccess) {
			b.failures++
			if t.After(b.lastFailure) {
				b.lastFailure = t
			}
		}
	}
	return b
}

// remaining is how long the next pod waits: 10s doubled with each failure
// after the first, at most 10 minutes, from the last failure.
func (b jobBackoff) remaining(now time.Time) time.Duration {
	if b.failures == 0 {
		return 0
	}
	delay := maxPodFailureBackoff
	if b.failures <= 7 {
		delay = min(maxPodFailureBackoff, podFailureBackoff*time.Duration(math.Pow(2, float64(b.failures-1))))
	}
	return max(0, b.lastFailure.Add(delay).Sub(now))
}

// podFinishTime is when p's containers last ended, else when it stopped
// being ready or was deleted, else when it was created.
func podFinishTime(p *corev1.Pod) time.Time {
	var t time.Time
	for _, cs := range append(slices.Clone(p.Status.ContainerStatuses), p.Status.InitContainerStatuses...) {
		if term := cs.State.Terminated; term != nil && term.FinishedAt.After(t) {
			t = term.FinishedAt.Time
		}
	}
	if !t.IsZero() {
		return t
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionFalse && !c.LastTransitionTime.IsZero() {
			return c.LastTransitionTime.Time
		}
	}
	if p.DeletionTimestamp != nil {
		// When it was deleted: the timestamp is when its grace period ends.
		return p.DeletionTimestamp.Add(-time.Duration(ptrOr(p.DeletionGracePeriodSeconds, 0)) * time.Second)
	}
	return p.CreationTimestamp.Time
}

// podFailed reports whether p counts as a failure: it failed, or, unless
// the Job replaces only failed pods, it is being deleted before it
// succeeded (it may never reach a phase).
func podFailed(p *corev1.Pod, job *batchv1.Job) bool {
	if p.Status.Phase == corev1.PodFailed {
		return true
	}
	return !onlyReplaceFailed(job) && p.DeletionTimestamp != nil && p.Status.Phase != corev1.PodSucceeded
}

func onlyReplaceFailed(job *batchv1.Job) bool {
	if p := job.Spec.PodReplacementPolicy; p != nil {
		return *p == batchv1.Failed
	}
	return job.Spec.PodFailurePolicy != nil
}

// countedFailures counts the failed pods that the pod failure policy does
// not ignore.
func countedFailures(job *batchv1.Job, failed []*corev1.Pod) int {
	n := 0
	for _, p := range failed {
		if _, counts, _ := matchPodFailurePolicy(job.Spec.PodFailurePolicy, p); counts {
			n++
		}
	}
	return n
}

// failJobMessage is why a failed pod fails the whole Job under its pod
// failure policy (a FailJob rule), "" if none does.
func failJobMessage(job *batchv1.Job, pods []*corev1.Pod) string {
	if job.Spec.PodFailurePolicy == nil {
		return ""
	}
	for _, p := range pods {
		if podFailed(p, job) {
			if msg, _, _ := matchPodFailurePolicy(job.Spec.PodFailurePolicy, p); msg != "" {
				return msg
			}
		}
	}
	return ""
}

// matchPodFailurePolicy applies the first rule of policy that matches the
// failed pod p: the message of a FailJob rule, whether the failure counts
// against the backoff limit, and the action (nil when no rule matched).
func matchPodFailurePolicy(policy *batchv1.PodFailurePolicy, p *corev1.Pod) (string, bool, *batchv1.PodFailurePolicyAction) {
	if policy == nil {
		return "", true, nil
	}
	for i, rule := range policy.Rules {
		action := rule.Action
		var msg string
		switch {
		case rule.OnExitCodes != nil:
			cs := matchOnExitCodes(p, rule.OnExitCodes)
			if cs == nil {
				continue
			}
			msg = fmt.Sprintf("Container %s for pod %s/%s failed with exit code %v matching %v rule at index %d",
				cs.Name, p.Namespace, p.Name, cs.State.Terminated.ExitCode, action, i)
		case rule.OnPodConditions != nil:
			c := matchOnPodConditions(p, rule.OnPodConditions)
			if c == nil {
				continue
			}
			msg = fmt.Sprintf("Pod %s/%s has condition %v matching %v rule at index %d", p.Namespace, p.Name, c.Type, action, i)
		default:
			continue
		}
		switch action {
		case batchv1.PodFailurePolicyActionIgnore:
			return "", false, &action
		case batchv1.PodFailurePolicyActionFailJob:
			return msg, true, &action
		default: // Count, FailIndex
			return "", true, &action
		}
	}
	return "", true, nil
}

// matchOnExitCodes is the first container (then init container) of p that
// ended with a non-zero exit code the requirement names.
func matchOnExitCodes(p *corev1.Pod, req *batchv1.PodFailurePolicyOnExitCodesRequirement) *corev1.ContainerStatus {
	for _, list := range [][]corev1.ContainerStatus{p.Status.ContainerStatuses, p.Status.InitContainerStatuses} {
		for i, cs := range list {
			term := cs.State.Terminated
			if term == nil || term.ExitCode == 0 || (req.ContainerName != nil && *req.ContainerName != cs.Name) {
				continue
			}
			if slices.Contains(req.Values, term.ExitCode) == (req.Operator == batchv1.PodFailurePolicyOnExitCodesOpIn) {
				return &list[i]
			}
		}
	}
	return nil
}

func matchOnPodConditions(p *corev1.Pod, patterns []batchv1.PodFailurePolicyOnPodConditionsPattern) *corev1.PodCondition {
	for i, c := range p.Status.Conditions {
		for _, pat := range patterns {
			if c.Type == pat.Type && c.Status == pat.Status {
				return &p.Status.Conditions[i]
			}
		}
	}
	return nil
}

// indexFailed reports whether the failed pod p fails its index: its
// failures reached the per-index backoff limit, or a FailIndex rule matched.
func indexFailed(job *batchv1.Job, p *corev1.Pod) bool {
	if p.Status.Phase != corev1.PodFailed {
		return false
	}
	_, counts, action := matchPodFailurePolicy(job.Spec.PodFailurePolicy, p)
	if action != nil && *action == batchv1.PodFailurePolicyActionFailIndex {
		return true
	}
	return counts && podAnnotationInt(p, indexFailureCountKey) >= int(ptrOr(job.Spec.BackoffLimitPerIndex, 0))
}

// lastFailedPod is the failed pod of index ix with the most failures
// before it, nil if none.
func lastFailedPod(pods []*corev1.Pod, ix int) *corev1.Pod {
	var last *corev1.Pod
	for _, p := range pods {
		if p.Status.Phase != corev1.PodFailed || completionIndex(p) != ix {
			continue
		}
		if last == nil || podAttempts(p) > podAttempts(last) || (podAttempts(p) == podAttempts(last) && podFinishTime(p).After(podFinishTime(last))) {
			last = p
		}
	}
	return last
}

func podAttempts(p *corev1.Pod) int {
	return podAnnotationInt(p, indexFailureCountKey) + podAnnotationInt(p, indexIgnoredFailuresKey)
}

// indexFailureCounts are the failures (counted and ignored) of an index
// once its failed pod last is replaced.
func indexFailureCounts(job *batchv1.Job, last *corev1.Pod) (failures, ignored int) {
	if last == nil {
		return 0, 0
	}
	failures, ignored = podAnnotationInt(last, indexFailureCountKey), podAnnotationInt(last, indexIgnoredFailuresKey)
	if _, counts, _ := matchPodFailurePolicy(job.Spec.PodFailurePolicy, last); counts {
		failures++
	} else {
		ignored++
	}
	return failures, ignored
}

func podAnnotationInt(p *corev1.Pod, key string) int {
	n, err := strconv.Atoi(p.Annotations[key])
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// matchSuccessPolicy reports whether the succeeded indexes meet a rule of
// the Job's success policy, and which.
func matchSuccessPolicy(job *batchv1.Job, succeeded indexIntervals) (string, bool) {
	if job.Spec.SuccessPolicy == nil || succeeded.total() == 0 {
		return "", false
	}
	for i, rule := range job.Spec.SuccessPolicy.Rules {
		matched := false
		if rule.SucceededIndexes != nil {
			required := parseIndexes(*rule.SucceededIndexes, int(ptrOr(job.Spec.Completions, 1)))
			if required.total() == 0 {
				continue
			}
			n := required.overlap(succeeded)
			matched = n == required.total() || (rule.SucceededCount != nil && n >= int(*rule.SucceededCount))
		} else if rule.SucceededCount != nil {
			matched = succeeded.total() >= int(*rule.SucceededCount)
		}
		if matched {
			return fmt.Sprintf("Matched rules at index %d", i), true
		}
	}
	return "", false
}

// pastBackoffLimitOnFailure reports whether the restarts of a Job's
// running pods (restartPolicy OnFailure) reached its backoff limit.
func pastBackoffLimitOnFailure(job *batchv1.Job, pods []*corev1.Pod) bool {
	if job.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyOnFailure {
		return false
	}
	var restarts int32
	for _, p := range pods {
		if p.Status.Phase == corev1.PodRunning || p.Status.Phase == corev1.PodPending {
			for _, cs := range append(slices.Clone(p.Status.InitContainerStatuses), p.Status.ContainerStatuses...) {
				restarts += cs.RestartCount
			}
		}
	}
	if limit := ptrOr(job.Spec.BackoffLimit, 6); limit > 0 {
		return restarts >= limit
	}
	return restarts > 0
}

func jobCondition(t batchv1.JobConditionType, reason, message string, now time.Time) *batchv1.JobCondition {
	ts := metav1.NewTime(now.Truncate(time.Second))
	return &batchv1.JobCondition{Type: t, Status: corev1.ConditionTrue, Reason: reason, Message: message, LastProbeTime: ts, LastTransitionTime: ts}
}

// setJobCondition sets job's condition of type t, reporting a change; a
// False condition is not added where there is none.
func setJobCondition(job *batchv1.Job, t batchv1.JobConditionType, status corev1.ConditionStatus, reason, message string, now time.Time) bool {
	c := jobCondition(t, reason, message, now)
	c.Status = status
	if old := findJobCondition(job, t); old != nil {
		if old.Status == status && old.Reason == reason && old.Message == message {
			return false
		}
		*old = *c
		return true
	}
	if status == corev1.ConditionFalse {
		return false
	}
	job.Status.Conditions = append(job.Status.Conditions, *c)
	return true
}

func findJobCondition(job *batchv1.Job, t batchv1.JobConditionType) *batchv1.JobCondition {
	for i := range job.Status.Conditions {
		if job.Status.Conditions[i].Type == t {
			return &job.Status.Conditions[i]
		}
	}
	return nil
}

// jobFinished reports whether job is Complete or Failed.
func jobFinished(job *batchv1.Job) bool { return jobFinishedCondition(job) != nil }

func jobSuspended(job *batchv1.Job) bool { return ptrOr(job.Spec.Suspend, false) }

func indexedJob(job *batchv1.Job) bool {
	return job.Spec.CompletionMode != nil && *job.Spec.CompletionMode == batchv1.IndexedCompletion
}

// completionIndex is the index an Indexed Job's pod runs, -1 if none.
func completionIndex(p *corev1.Pod) int {
	s, ok := p.Annotations[completionIndexKey]
	if !ok {
		return -1
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return -1
	}
	return n
}

func hasTrackingFinalizer(p *corev1.Pod) bool {
	return slices.Contains(p.Finalizers, jobTrackingFinalizer)
}

func podEnded(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

func uidSet(uids []types.UID) map[types.UID]bool {
	s := map[types.UID]bool{}
	for _, u := range uids {
		s[u] = true
	}
	return s
}

func samePtr[T comparable](a, b *T) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

// listAs lists the objects at path as Ts.
func listAs[T any](ctx context.Context, c *inproc.Client, path string) ([]T, error) {
	var l struct {
		Items []T `json:"items"`
	}
	err := c.Get(ctx, path, &l)
	return l.Items, err
}
