package playground

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"kubeplay/internal/jsonmap"
)

// Preemption, as kube-scheduler's DefaultPreemption plugin does it: a pod
// that fits nowhere, and may preempt (its preemptionPolicy is not Never,
// and no pod it preempted before is still terminating on the node it was
// nominated to), looks on each node where room is what it lacks for the
// fewest pods of lower priority whose removal lets it fit: all of them
// removed, then each given back, the most important first, if the pod
// still fits. Of the nodes where that works it takes the one whose most
// important victim is the least important, then the one with the smallest
// sum of priorities, then the fewest victims. The victims get the
// DisruptionTarget condition and are deleted (a Preempted event each), and
// the pod is nominated to the node; it is scheduled there once they are
// gone. PodDisruptionBudgets are not weighed.

// preemption is the outcome of a successful preemption: the node and the
// pods to evict from it.
type preemption struct {
	node    string
	victims []jsonmap.Object
}

func priorityOf(p jsonmap.Object) int64 {
	n, _ := jsonmap.Int(p, "spec", "priority")
	return n
}

// mayPreempt is whether p may preempt others, or why not (the end of the
// FailedScheduling message); it requires s.mu.
func (s *scheduler) mayPreempt(p jsonmap.Object, onNode map[string][]jsonmap.Object) (bool, string) {
	if jsonmap.String(p, "spec", "preemptionPolicy") == "Never" {
		return false, "not eligible due to preemptionPolicy=Never."
	}
	if nominated := jsonmap.String(p, "status", "nominatedNodeName"); nominated != "" {
		for _, other := range onNode[nominated] {
			if deleting(other) && priorityOf(other) < priorityOf(p) {
				return false, "not eligible due to a terminating pod on the nominated node."
			}
		}
	}
	return true, ""
}

// preempt looks for the victims that make room for p on the nodes where
// room is what it lacks (candidates); when none will do, it says why for
// each of them, as the reasons by count of kube-scheduler's message. It
// requires s.mu.
func (s *scheduler) preempt(p jsonmap.Object, req resources, candidates []string, onNode map[string][]jsonmap.Object) (*preemption, map[string]int) {
	why := map[string]int{}
	var found []preemption
	for _, name := range candidates {
		var potential, kept []jsonmap.Object
		for _, other := range onNode[name] {
			if priorityOf(other) < priorityOf(p) && !deleting(other) {
				potential = append(potential, other)
			} else {
				kept = append(kept, other)
			}
		}
		if len(potential) == 0 {
			why["No preemption victims found for incoming pod"]++
			continue
		}
		without := maps.Clone(onNode)
		without[name] = kept
		if reasons, _ := s.filter(p, req, s.nodes[name], without); len(reasons) > 0 {
			for _, r := range reasons {
				why[r]++
			}
			continue
		}
		// Give back the most important first (higher priority, then
		// the longer running).
		slices.SortStableFunc(potential, func(a, b jsonmap.Object) int {
			if c := cmp.Compare(priorityOf(b), priorityOf(a)); c != 0 {
				return c
			}
			return cmp.Compare(jsonmap.String(a, "status", "startTime"), jsonmap.String(b, "status", "startTime"))
		})
		var victims []jsonmap.Object
		for _, other := range potential {
			without[name] = append(slices.Clone(without[name]), other)
			if reasons, _ := s.filter(p, req, s.nodes[name], without); len(reasons) > 0 {
				without[name] = without[name][:len(without[name])-1]
				victims = append(victims, other)
			}
		}
		found = append(found, preemption{node: name, victims: victims})
	}
	if len(found) == 0 {
		return nil, why
	}
	best := slices.MinFunc(found, func(a, b preemption) int {
		return cmp.Or(cmp.Compare(highestPriority(a.victims), highestPriority(b.victims)),
			cmp.Compare(prioritySum(a.victims), prioritySum(b.victims)),
			cmp.Compare(len(a.victims), len(b.victims)))
	})
	return &best, nil
}

func highestPriority(pods []jsonmap.Object) int64 {
	h := int64(-1 << 62)
	for _, p := range pods {
		h = max(h, priorityOf(p))
	}
	return h
}

// prioritySum adds the priorities each shifted to be positive, as
// kube-scheduler does, so that more victims never weigh less.
func prioritySum(pods []jsonmap.Object) int64 {
	var sum int64
	for _, p := range pods {
		sum += priorityOf(p) + 1<<31
	}
	return sum
}

// evict has the victims of a preemption for preemptor go: each gets the
// DisruptionTarget condition, is deleted, and has a Preempted event.
func (s *scheduler) evict(ctx context.Context, preemptor jsonmap.Object, pre *preemption) error {
	schedulerName := cmp.Or(jsonmap.String(preemptor, "spec", "schedulerName"), defaultScheduler)
	for _, victim := range pre.victims {
		ref := refTo(victim, "v1", "Pod")
		path := namedPath("", "pods", ref.Namespace, ref.Name)
		patch := map[string]any{"status": map[string]any{"conditions": []any{map[string]any{"type": "DisruptionTarget", "status": "True",
			"reason": "PreemptionByScheduler", "message": schedulerName + ": preempting to accommodate a higher priority pod",
			"lastProbeTime": nil, "lastTransitionTime": timestamp(s.now)}}}}
		if err := s.api.Patch(ctx, path+"/status", "application/strategic-merge-patch+json", patch, nil); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return err
		}
		uid := types.UID(ref.UID)
		opts := metav1.DeleteOptions{TypeMeta: metav1.TypeMeta{Kind: "DeleteOptions", APIVersion: "v1"}, Preconditions: &metav1.Preconditions{UID: &uid}}
		if err := s.api.Do(ctx, "DELETE", path, opts, nil); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return err
		}
		s.assumeDeleting(victim)
		schedulerEvent(ctx, s.api, s.now(), defaultScheduler, schedulerInstance, ref, "Normal", "Preempted", "Preempting",
			fmt.Sprintf("Preempted by pod %s on node %s", jsonmap.String(preemptor, "metadata", "uid"), pre.node))
	}
	return nil
}

// assumeDeleting notes a victim as being deleted before its change comes
// back through the watch, so that its preemptor, tried again meanwhile,
// waits for it rather than preempting again.
func (s *scheduler) assumeDeleting(victim jsonmap.Object) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := podKey(victim)
	if cached := s.pods[key]; cached != nil && !deleting(cached) {
		gone := copyMap(cached)
		jsonmap.Ensure(gone, "metadata")["deletionTimestamp"] = timestamp(s.now)
		s.pods[key] = gone
	}
}
