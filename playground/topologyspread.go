package playground

import (
	"maps"
	"math"
	"slices"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"

	"kubeplay/internal/jsonmap"
)

// kube-scheduler's PodTopologySpread plugin: a pod's topologySpreadConstraints
// that say DoNotSchedule filter nodes (the pods matching the constraint's
// selector in the node's topology domain, the pod itself included, may
// exceed those of the emptiest domain by maxSkew at most), and those that
// say ScheduleAnyway score them (the fewer matching pods in the node's
// domain, the better). Domains are counted over the nodes that have every
// topology key of the constraints and, by the constraint's node inclusion
// policies, match the pod's node affinity (nodeAffinityPolicy, Honor by
// default) and have no taint it does not tolerate (nodeTaintsPolicy,
// Ignore by default). The system's default constraints, for pods of a
// Service or a workload that set none, are not applied: the least
// allocated node's score already spreads them.

const (
	spreadMismatch     = "node(s) didn't match pod topology spread constraints"
	spreadMissingLabel = spreadMismatch + " (missing required label)"
)

// spreadConstraint is one topology spread constraint of a pod, with
// kube-scheduler's defaults filled in.
type spreadConstraint struct {
	maxSkew     int64
	topologyKey string
	selector    labels.Selector
	// minDomains below which the emptiest domain counts as 0.
	minDomains                 int64
	honorAffinity, honorTaints bool
}

// spreadConstraints are p's constraints whose whenUnsatisfiable is action;
// the values of p's labels that matchLabelKeys names are added to the
// selector.
func spreadConstraints(p jsonmap.Object, action string) []spreadConstraint {
	podLabels := objectLabels(p)
	var out []spreadConstraint
	for _, c := range jsonmap.Items(jsonmap.Child(p, "spec")["topologySpreadConstraints"]) {
		if c["whenUnsatisfiable"] != action {
			continue
		}
		sc := spreadConstraint{topologyKey: stringOf(c["topologyKey"]), selector: selectorOf(c["labelSelector"], labels.Nothing()),
			minDomains: 1, honorAffinity: c["nodeAffinityPolicy"] != "Ignore", honorTaints: c["nodeTaintsPolicy"] == "Honor"}
		sc.maxSkew, _ = jsonmap.IntOf(c["maxSkew"])
		if n, ok := jsonmap.IntOf(c["minDomains"]); ok {
			sc.minDomains = n
		}
		if _, ok := sc.selector.Requirements(); ok {
			for _, key := range jsonmap.StringsOf(c["matchLabelKeys"]) {
				if v, ok := podLabels[key]; ok {
					if r, err := labels.NewRequirement(key, selection.Equals, []string{v}); err == nil {
						sc.selector = sc.selector.Add(*r)
					}
				}
			}
		}
		out = append(out, sc)
	}
	return out
}

// objectLabels is the label set of an object.
func objectLabels(o jsonmap.Object) labels.Set {
	set := labels.Set{}
	for k, v := range jsonmap.Child(o, "metadata", "labels") {
		set[k], _ = v.(string)
	}
	return set
}

// hasTopologyKeys reports whether the node labels have the topology key of
// every constraint.
func hasTopologyKeys(nodeLabels labels.Set, constraints []spreadConstraint) bool {
	for _, c := range constraints {
		if !nodeLabels.Has(c.topologyKey) {
			return false
		}
	}
	return true
}

// includes reports whether node n counts for constraint c of pod p, by the
// constraint's node inclusion policies.
func (c spreadConstraint) includes(p, n jsonmap.Object) bool {
	if c.honorAffinity && !matchesNodeSelector(p, n) {
		return false
	}
	return !c.honorTaints || untoleratedTaint(jsonmap.List(p, "spec", "tolerations"), n) == nil
}

// matching counts the pods of pods that c selects in namespace ns; those
// being deleted do not count, nor does anything for an empty selector.
func (c spreadConstraint) matching(pods []jsonmap.Object, ns string) int {
	if c.selector.Empty() {
		return 0
	}
	n := 0
	for _, other := range pods {
		if !deleting(other) && jsonmap.String(other, "metadata", "namespace") == ns && c.selector.Matches(objectLabels(other)) {
			n++
		}
	}
	return n
}

// spreadCounts counts, for each constraint, the pods it selects in each
// topology domain (by the value of its key) over the nodes that have all
// the constraints' keys and that it includes; it requires s.mu.
func (s *scheduler) spreadCounts(p jsonmap.Object, constraints []spreadConstraint, onNode map[string][]jsonmap.Object) []map[string]int {
	counts := make([]map[string]int, len(constraints))
	for i := range counts {
		counts[i] = map[string]int{}
	}
	ns := jsonmap.String(p, "metadata", "namespace")
	for name, n := range s.nodes {
		nodeLabels := objectLabels(n)
		if !hasTopologyKeys(nodeLabels, constraints) {
			continue
		}
		for i, c := range constraints {
			if c.includes(p, n) {
				counts[i][nodeLabels[c.topologyKey]] += c.matching(onNode[name], ns)
			}
		}
	}
	return counts
}

// topologySpread is PodTopologySpread's filter for p on n: the reason it
// fails, and whether preemption could help (not for a node without a
// constraint's topology key). It requires s.mu.
func (s *scheduler) topologySpread(p, n jsonmap.Object, onNode map[string][]jsonmap.Object) (reason string, resolvable bool) {
	constraints := spreadConstraints(p, "DoNotSchedule")
	if len(constraints) == 0 {
		return "", false
	}
	nodeLabels := objectLabels(n)
	if !hasTopologyKeys(nodeLabels, constraints) {
		return spreadMissingLabel, false
	}
	counts := s.spreadCounts(p, constraints, onNode)
	podLabels := objectLabels(p)
	for i, c := range constraints {
		minMatch := 0
		if int64(len(counts[i])) >= c.minDomains {
			minMatch = slices.Min(slices.Collect(maps.Values(counts[i])))
		}
		self := 0
		if c.selector.Matches(podLabels) {
			self = 1
		}
		if int64(counts[i][nodeLabels[c.topologyKey]]+self-minMatch) > c.maxSkew {
			return spreadMismatch, true
		}
	}
	return "", false
}

// spreadScores are PodTopologySpread's normalized scores (0 to 100) of the
// feasible nodes for p's ScheduleAnyway constraints, nil if it has none;
// it requires s.mu.
func (s *scheduler) spreadScores(p jsonmap.Object, feasible []string, onNode map[string][]jsonmap.Object) map[string]int64 {
	constraints := spreadConstraints(p, "ScheduleAnyway")
	if len(constraints) == 0 {
		return nil
	}
	// Nodes without every key score 0; the others are weighed by how
	// many domains each constraint has among them.
	var scored []string
	domains := make([]map[string]bool, len(constraints))
	for i := range domains {
		domains[i] = map[string]bool{}
	}
	for _, name := range feasible {
		nodeLabels := objectLabels(s.nodes[name])
		if !hasTopologyKeys(nodeLabels, constraints) {
			continue
		}
		scored = append(scored, name)
		for i, c := range constraints {
			domains[i][nodeLabels[c.topologyKey]] = true
		}
	}
	counts := s.spreadCounts(p, constraints, onNode)
	ns := jsonmap.String(p, "metadata", "namespace")
	raw := map[string]int64{}
	for _, name := range scored {
		nodeLabels := objectLabels(s.nodes[name])
		score := 0.0
		for i, c := range constraints {
			size, count := len(domains[i]), counts[i][nodeLabels[c.topologyKey]]
			if c.topologyKey == hostnameLabel {
				size, count = len(scored), c.matching(onNode[name], ns)
			}
			score += float64(count)*math.Log(float64(size+2)) + float64(c.maxSkew-1)
		}
		raw[name] = int64(math.Round(score))
	}
	out := map[string]int64{}
	if len(raw) == 0 {
		return out
	}
	lo, hi := slices.Min(slices.Collect(maps.Values(raw))), slices.Max(slices.Collect(maps.Values(raw)))
	for name, score := range raw {
		if hi == 0 {
			out[name] = maxNodeScore
		} else {
			out[name] = maxNodeScore * (hi + lo - score) / hi
		}
	}
	return out
}

const (
	hostnameLabel = "kubernetes.io/hostname"
	// maxNodeScore is the most a kube-scheduler score plugin gives a node.
	maxNodeScore = 100
)
