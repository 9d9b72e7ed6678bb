package table

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// podCells prints a pod as kubectl does: READY counts ready containers
// (restartable init containers included), STATUS is the most telling reason
// among the phase, init containers and containers, RESTARTS adds when the
// last restart happened.
func podCells(o obj, now time.Time) []any {
	status := o.obj("status")
	total := len(o.list("spec", "containers"))
	restartable := map[string]bool{}
	for _, c := range o.list("spec", "initContainers") {
		if c.str("restartPolicy") == "Always" {
			restartable[c.str("name")] = true
			total++
		}
	}
	reason := status.str("phase")
	if r := status.str("reason"); r != "" {
		reason = r
	}
	for _, c := range status.list("conditions") {
		if c.str("type") == "PodScheduled" && c.str("reason") == "SchedulingGated" {
			reason = "SchedulingGated"
		}
	}

	var restarts, sidecarRestarts int64
	var lastRestart, lastSidecarRestart time.Time
	ready := 0
	initializing := false
	inits := status.list("initContainerStatuses")
	for i, c := range inits {
		restarts += c.num("restartCount")
		finished := c.time("lastState", "terminated", "finishedAt")
		lastRestart = later(lastRestart, finished)
		if restartable[c.str("name")] {
			sidecarRestarts += c.num("restartCount")
			lastSidecarRestart = later(lastSidecarRestart, finished)
		}
		term, waiting := c.obj("state", "terminated"), c.obj("state", "waiting")
		started, _ := c.boolean("started")
		code := term.num("exitCode")
		switch {
		case term != nil && code == 0:
			continue
		case restartable[c.str("name")] && started:
			if r, _ := c.boolean("ready"); r {
				ready++
			}
			continue
		case term != nil:
			reason = "Init:" + terminatedReason(term)
		case waiting.str("reason") != "" && waiting.str("reason") != "PodInitializing":
			reason = "Init:" + waiting.str("reason")
		default:
			reason = fmt.Sprintf("Init:%d/%d", i, len(o.list("spec", "initContainers")))
		}
		initializing = true
		break
	}
	if !initializing || hasCondition(status, "Initialized") {
		restarts, lastRestart = sidecarRestarts, lastSidecarRestart
		running := false
		cs := status.list("containerStatuses")
		for i := len(cs) - 1; i >= 0; i-- {
			c := cs[i]
			restarts += c.num("restartCount")
			lastRestart = later(lastRestart, c.time("lastState", "terminated", "finishedAt"))
			term, waiting := c.obj("state", "terminated"), c.obj("state", "waiting")
			isReady, _ := c.boolean("ready")
			switch {
			case waiting.str("reason") != "":
				reason = waiting.str("reason")
			case term != nil:
				reason = terminatedReason(term)
			case isReady && c.obj("state", "running") != nil:
				running = true
				ready++
			}
		}
		if reason == "Completed" && running {
			reason = "NotReady"
			if hasCondition(status, "Ready") {
				reason = "Running"
			}
		}
	}
	phase := status.str("phase")
	if o.str("metadata", "deletionTimestamp") != "" {
		if status.str("reason") == "NodeLost" {
			reason = "Unknown"
		} else if phase != "Succeeded" && phase != "Failed" {
			reason = "Terminating"
		}
	}
	restartsCell := itoa(restarts)
	if restarts != 0 && !lastRestart.IsZero() {
		restartsCell = fmt.Sprintf("%d (%s ago)", restarts, age(lastRestart, now))
	}

	ip := ""
	if ips := status.list("podIPs"); len(ips) > 0 {
		ip = ips[0].str("ip")
	}
	gates := "<none>"
	if rg := o.list("spec", "readinessGates"); len(rg) > 0 {
		n := 0
		for _, g := range rg {
			for _, c := range status.list("conditions") {
				if c.str("type") == g.str("conditionType") {
					if c.str("status") == "True" {
						n++
					}
					break
				}
			}
		}
		gates = fmt.Sprintf("%d/%d", n, len(rg))
	}
	return []any{
		o.name(), fmt.Sprintf("%d/%d", ready, total), reason, restartsCell, o.age(now),
		orNone(ip), orNone(o.str("spec", "nodeName")), orNone(status.str("nominatedNodeName")), gates,
	}
}

func terminatedReason(term obj) string {
	if r := term.str("reason"); r != "" {
		return r
	}
	if sig := term.num("signal"); sig != 0 {
		return fmt.Sprintf("Signal:%d", sig)
	}
	return fmt.Sprintf("ExitCode:%d", term.num("exitCode"))
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// hasCondition reports whether status has condition typ with status True.
func hasCondition(status obj, typ string) bool {
	for _, c := range status.list("conditions") {
		if c.str("type") == typ {
			return c.str("status") == "True"
		}
	}
	return false
}

// podConditions marks a finished pod's row Completed, which kubectl uses to
// hide finished pods.
func podConditions(o obj) []metav1.TableRowCondition {
	switch o.str("status", "phase") {
	case "Succeeded":
		return []metav1.TableRowCondition{{Type: metav1.RowCompleted, Status: metav1.ConditionTrue, Reason: "Succeeded", Message: "The pod has completed successfully."}}
	case "Failed":
		return []metav1.TableRowCondition{{Type: metav1.RowCompleted, Status: metav1.ConditionTrue, Reason: "Failed", Message: "The pod failed."}}
	}
	return nil
}
