package playground

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"kubeplay/server/inproc"
	"kubeplay/store"
)

// cronJobController is kube-controller-manager's CronJob controller: at
// each time a CronJob's schedule names (on the sandbox clock) it creates a
// Job named after that minute, honouring the concurrency policy and the
// starting deadline, keeps status.active and the last schedule and success
// times, and deletes the finished Jobs beyond the history limits. Nothing
// polls: each look asks for the next one when the next run is due. Its keys
// are "<namespace>/<name>" of CronJobs.
type cronJobController struct {
	c      *inproc.Client
	now    func() time.Time
	events *eventRecorder
}

var cronJobDef = controllerDef{name: "cronJob", title: "cronjob controller", serviceAccount: "cronjob-controller",
	start: func(sb *Sandbox) reconciler {
		c := inproc.New(sb.handler, controllerAgent("cronjob-controller"))
		return &cronJobController{c: c, now: sb.clock.Now, events: newEventRecorder(c, "cronjob-controller", "", sb.clock.Now)}
	}}

// nextScheduleDelta is how long after a scheduled time the controller
// looks, so that the time has surely come.
const nextScheduleDelta = 100 * time.Millisecond

var cronJobs = ownerKeys{owner: batchV1("cronjobs"), owned: batchV1("jobs"), kind: "CronJob"}

func (cc *cronJobController) resync(ctx context.Context, _ int64) ([]string, error) {
	all, err := listAs[batchv1.CronJob](ctx, cc.c, allPath(batchV1("cronjobs")))
	var keys []string
	for _, cj := range all {
		keys = append(keys, cj.Namespace+"/"+cj.Name)
	}
	return keys, err
}

func (cc *cronJobController) keysOf(ev store.Event, q queue) { cronJobs.keysOf(ev, q) }

func (cc *cronJobController) reconcile(ctx context.Context, key string) (time.Duration, error) {
	ns, name, _ := strings.Cut(key, "/")
	cj, err := getTyped[batchv1.CronJob](ctx, cc.c, namedPath("batch/v1", "cronjobs", ns, name))
	if err != nil || cj == nil {
		return 0, err
	}
	all, err := listAs[batchv1.Job](ctx, cc.c, workloadCollection("batch/v1", "jobs", ns))
	if err != nil {
		return 0, err
	}
	var jobs []*batchv1.Job
	for i := range all {
		if ref := metav1.GetControllerOf(&all[i]); ref != nil && ref.UID == cj.UID {
			jobs = append(jobs, &all[i])
		}
	}
	changed := cc.cleanupFinished(ctx, cj, jobs)
	after, synced, syncErr := cc.sync(ctx, cj, jobs)
	if changed || synced {
		cj.APIVersion, cj.Kind = "batch/v1", "CronJob"
		if err := cc.c.Do(ctx, "PUT", namedPath("batch/v1", "cronjobs", ns, name)+"/status", cj, nil); err != nil {
			return 0, err
		}
	}
	if after > 0 {
		return after, nil
	}
	return 0, syncErr
}

// sync follows the CronJob's Jobs and starts the one due, if any; it
// returns when to look next (0: only when something changes) and whether
// the status changed.
func (cc *cronJobController) sync(ctx context.Context, cj *batchv1.CronJob, jobs []*batchv1.Job) (time.Duration, bool, error) {
	now := cc.now()
	changed := false
	children := map[types.UID]bool{}
	for _, j := range jobs {
		children[j.UID] = true
		active := inActiveList(cj, j.UID)
		finished := jobFinishedCondition(j)
		switch {
		case !active && finished == nil:
			cc.event(ctx, cj, corev1.EventTypeWarning, "UnexpectedJob", "Saw a job that the controller did not create or forgot: "+j.Name)
		case finished != nil:
			if active {
				cj.Status.Active = slices.DeleteFunc(cj.Status.Active, func(r corev1.ObjectReference) bool { return r.UID == j.UID })
				cc.event(ctx, cj, corev1.EventTypeNormal, "SawCompletedJob", fmt.Sprintf("Saw completed job: %s, condition: %v", j.Name, finished.Type))
				changed = true
			}
			if finished.Type == batchv1.JobComplete && j.Status.CompletionTime != nil &&
				(cj.Status.LastSuccessfulTime == nil || j.Status.CompletionTime.After(cj.Status.LastSuccessfulTime.Time)) {
				cj.Status.LastSuccessfulTime = j.Status.CompletionTime
				changed = true
			}
		}
	}
	for _, ref := range slices.Clone(cj.Status.Active) {
		if children[ref.UID] {
			continue
		}
		j, err := getTyped[batchv1.Job](ctx, cc.c, namedPath("batch/v1", "jobs", ref.Namespace, ref.Name))
		if err != nil {
			return 0, changed, err
		}
		if j == nil {
			cc.event(ctx, cj, corev1.EventTypeNormal, "MissingJob", "Active job went missing: "+ref.Name)
			cj.Status.Active = slices.DeleteFunc(cj.Status.Active, func(r corev1.ObjectReference) bool { return r.UID == ref.UID })
			changed = true
		}
	}
	if cj.DeletionTimestamp != nil {
		return 0, changed, nil
	}
	if tz := cj.Spec.TimeZone; tz != nil {
		if _, err := time.LoadLocation(*tz); err != nil {
			cc.event(ctx, cj, corev1.EventTypeWarning, "UnknownTimeZone", fmt.Sprintf("invalid timeZone: %q: %s", *tz, err))
			return 0, changed, nil
		}
	}
	if ptrOr(cj.Spec.Suspend, false) {
		return 0, changed, nil
	}
	sched, err := parseSchedule(cc.scheduleOf(ctx, cj))
	if err != nil {
		cc.event(ctx, cj, corev1.EventTypeWarning, "UnparseableSchedule", fmt.Sprintf("unparseable schedule: %q : %s", cj.Spec.Schedule, err))
		return 0, changed, nil
	}
	next := func() time.Duration { return nextScheduleIn(cj, now, sched) }
	_, due, missed, err := mostRecentSchedule(cj, now, sched, true)
	if err != nil {
		cc.event(ctx, cj, corev1.EventTypeWarning, "InvalidSchedule", fmt.Sprintf("invalid schedule: %s : %s", cj.Spec.Schedule, err))
		return 0, changed, nil
	}
	if due == nil {
		return next(), changed, nil
	}
	if missed > 100 {
		cc.event(ctx, cj, corev1.EventTypeWarning, "TooManyMissedTimes", "too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew")
	}
	if d := cj.Spec.StartingDeadlineSeconds; d != nil && due.Add(time.Duration(*d)*time.Second).Before(now) {
		cc.event(ctx, cj, corev1.EventTypeWarning, "MissSchedule", "Missed scheduled time to start a job: "+due.UTC().Format(time.RFC1123Z))
		return next(), changed, nil
	}
	name := fmt.Sprintf("%s-%d", cj.Name, due.Unix()/60)
	if slices.ContainsFunc(cj.Status.Active, func(r corev1.ObjectReference) bool { return r.Name == name }) ||
		(cj.Status.LastScheduleTime != nil && cj.Status.LastScheduleTime.Equal(&metav1.Time{Time: *due})) {
		return next(), changed, nil // done already
	}
	switch cj.Spec.ConcurrencyPolicy {
	case batchv1.ForbidConcurrent:
		if len(cj.Status.Active) > 0 {
			cc.event(ctx, cj, corev1.EventTypeNormal, "JobAlreadyActive", "Not starting job because prior execution is running and concurrency policy is Forbid")
			return next(), changed, nil
		}
	case batchv1.ReplaceConcurrent:
		for _, ref := range slices.Clone(cj.Status.Active) {
			if !cc.deleteJob(ctx, cj, ref.Namespace, ref.Name, ref.UID) {
				return 0, changed, fmt.Errorf("could not replace job %s/%s", ref.Namespace, ref.Name)
			}
			changed = true
		}
	}
	job, err := jobFor(cj, *due, name)
	if err != nil {
		return 0, changed, err
	}
	var created batchv1.Job
	err = cc.c.Do(ctx, "POST", workloadCollection("batch/v1", "jobs", cj.Namespace), job, &created)
	switch {
	case apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
		return 0, changed, err
	case apierrors.IsAlreadyExists(err):
		// Made before the status said so: adopt it into the active list.
		existing, err := getTyped[batchv1.Job](ctx, cc.c, namedPath("batch/v1", "jobs", cj.Namespace, name))
		if err != nil || existing == nil {
			return 0, changed, err
		}
		if !metav1.IsControlledBy(existing, cj) || inActiveList(cj, existing.UID) {
			return 0, changed, nil
		}
		created = *existing
	case err != nil:
		cc.event(ctx, cj, corev1.EventTypeWarning, "FailedCreate", fmt.Sprintf("Error creating job: %v", err))
		return 0, changed, err
	default:
		cc.event(ctx, cj, corev1.EventTypeNormal, "SuccessfulCreate", "Created job "+created.Name)
	}
	cj.Status.Active = append(cj.Status.Active, corev1.ObjectReference{Kind: "Job", Namespace: created.Namespace, Name: created.Name,
		UID: created.UID, APIVersion: "batch/v1", ResourceVersion: created.ResourceVersion})
	cj.Status.LastScheduleTime = &metav1.Time{Time: *due}
	return next(), true, nil
}

// scheduleOf is the CronJob's schedule in its time zone, as the cron
// parser reads it; a schedule that names its own zone is used as it is.
func (cc *cronJobController) scheduleOf(ctx context.Context, cj *batchv1.CronJob) string {
	if strings.Contains(cj.Spec.Schedule, "TZ") {
		cc.event(ctx, cj, corev1.EventTypeWarning, "UnsupportedSchedule", fmt.Sprintf("CRON_TZ or TZ used in schedule %q is not officially supported, see https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details", cj.Spec.Schedule))
		return cj.Spec.Schedule
	}
	// Without a time zone, kube-controller-manager reads the schedule in
	// its own, which on a cluster's control plane is UTC: so does the
	// sandbox, whatever the machine it runs on.
	return "TZ=" + ptrOr(cj.Spec.TimeZone, "UTC") + " " + cj.Spec.Schedule
}

// parseSchedule reads a standard cron schedule (five fields or a
// descriptor such as @hourly); the parser can panic on odd input.
func parseSchedule(s string) (sched cron.Schedule, err error) {
	defer func() {
		if r := recover(); r != nil {
			sched, err = nil, fmt.Errorf("invalid schedule format: %v", r)
		}
	}()
	return cron.ParseStandard(s)
}

// mostRecentSchedule finds the latest time the schedule named that is not
// after now and not before the last scheduled run (or the CronJob's
// creation, or, withDeadline, the starting deadline): nil if none. missed
// estimates how many runs were missed.
func mostRecentSchedule(cj *batchv1.CronJob, now time.Time, sched cron.Schedule, withDeadline bool) (earliest time.Time, recent *time.Time, missed int64, err error) {
	earliest = cj.CreationTimestamp.Time
	if cj.Status.LastScheduleTime != nil {
		earliest = cj.Status.LastScheduleTime.Time
	}
	if d := cj.Spec.StartingDeadlineSeconds; withDeadline && d != nil {
		if deadline := now.Add(-time.Duration(*d) * time.Second); deadline.After(earliest) {
			earliest = deadline
		}
	}
	t1 := sched.Next(earliest)
	t2 := sched.Next(t1)
	if now.Before(t1) {
		return earliest, nil, 0, nil
	}
	if now.Before(t2) {
		return earliest, &t1, 0, nil
	}
	// Many runs passed: jump near the end rather than walk them all.
	between := int64(t2.Sub(t1).Round(time.Second).Seconds())
	if between < 1 {
		return earliest, nil, 0, fmt.Errorf("time difference between two schedules is less than 1 second")
	}
	missed = int64(now.Sub(t1).Seconds())/between + 1
	var last time.Time
	for t := sched.Next(t1.Add(time.Duration((missed-2)*between) * time.Second)); !t.After(now); t = sched.Next(t) {
		last = t
	}
	if last.IsZero() {
		return earliest, nil, missed, nil
	}
	return earliest, &last, missed, nil
}

// nextScheduleIn is how long until the run after the most recent one.
func nextScheduleIn(cj *batchv1.CronJob, now time.Time, sched cron.Schedule) time.Duration {
	earliest, recent, missed, err := mostRecentSchedule(cj, now, sched, false)
	from := now
	switch {
	case err != nil:
	case recent != nil:
		from = *recent
	case missed == 0:
		from = earliest
	}
	return sched.Next(from).Add(nextScheduleDelta).Sub(now)
}

// jobFor is the Job a CronJob runs at scheduled: its template, named name.
func jobFor(cj *batchv1.CronJob, scheduled time.Time, name string) (*batchv1.Job, error) {
	loc, err := time.LoadLocation(ptrOr(cj.Spec.TimeZone, ""))
	if err != nil {
		return nil, err
	}
	t := cj.Spec.JobTemplate.DeepCopy()
	annotations := map[string]string{}
	for k, v := range t.Annotations {
		annotations[k] = v
	}
	annotations[batchv1.CronJobScheduledTimestampAnnotation] = scheduled.In(loc).Format(time.RFC3339)
	return &batchv1.Job{TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: cj.Namespace, Labels: t.Labels, Annotations: annotations,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(cj, batchv1.SchemeGroupVersion.WithKind("CronJob"))}},
		Spec: t.Spec}, nil
}

// cleanupFinished deletes the oldest finished Jobs beyond the history
// limits; it reports a status change.
func (cc *cronJobController) cleanupFinished(ctx context.Context, cj *batchv1.CronJob, jobs []*batchv1.Job) bool {
	var succeeded, failed []*batchv1.Job
	for _, j := range jobs {
		finished := jobFinishedCondition(j)
		switch {
		case finished == nil:
		case finished.Type == batchv1.JobComplete:
			succeeded = append(succeeded, j)
		default:
			failed = append(failed, j)
		}
	}
	changed := false
	for _, h := range []struct {
		jobs  []*batchv1.Job
		limit *int32
	}{{succeeded, cj.Spec.SuccessfulJobsHistoryLimit}, {failed, cj.Spec.FailedJobsHistoryLimit}} {
		if h.limit == nil || len(h.jobs) <= int(*h.limit) {
			continue
		}
		// Oldest first by start time; a Job not started counts as newest.
		slices.SortFunc(h.jobs, func(a, b *batchv1.Job) int {
			sa, sb := a.Status.StartTime, b.Status.StartTime
			switch {
			case sa == nil && sb != nil:
				return 1
			case sa != nil && sb == nil:
				return -1
			case sa == nil || sa.Equal(sb):
				return strings.Compare(a.Name, b.Name)
			}
			return sa.Compare(sb.Time)
		})
		for _, j := range h.jobs[:len(h.jobs)-int(*h.limit)] {
			if cc.deleteJob(ctx, cj, j.Namespace, j.Name, j.UID) {
				changed = true
			}
		}
	}
	return changed
}

// deleteJob deletes a Job of cj (its pods in the background) and drops it
// from the active list.
func (cc *cronJobController) deleteJob(ctx context.Context, cj *batchv1.CronJob, ns, name string, uid types.UID) bool {
	background := metav1.DeletePropagationBackground
	opts := metav1.DeleteOptions{TypeMeta: metav1.TypeMeta{Kind: "DeleteOptions", APIVersion: "v1"}, PropagationPolicy: &background}
	if err := cc.c.Do(ctx, "DELETE", namedPath("batch/v1", "jobs", ns, name), opts, nil); err != nil {
		cc.event(ctx, cj, corev1.EventTypeWarning, "FailedDelete", fmt.Sprintf("Deleted job: %v", err))
		return false
	}
	cj.Status.Active = slices.DeleteFunc(cj.Status.Active, func(r corev1.ObjectReference) bool { return r.UID == uid })
	cc.event(ctx, cj, corev1.EventTypeNormal, "SuccessfulDelete", "Deleted job "+name)
	return true
}

func (cc *cronJobController) event(ctx context.Context, cj *batchv1.CronJob, eventType, reason, message string) {
	ref := objectRef{APIVersion: "batch/v1", Kind: "CronJob", Namespace: cj.Namespace, Name: cj.Name, UID: string(cj.UID), ResourceVersion: cj.ResourceVersion}
	cc.events.event(ctx, ref, eventType, reason, message)
}

func inActiveList(cj *batchv1.CronJob, uid types.UID) bool {
	return slices.ContainsFunc(cj.Status.Active, func(r corev1.ObjectReference) bool { return r.UID == uid })
}

// jobFinishedCondition is j's Complete or Failed condition if it is
// finished, nil while it runs.
func jobFinishedCondition(j *batchv1.Job) *batchv1.JobCondition {
	for i, c := range j.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return &j.Status.Conditions[i]
		}
	}
	return nil
}
