package table

import (
	"fmt"
	"strings"
	"time"
)

func deploymentCells(o obj, now time.Time) []any {
	s := o.obj("status")
	return append([]any{
		o.name(), fmt.Sprintf("%d/%d", s.num("readyReplicas"), o.num("spec", "replicas")),
		s.num("updatedReplicas"), s.num("availableReplicas"), o.age(now),
	}, podTemplateCells(o, o.obj("spec", "template"))...)
}

func replicaSetCells(o obj, now time.Time) []any {
	s := o.obj("status")
	return append([]any{
		o.name(), o.num("spec", "replicas"), s.num("replicas"), s.num("readyReplicas"), o.age(now),
	}, podTemplateCells(o, o.obj("spec", "template"))...)
}

func statefulSetCells(o obj, now time.Time) []any {
	names, images := containers(o.obj("spec", "template", "spec"))
	return []any{
		o.name(), fmt.Sprintf("%d/%d", o.num("status", "readyReplicas"), o.num("spec", "replicas")),
		o.age(now), names, images,
	}
}

func daemonSetCells(o obj, now time.Time) []any {
	s := o.obj("status")
	return append([]any{
		o.name(), s.num("desiredNumberScheduled"), s.num("currentNumberScheduled"), s.num("numberReady"),
		s.num("updatedNumberScheduled"), s.num("numberAvailable"),
		formatLabels(o.stringMap("spec", "template", "spec", "nodeSelector")), o.age(now),
	}, podTemplateCells(o, o.obj("spec", "template"))...)
}

func replicationControllerCells(o obj, now time.Time) []any {
	s := o.obj("status")
	names, images := containers(o.obj("spec", "template", "spec"))
	return []any{
		o.name(), o.num("spec", "replicas"), s.num("replicas"), s.num("readyReplicas"), o.age(now),
		names, images, formatLabels(o.stringMap("spec", "selector")),
	}
}

func podTemplateTypeCells(o obj, _ time.Time) []any {
	names, images := containers(o.obj("template", "spec"))
	return []any{o.name(), names, images, formatLabels(o.stringMap("template", "metadata", "labels"))}
}

func controllerRevisionCells(o obj, now time.Time) []any {
	controller := "<none>"
	for _, ref := range o.list("metadata", "ownerReferences") {
		if c, _ := ref.boolean("controller"); c {
			gv := ref.str("apiVersion")
			group := ""
			if i := strings.Index(gv, "/"); i >= 0 {
				group = gv[:i]
			}
			kind := strings.ToLower(ref.str("kind"))
			if group != "" {
				kind += "." + group
			}
			controller = kind + "/" + ref.str("name")
			break
		}
	}
	return []any{o.name(), controller, o.num("revision"), o.age(now)}
}

func jobCells(o obj, now time.Time) []any {
	spec, s := o.obj("spec"), o.obj("status")
	var completions string
	if n, ok := spec.int("completions"); ok {
		completions = fmt.Sprintf("%d/%d", s.num("succeeded"), n)
	} else if p, ok := spec.int("parallelism"); ok && p > 1 {
		completions = fmt.Sprintf("%d/1 of %d", s.num("succeeded"), p)
	} else {
		completions = fmt.Sprintf("%d/1", s.num("succeeded"))
	}
	var dur string
	start, end := s.time("startTime"), s.time("completionTime")
	switch {
	case start.IsZero():
	case end.IsZero():
		dur = age(start, now)
	default:
		dur = age(start, end)
	}
	return append([]any{o.name(), jobStatus(o), completions, dur, o.age(now)},
		podTemplateCells(o, spec.obj("template"))...)
}

// jobStatus is the job's most telling condition.
func jobStatus(o obj) string {
	s := o.obj("status")
	switch {
	case hasCondition(s, "Failed"):
		return "Failed"
	case hasCondition(s, "Complete"):
		return "Complete"
	case o.str("metadata", "deletionTimestamp") != "":
		return "Terminating"
	case hasCondition(s, "FailureTarget"):
		return "FailureTarget"
	case hasCondition(s, "SuccessCriteriaMet"):
		return "SuccessCriteriaMet"
	case hasCondition(s, "Suspended"):
		return "Suspended"
	}
	return "Running"
}

func cronJobCells(o obj, now time.Time) []any {
	spec := o.obj("spec")
	last := "<none>"
	if t := o.time("status", "lastScheduleTime"); !t.IsZero() {
		last = age(t, now)
	}
	suspend, _ := spec.boolean("suspend")
	names, images := containers(spec.obj("jobTemplate", "spec", "template", "spec"))
	return []any{
		o.name(), spec.str("schedule"), orNone(spec.str("timeZone")), titleBool(suspend),
		int64(len(o.list("status", "active"))), last, o.age(now),
		names, images, selector(spec.obj("jobTemplate", "spec", "selector")),
	}
}

// titleBool prints a bool as Go's %v with a capital, as kubectl does for
// SUSPEND.
func titleBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

func horizontalPodAutoscalerCells(o obj, now time.Time) []any {
	spec := o.obj("spec")
	ref := spec.obj("scaleTargetRef")
	minPods := "<unset>"
	if n, ok := spec.int("minReplicas"); ok {
		minPods = itoa(n)
	}
	return []any{
		o.name(), ref.str("kind") + "/" + ref.str("name"), hpaTargets(o), minPods,
		spec.num("maxReplicas"), o.num("status", "currentReplicas"), o.age(now),
	}
}

// hpaTargets prints each metric as current/target; only resource
// utilization and value targets are printed in full, others as <unknown>.
func hpaTargets(o obj) string {
	metrics := o.list("spec", "metrics")
	if len(metrics) == 0 {
		return "<none>"
	}
	current := o.list("status", "currentMetrics")
	var out []string
	for i, m := range metrics {
		cur := "<unknown>"
		var target string
		switch m.str("type") {
		case "Resource", "ContainerResource":
			key := "resource"
			if m.str("type") == "ContainerResource" {
				key = "containerResource"
			}
			t := m.obj(key, "target")
			if u, ok := t.int("averageUtilization"); ok {
				target = fmt.Sprintf("%d%%", u)
				if i < len(current) {
					if c, ok := current[i].int(key, "current", "averageUtilization"); ok {
						cur = fmt.Sprintf("%d%%", c)
					}
				}
				out = append(out, fmt.Sprintf("%s: %s/%s", m.str(key, "name"), cur, target))
				continue
			}
			target = t.intOrString("averageValue")
			if i < len(current) {
				if c := current[i].intOrString(key, "current", "averageValue"); c != "" {
					cur = c
				}
			}
			out = append(out, fmt.Sprintf("%s: %s/%s", m.str(key, "name"), cur, target))
		default:
			out = append(out, "<unknown>/<unknown>")
		}
	}
	if len(out) > 4 {
		return fmt.Sprintf("%s + %d more...", strings.Join(out[:4], ", "), len(out)-4)
	}
	return strings.Join(out, ", ")
}

func podDisruptionBudgetCells(o obj, now time.Time) []any {
	minAvail, maxUnavail := "N/A", "N/A"
	if v := o.intOrString("spec", "minAvailable"); v != "" {
		minAvail = v
	}
	if v := o.intOrString("spec", "maxUnavailable"); v != "" {
		maxUnavail = v
	}
	return []any{o.name(), minAvail, maxUnavail, o.num("status", "disruptionsAllowed"), o.age(now)}
}
