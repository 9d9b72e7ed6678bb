package playground_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"kubeplay/playground"
)

// The Job controller's tests run pods themselves, as a kubelet would (the
// kubelet stand-in is off): a pod fails or succeeds when the test says so.

func jobSandbox(t *testing.T) *playground.Sandbox {
	t.Helper()
	// The test plays the kubelet: nothing else writes the pods' status;
	// without them, kubeadm's add-ons would wait forever to run.
	sb := openSandboxWith(t, playground.Options{Controllers: playground.Controllers{}.Without("kubelet", "scheduler", "kubeadm")})
	waitForDefaultServiceAccount(t, sb.Handler(), "default")
	return sb
}

const jobsPath = "/apis/batch/v1/namespaces/default/jobs"

func createJob(t *testing.T, h http.Handler, name, spec string) map[string]any {
	t.Helper()
	return mustDo(t, h, 201, "POST", jobsPath, fmt.Sprintf(`{"metadata":{"name":%q},"spec":{%s
		"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"busybox"}]}}}}`, name, spec))
}

func getJob(t *testing.T, h http.Handler, name string) map[string]any {
	t.Helper()
	return mustDo(t, h, 200, "GET", jobsPath+"/"+name, "")
}

func jobStatus(t *testing.T, h http.Handler, name string) map[string]any {
	t.Helper()
	st, _ := getJob(t, h, name)["status"].(map[string]any)
	return st
}

// jobConditions lists a Job's conditions as "Type=Status Reason: message".
func jobConditions(st map[string]any) []string {
	var out []string
	conds, _ := st["conditions"].([]any)
	for _, c := range conds {
		m := c.(map[string]any)
		out = append(out, fmt.Sprintf("%v=%v %v: %v", m["type"], m["status"], m["reason"], m["message"]))
	}
	return out
}

// jobPods lists the Job's pods not being deleted.
func jobPods(t *testing.T, h http.Handler, name string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, p := range items(t, h, "/api/v1/namespaces/default/pods?labelSelector=batch.kubernetes.io%2Fjob-name%3D"+name) {
		if p["metadata"].(map[string]any)["deletionTimestamp"] == nil {
			out = append(out, p)
		}
	}
	return out
}

// waitJobPods waits until the Job runs n pods (not being deleted), and
// returns them.
func waitJobPods(t *testing.T, h http.Handler, name string, n int) []map[string]any {
	t.Helper()
	var pods []map[string]any
	waitFor(t, fmt.Sprintf("%d pods of Job %s", n, name), func() bool {
		pods = jobPods(t, h, name)
		running := 0
		for _, p := range pods {
			if phase, _ := p["status"].(map[string]any)["phase"].(string); phase != "Succeeded" && phase != "Failed" {
				running++
			}
		}
		return running == n
	})
	return pods
}

func waitJobCondition(t *testing.T, h http.Handler, name, cond string) map[string]any {
	t.Helper()
	var st map[string]any
	waitFor(t, "Job "+name+" condition "+cond, func() bool {
		st = jobStatus(t, h, name)
		return slices.Contains(jobConditions(st), cond)
	})
	return st
}

// endPod puts a pod in phase as its kubelet would: its one container
// exited with exitCode.
func endPod(t *testing.T, h http.Handler, pod map[string]any, phase string, exitCode int) {
	t.Helper()
	name := pod["metadata"].(map[string]any)["name"].(string)
	p := mustDo(t, h, 200, "GET", "/api/v1/namespaces/default/pods/"+name, "")
	now := time.Now().UTC().Format(time.RFC3339)
	p["status"] = map[string]any{"phase": phase, "containerStatuses": []any{map[string]any{"name": "c", "image": "busybox", "imageID": "", "ready": false, "restartCount": 0,
		"state": map[string]any{"terminated": map[string]any{"exitCode": exitCode, "startedAt": now, "finishedAt": now}}}}}
	mustDo(t, h, 200, "PUT", "/api/v1/namespaces/default/pods/"+name+"/status", jsonOf(p))
}

// jobEvents lists the Events about Job name as "Type Reason: message".
func jobEvents(t *testing.T, h http.Handler, name string) []string {
	t.Helper()
	var out []string
	for _, e := range items(t, h, "/api/v1/namespaces/default/events?fieldSelector=involvedObject.kind%3DJob%2CinvolvedObject.name%3D"+name) {
		if src := e["source"].(map[string]any); src["component"] != "job-controller" {
			t.Errorf("event source %v", src)
		}
		out = append(out, fmt.Sprintf("%v %v: %v", e["type"], e["reason"], e["message"]))
	}
	return out
}

func podName(p map[string]any) string { return p["metadata"].(map[string]any)["name"].(string) }

func countPrefix(list []string, prefix string) int {
	n := 0
	for _, s := range list {
		if strings.HasPrefix(s, prefix) {
			n++
		}
	}
	return n
}

func TestJob_completionsAndParallelism(t *testing.T) {
	sb := openSandbox(t)
	h := sb.Handler()
	createJob(t, h, "three", `"completions":3,"parallelism":2,`)
	st := waitJobCondition(t, h, "three", "Complete=True CompletionsReached: Reached expected number of succeeded pods")
	if got := jobConditions(st); !slices.Equal(got, []string{"SuccessCriteriaMet=True CompletionsReached: Reached expected number of succeeded pods",
		"Complete=True CompletionsReached: Reached expected number of succeeded pods"}) {
		t.Errorf("conditions %q", got)
	}
	if st["succeeded"] != 3.0 || st["active"] != nil || st["ready"] != 0.0 || st["terminating"] != 0.0 || jsonOf(st["uncountedTerminatedPods"]) != "{}" ||
		st["completionTime"] == nil || st["startTime"] == nil {
		t.Errorf("status %s", jsonOf(st))
	}
	pods := jobPods(t, h, "three")
	if len(pods) != 3 {
		t.Fatalf("%d pods", len(pods))
	}
	job := getJob(t, h, "three")
	uid := uidOf(job)
	for _, p := range pods {
		md := p["metadata"].(map[string]any)
		if md["finalizers"] != nil || !strings.HasPrefix(md["generateName"].(string), "three-") {
			t.Errorf("pod %v: finalizers %v", md["name"], md["finalizers"])
		}
		want := `{"batch.kubernetes.io/controller-uid":"` + uid + `","batch.kubernetes.io/job-name":"three","controller-uid":"` + uid + `","job-name":"three"}`
		if got := jsonOf(md["labels"]); got != want {
			t.Errorf("pod labels %s", got)
		}
	}
	waitFor(t, "the Completed event", func() bool { return slices.Contains(jobEvents(t, h, "three"), "Normal Completed: Job completed") })
	if n := countPrefix(jobEvents(t, h, "three"), "Normal SuccessfulCreate: Created pod: three-"); n != 3 {
		t.Errorf("%d SuccessfulCreate events: %q", n, jobEvents(t, h, "three"))
	}
	// A finished Job costs nothing.
	waitIdle(t, sb)
	assertStaysIdle(t, sb)
}

func TestJob_indexed(t *testing.T) {
	sb := jobSandbox(t)
	h := sb.Handler()
	createJob(t, h, "idx", `"completions":3,"parallelism":3,"completionMode":"Indexed",`)
	pods := waitJobPods(t, h, "idx", 3)
	byIndex := map[string]map[string]any{}
	for _, p := range pods {
		md := p["metadata"].(map[string]any)
		ix := md["annotations"].(map[string]any)["batch.kubernetes.io/job-completion-index"].(string)
		byIndex[ix] = p
		spec := p["spec"].(map[string]any)
		env := jsonOf(spec["containers"].([]any)[0].(map[string]any)["env"])
		if md["labels"].(map[string]any)["batch.kubernetes.io/job-completion-index"] != ix || md["generateName"] != "idx-"+ix+"-" ||
			spec["hostname"] != "idx-"+ix || jsonOf(md["finalizers"]) != `["batch.kubernetes.io/job-tracking"]` ||
			env != `[{"name":"JOB_COMPLETION_INDEX","valueFrom":{"fieldRef":{"apiVersion":"v1","fieldPath":"metadata.annotations['batch.kubernetes.io/job-completion-index']"}}}]` {
			t.Errorf("pod of index %s: %s %s, env %s", ix, jsonOf(md), spec["hostname"], env)
		}
	}
	if len(byIndex) != 3 {
		t.Fatalf("indexes %v", byIndex)
	}
	endPod(t, h, byIndex["1"], "Succeeded", 0)
	waitFor(t, "index 1 counted", func() bool {
		st := jobStatus(t, h, "idx")
		return st["completedIndexes"] == "1" && st["succeeded"] == 1.0 && st["active"] == 2.0
	})
	endPod(t, h, byIndex["0"], "Succeeded", 0)
	endPod(t, h, byIndex["2"], "Succeeded", 0)
	st := waitJobCondition(t, h, "idx", "Complete=True CompletionsReached: Reached expected number of succeeded pods")
	if st["completedIndexes"] != "0-2" || st["succeeded"] != 3.0 {
		t.Errorf("status %s", jsonOf(st))
	}
	waitIdle(t, sb)
}

func TestJob_backoffLimit(t *testing.T) {
	sb := jobSandbox(t)
	h := sb.Handler()
	createJob(t, h, "flaky", `"backoffLimit":1,`)
	first := waitJobPods(t, h, "flaky", 1)[0]
	endPod(t, h, first, "Failed", 1)
	waitFor(t, "the failure counted", func() bool {
		st := jobStatus(t, h, "flaky")
		return st["failed"] == 1.0 && jsonOf(st["uncountedTerminatedPods"]) == "{}"
	})
	// The replacement waits for the backoff (10s on the sandbox clock).
	sb.AdvanceClock(10 * time.Second)
	var second map[string]any
	waitFor(t, "a replacement pod", func() bool {
		for _, p := range waitJobPods(t, h, "flaky", 1) {
			if podName(p) != podName(first) {
				second = p
			}
		}
		return second != nil
	})
	endPod(t, h, second, "Failed", 1)
	st := waitJobCondition(t, h, "flaky", "Failed=True BackoffLimitExceeded: Job has reached the specified backoff limit")
	if got := jobConditions(st); !slices.Equal(got, []string{"FailureTarget=True BackoffLimitExceeded: Job has reached the specified backoff limit",
		"Failed=True BackoffLimitExceeded: Job has reached the specified backoff limit"}) {
		t.Errorf("conditions %q", got)
	}
	if st["failed"] != 2.0 || st["completionTime"] != nil {
		t.Errorf("status %s", jsonOf(st))
	}
	waitFor(t, "the failure event", func() bool {
		return slices.Contains(jobEvents(t, h, "flaky"), "Warning BackoffLimitExceeded: Job has reached the specified backoff limit")
	})
	for _, p := range jobPods(t, h, "flaky") {
		if f := p["metadata"].(map[string]any)["finalizers"]; f != nil {
			t.Errorf("pod %s keeps finalizers %v", podName(p), f)
		}
	}
	waitIdle(t, sb)
}

func TestJob_podFailurePolicy(t *testing.T) {
	sb := jobSandbox(t)
	h := sb.Handler()
	createJob(t, h, "policy", `"backoffLimit":6,"podFailurePolicy":{"rules":[
		{"action":"Ignore","onExitCodes":{"operator":"In","values":[3]}},
		{"action":"FailJob","onExitCodes":{"containerName":"c","operator":"In","values":[42]}}]},`)
	first := waitJobPods(t, h, "policy", 1)[0]
	endPod(t, h, first, "Failed", 3) // ignored: not counted, replaced after the backoff
	sb.AdvanceClock(10 * time.Second)
	var second map[string]any
	waitFor(t, "a replacement pod", func() bool {
		for _, p := range waitJobPods(t, h, "policy", 1) {
			if podName(p) != podName(first) {
				second = p
			}
		}
		return second != nil
	})
	if st := jobStatus(t, h, "policy"); st["failed"] != nil {
		t.Errorf("an ignored failure counted: %s", jsonOf(st))
	}
	endPod(t, h, second, "Failed", 42)
	msg := "Container c for pod default/" + podName(second) + " failed with exit code 42 matching FailJob rule at index 1"
	st := waitJobCondition(t, h, "policy", "Failed=True PodFailurePolicy: "+msg)
	if st["failed"] != 1.0 || !slices.Contains(jobConditions(st), "FailureTarget=True PodFailurePolicy: "+msg) {
		t.Errorf("status %s", jsonOf(st))
	}
	waitIdle(t, sb)
}

func TestJob_suspendAndResume(t *testing.T) {
	sb := jobSandbox(t)
	h := sb.Handler()
	createJob(t, h, "later", `"suspend":true,"parallelism":2,"completions":2,`)
	st := waitJobCondition(t, h, "later", "Suspended=True JobSuspended: Job suspended")
	waitIdle(t, sb)
	if len(jobPods(t, h, "later")) != 0 || st["startTime"] != nil {
		t.Errorf("a suspended Job runs: %s", jsonOf(st))
	}
	suspend(t, h, "later", false)
	waitJobPods(t, h, "later", 2)
	st = waitJobCondition(t, h, "later", "Suspended=False JobResumed: Job resumed")
	if st["startTime"] == nil {
		t.Errorf("no startTime once resumed: %s", jsonOf(st))
	}
	suspend(t, h, "later", true)
	waitFor(t, "the pods to go", func() bool { return len(jobPods(t, h, "later")) == 0 })
	st = waitJobCondition(t, h, "later", "Suspended=True JobSuspended: Job suspended")
	waitFor(t, "the counts", func() bool {
		st = jobStatus(t, h, "later")
		return st["active"] == nil && st["failed"] == nil
	})
	want := []string{"Normal Suspended: Job suspended", "Normal Resumed: Job resumed"}
	waitFor(t, "the events", func() bool {
		ev := jobEvents(t, h, "later")
		return slices.Contains(ev, want[0]) && slices.Contains(ev, want[1]) && countPrefix(ev, "Normal SuccessfulDelete: Deleted pod: later-") == 2
	})
	waitIdle(t, sb)
}

// suspend sets the Job's spec.suspend.
func suspend(t *testing.T, h http.Handler, name string, on bool) {
	t.Helper()
	job := getJob(t, h, name)
	job["spec"].(map[string]any)["suspend"] = on
	mustDo(t, h, 200, "PUT", jobsPath+"/"+name, jsonOf(job))
}

func TestJob_activeDeadline(t *testing.T) {
	sb := jobSandbox(t)
	h := sb.Handler()
	createJob(t, h, "slow", `"activeDeadlineSeconds":30,`)
	waitFor(t, "the Job to start", func() bool {
		st := jobStatus(t, h, "slow")
		return st["startTime"] != nil && st["active"] == 1.0
	})
	sb.AdvanceClock(31 * time.Second)
	st := waitJobCondition(t, h, "slow", "Failed=True DeadlineExceeded: Job was active longer than specified deadline")
	if st["failed"] != 1.0 || st["active"] != nil {
		t.Errorf("status %s", jsonOf(st))
	}
	waitFor(t, "the pod to go", func() bool {
		return len(items(t, h, "/api/v1/namespaces/default/pods")) == 0
	})
	waitIdle(t, sb)
}

func TestJob_backoffLimitPerIndex(t *testing.T) {
	sb := jobSandbox(t)
	h := sb.Handler()
	createJob(t, h, "per", `"completions":2,"parallelism":2,"completionMode":"Indexed","backoffLimitPerIndex":1,`)
	pods := waitJobPods(t, h, "per", 2)
	ix := func(p map[string]any) string {
		return p["metadata"].(map[string]any)["annotations"].(map[string]any)["batch.kubernetes.io/job-completion-index"].(string)
	}
	failures := func(p map[string]any) any {
		return p["metadata"].(map[string]any)["annotations"].(map[string]any)["batch.kubernetes.io/job-index-failure-count"]
	}
	for _, p := range pods {
		if failures(p) != "0" {
			t.Errorf("pod %s: failure count %v", podName(p), failures(p))
		}
		if ix(p) == "1" {
			endPod(t, h, p, "Succeeded", 0)
		} else {
			endPod(t, h, p, "Failed", 1)
		}
	}
	sb.AdvanceClock(10 * time.Second)
	var retry map[string]any
	waitFor(t, "index 0 again", func() bool {
		for _, p := range waitJobPods(t, h, "per", 1) {
			if ix(p) == "0" && failures(p) == "1" {
				retry = p
			}
		}
		return retry != nil
	})
	endPod(t, h, retry, "Failed", 1)
	st := waitJobCondition(t, h, "per", "Failed=True FailedIndexes: Job has failed indexes")
	if st["failedIndexes"] != "0" || st["completedIndexes"] != "1" || st["failed"] != 2.0 || st["succeeded"] != 1.0 {
		t.Errorf("status %s", jsonOf(st))
	}
	waitIdle(t, sb)
}

func TestJob_successPolicy(t *testing.T) {
	sb := jobSandbox(t)
	h := sb.Handler()
	createJob(t, h, "leader", `"completions":3,"parallelism":3,"completionMode":"Indexed","successPolicy":{"rules":[{"succeededIndexes":"0"}]},`)
	pods := waitJobPods(t, h, "leader", 3)
	for _, p := range pods {
		if p["metadata"].(map[string]any)["annotations"].(map[string]any)["batch.kubernetes.io/job-completion-index"] == "0" {
			endPod(t, h, p, "Succeeded", 0)
		}
	}
	st := waitJobCondition(t, h, "leader", "Complete=True SuccessPolicy: Matched rules at index 0")
	if !slices.Contains(jobConditions(st), "SuccessCriteriaMet=True SuccessPolicy: Matched rules at index 0") || st["succeeded"] != 1.0 ||
		st["completedIndexes"] != "0" || st["failed"] != nil || st["completionTime"] == nil {
		t.Errorf("status %s", jsonOf(st))
	}
	waitFor(t, "the other pods to go", func() bool { return len(items(t, h, "/api/v1/namespaces/default/pods")) == 1 })
	waitIdle(t, sb)
}

// A Job deleted while its pods run lets them go: the garbage collector
// deletes them and the Job controller releases their finalizers.
func TestJob_deletedJobReleasesPods(t *testing.T) {
	sb := jobSandbox(t)
	h := sb.Handler()
	createJob(t, h, "bye", `"parallelism":2,"completions":4,`)
	waitJobPods(t, h, "bye", 2)
	mustDo(t, h, 200, "DELETE", jobsPath+"/bye", `{"propagationPolicy":"Background"}`)
	waitFor(t, "the pods to go", func() bool { return len(items(t, h, "/api/v1/namespaces/default/pods")) == 0 })
	waitIdle(t, sb)
}

// A finished Job with ttlSecondsAfterFinished goes, with its pods, once
// that time has passed on the sandbox clock; until then nothing runs.
func TestJob_ttlAfterFinished(t *testing.T) {
	sb := openSandbox(t)
	h := sb.Handler()
	createJob(t, h, "brief", `"ttlSecondsAfterFinished":600,`)
	waitJobCondition(t, h, "brief", "Complete=True CompletionsReached: Reached expected number of succeeded pods")
	if idle, _ := sb.Idle(t.Context()); idle {
		t.Error("no look scheduled for the Job's expiry")
	}
	sb.AdvanceClock(10 * time.Minute)
	waitFor(t, "the Job and its pod to go", func() bool {
		return len(items(t, h, jobsPath)) == 0 && len(items(t, h, "/api/v1/namespaces/default/pods")) == 0
	})
	waitIdle(t, sb)
}

// A Job adopts an orphan its selector matches (with the tracking
// finalizer) and releases a pod it controls whose labels no longer match
// (taking the finalizer off: nobody counts it any more), replacing it.
func TestJob_adoptsAndReleases(t *testing.T) {
	sb := jobSandbox(t)
	h := sb.Handler()
	job := createJob(t, h, "adopter", `"parallelism":2,"completions":4,`)
	uid := lookup(job, "metadata.uid")
	pods := waitJobPods(t, h, "adopter", 2)
	name := podName(pods[0])
	path := podPath("default", name)
	mergePatch(t, h, path, `{"metadata":{"ownerReferences":null,"finalizers":null}}`)
	waitFor(t, "the orphan to be adopted", func() bool { return lookup(pod(t, h, name), "metadata.ownerReferences.0.uid") == uid })
	p := pod(t, h, name)
	if lookup(p, "metadata.ownerReferences.0.controller") != true || lookup(p, "metadata.finalizers.0") != "batch.kubernetes.io/job-tracking" {
		t.Errorf("adopted: %s", jsonOf(p["metadata"]))
	}
	if n := len(jobPods(t, h, "adopter")); n != 2 {
		t.Errorf("%d pods after the adoption, want 2", n)
	}

	mergePatch(t, h, path, `{"metadata":{"labels":null}}`)
	waitFor(t, "the pod to be released", func() bool {
		md := pod(t, h, name)["metadata"].(map[string]any)
		return md["ownerReferences"] == nil && md["finalizers"] == nil
	})
	waitJobPods(t, h, "adopter", 2) // a replacement
	waitIdle(t, sb)
	if ref := lookup(pod(t, h, name), "metadata.ownerReferences"); ref != nil {
		t.Errorf("released pod readopted: %v", ref)
	}
}

// An Indexed Job whose pods leave a marker file on their node (a hostPath
// directory under /tmp) and wait to be evicted, as the e2e suite's: each
// evicted pod fails with the DisruptionTarget condition, which the pod
// failure policy ignores, and its replacement finds the marker and
// succeeds.
func TestJob_podFailurePolicyIgnoresEviction(t *testing.T) {
	sb := openSandboxWith(t, playground.Options{Controllers: playground.Controllers{Nodes: 1}})
	h := sb.Handler()
	waitNodes(t, sb, "kubeplay-worker")
	waitForDefaultServiceAccount(t, h, "default")
	mustDo(t, h, 201, "POST", jobsPath, `{"metadata":{"name":"marker"},"spec":{"parallelism":3,"completions":3,"backoffLimit":2,
		"completionMode":"Indexed","podFailurePolicy":{"rules":[{"action":"Ignore","onPodConditions":[{"type":"DisruptionTarget","status":"True"}]}]},
		"template":{"spec":{"restartPolicy":"Never","terminationGracePeriodSeconds":1,"nodeSelector":{"kubernetes.io/hostname":"kubeplay-worker"},
			"volumes":[{"name":"data","hostPath":{"path":"/tmp/job-e2e/x1","type":"DirectoryOrCreate"}}],
			"containers":[{"name":"c","image":"busybox","command":["/bin/sh","-c"],
				"args":["\n\t\t\tif [[ -r /data/foo-$JOB_COMPLETION_INDEX ]]\n\t\t\tthen\n\t\t\t\texit 0\n\t\t\telse\n\t\t\t\ttouch /data/foo-$JOB_COMPLETION_INDEX\n\t\t\t\tsleep 1000000\n\t\t\tfi\n\t\t"],
				"volumeMounts":[{"name":"data","mountPath":"/data"}],
				"readinessProbe":{"periodSeconds":1,"exec":{"command":["/bin/sh","-c","cat /data/foo-$JOB_COMPLETION_INDEX"]}}}]}}}}`)
	waitFor(t, "3 ready pods", func() bool { return jobStatus(t, h, "marker")["ready"] == 3.0 })
	evicted := waitJobPods(t, h, "marker", 3)
	for _, p := range evicted {
		name := podName(p)
		mustDo(t, h, 201, "POST", podPath("default", name)+"/eviction", `{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"`+name+`"}}`)
	}
	sb.AdvanceClock(2 * time.Second) // the grace period: the shells ignore SIGTERM
	for _, p := range evicted {
		waitFor(t, podName(p)+" to go", gone(t, h, podPath("default", podName(p))))
	}
	sb.AdvanceClock(time.Minute) // the back-off of the Job's three failures
	st := waitJobCondition(t, h, "marker", "Complete=True CompletionsReached: Reached expected number of succeeded pods")
	if st["succeeded"] != 3.0 || st["failed"] != nil && st["failed"] != 0.0 || st["completedIndexes"] != "0-2" {
		t.Errorf("status %s", jsonOf(st))
	}
}
