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

const cronJobsPath = "/apis/batch/v1/namespaces/default/cronjobs"

func createCronJob(t *testing.T, h http.Handler, name, spec string) map[string]any {
	t.Helper()
	return mustDo(t, h, 201, "POST", cronJobsPath, fmt.Sprintf(`{"metadata":{"name":%q},"spec":{%s
		"jobTemplate":{"spec":{"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"busybox"}]}}}}}}`, name, spec))
}

func cronJobStatus(t *testing.T, h http.Handler, name string) map[string]any {
	t.Helper()
	st, _ := mustDo(t, h, 200, "GET", cronJobsPath+"/"+name, "")["status"].(map[string]any)
	return st
}

// cronJobEvents lists the Events about CronJob name as "Type Reason: message".
func cronJobEvents(t *testing.T, h http.Handler, name string) []string {
	t.Helper()
	var out []string
	for _, e := range items(t, h, "/api/v1/namespaces/default/events?fieldSelector=involvedObject.kind%3DCronJob%2CinvolvedObject.name%3D"+name) {
		if src := e["source"].(map[string]any); src["component"] != "cronjob-controller" {
			t.Errorf("event source %v", src)
		}
		out = append(out, fmt.Sprintf("%v %v: %v", e["type"], e["reason"], e["message"]))
	}
	return out
}

// jobNames lists the names of the Jobs in default.
func jobNames(t *testing.T, h http.Handler) []string {
	t.Helper()
	var names []string
	for _, j := range items(t, h, jobsPath) {
		names = append(names, j["metadata"].(map[string]any)["name"].(string))
	}
	return names
}

// nextMinute advances the sandbox clock to 1s past its next whole minute,
// and returns that minute.
func nextMinute(sb *playground.Sandbox) time.Time {
	now := sb.Clock().Now()
	minute := now.Truncate(time.Minute).Add(time.Minute)
	sb.AdvanceClock(minute.Add(time.Second).Sub(now))
	return minute
}

// A CronJob does nothing until its time comes on the sandbox clock; then it
// runs a Job named after the minute and follows it to its end.
func TestCronJob_runsOnTheSandboxClock(t *testing.T) {
	sb := openSandbox(t)
	h := sb.Handler()
	createCronJob(t, h, "tick", `"schedule":"*/1 * * * *",`)
	if names := jobNames(t, h); len(names) != 0 {
		t.Fatalf("Jobs before the schedule: %v", names)
	}
	minute := nextMinute(sb)
	name := fmt.Sprintf("tick-%d", minute.Unix()/60)
	waitFor(t, "the Job to run", func() bool { return slices.Contains(jobNames(t, h), name) })
	job := getJob(t, h, name)
	md := job["metadata"].(map[string]any)
	if ann := md["annotations"].(map[string]any)["batch.kubernetes.io/cronjob-scheduled-timestamp"]; ann != minute.UTC().Format(time.RFC3339) {
		t.Errorf("scheduled timestamp %v, want %v", ann, minute.UTC().Format(time.RFC3339))
	}
	if refs := jsonOf(md["ownerReferences"]); !strings.Contains(refs, `"kind":"CronJob","name":"tick"`) {
		t.Errorf("owner references %s", refs)
	}
	waitFor(t, "the CronJob to see it succeed", func() bool {
		st := cronJobStatus(t, h, "tick")
		return st["active"] == nil && st["lastSuccessfulTime"] != nil && st["lastScheduleTime"] == minute.UTC().Format(time.RFC3339)
	})
	want := []string{"Normal SuccessfulCreate: Created job " + name, "Normal SawCompletedJob: Saw completed job: " + name + ", condition: Complete"}
	waitFor(t, "the events", func() bool {
		ev := cronJobEvents(t, h, "tick")
		return slices.Contains(ev, want[0]) && slices.Contains(ev, want[1])
	})
}

func TestCronJob_concurrencyPolicy(t *testing.T) {
	sb := jobSandbox(t) // the Jobs' pods never end
	h := sb.Handler()
	createCronJob(t, h, "forbid", `"schedule":"* * * * *","concurrencyPolicy":"Forbid",`)
	createCronJob(t, h, "replace", `"schedule":"* * * * *","concurrencyPolicy":"Replace",`)
	first := nextMinute(sb)
	activeJob := func(cj string) string {
		st := cronJobStatus(t, h, cj)
		active, _ := st["active"].([]any)
		if len(active) != 1 {
			return ""
		}
		return active[0].(map[string]any)["name"].(string)
	}
	waitFor(t, "both to run", func() bool { return activeJob("forbid") != "" && activeJob("replace") != "" })
	nextMinute(sb)
	second := first.Add(time.Minute)
	replaced := fmt.Sprintf("replace-%d", first.Unix()/60)
	waitFor(t, "Replace to replace its Job", func() bool {
		return activeJob("replace") == fmt.Sprintf("replace-%d", second.Unix()/60) && !slices.Contains(jobNames(t, h), replaced)
	})
	waitFor(t, "Forbid to refuse", func() bool {
		return slices.Contains(cronJobEvents(t, h, "forbid"), "Normal JobAlreadyActive: Not starting job because prior execution is running and concurrency policy is Forbid")
	})
	if got := activeJob("forbid"); got != fmt.Sprintf("forbid-%d", first.Unix()/60) {
		t.Errorf("Forbid runs %q", got)
	}
	if !slices.Contains(cronJobEvents(t, h, "replace"), "Normal SuccessfulDelete: Deleted job "+replaced) {
		t.Errorf("Replace's events: %q", cronJobEvents(t, h, "replace"))
	}
}

func TestCronJob_historyLimit(t *testing.T) {
	sb := openSandbox(t)
	h := sb.Handler()
	createCronJob(t, h, "keep", `"schedule":"* * * * *","successfulJobsHistoryLimit":1,`)
	var names []string
	for range 2 {
		m := nextMinute(sb)
		names = append(names, fmt.Sprintf("keep-%d", m.Unix()/60))
		waitFor(t, "the run to succeed", func() bool {
			st := cronJobStatus(t, h, "keep")
			return st["active"] == nil && st["lastScheduleTime"] == m.UTC().Format(time.RFC3339) && st["lastSuccessfulTime"] != nil
		})
	}
	waitFor(t, "the oldest Job to go", func() bool { return slices.Equal(jobNames(t, h), names[1:]) })
}

// A suspended CronJob schedules nothing, and costs nothing.
func TestCronJob_suspendedIsIdle(t *testing.T) {
	sb := openSandbox(t)
	h := sb.Handler()
	createCronJob(t, h, "paused", `"schedule":"@hourly","suspend":true,`)
	waitIdle(t, sb)
	sb.AdvanceClock(2 * time.Hour)
	waitIdle(t, sb)
	if names := jobNames(t, h); len(names) != 0 {
		t.Errorf("a suspended CronJob ran %v", names)
	}
	assertStaysIdle(t, sb)
}
