package server

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// FeatureGates switch kube-apiserver features on and off by name, as its
// --feature-gates flag does; a gate left out has its default in the
// emulated release.
type FeatureGates map[string]bool

// Feature gates kubeplay follows.
const (
	// AllowUnsafeMalformedObjectDeletion: DELETE with
	// ignoreStoreReadErrorWithClusterBreakingPotential removes an object
	// that cannot be decoded.
	AllowUnsafeMalformedObjectDeletion = "AllowUnsafeMalformedObjectDeletion"
	// WatchList: watches with sendInitialEvents (streaming lists).
	WatchList = "WatchList"
	// CBORServingAndStorage: CBOR request and response bodies
	// (application/cbor, application/apply-patch+cbor, watches as
	// application/cbor-seq). Objects are still stored as JSON.
	CBORServingAndStorage = "CBORServingAndStorage"
	// PodTopologyLabelsAdmission: the PodTopologyLabels admission plugin
	// copies a node's zone and region labels to the pods bound to it.
	PodTopologyLabelsAdmission = "PodTopologyLabelsAdmission"
)

// featureGate is a gate's history: the first release that has it, and
// whether it is on by default in a release.
type featureGate struct {
	since    int
	defaults func(minor int) bool
}

var featureGates = map[string]featureGate{
	AllowUnsafeMalformedObjectDeletion: {since: 32}, // alpha
	CBORServingAndStorage:              {since: 32}, // alpha
	// Alpha in v1.27 to v1.31, beta from v1.32: on by default except in
	// v1.33 (as kube-apiserver v1.35 reports it at /metrics, emulating
	// v1.32 to v1.35).
	WatchList: {since: 27, defaults: func(minor int) bool { return minor >= 32 && minor != 33 }},
	// Alpha in v1.33 and v1.34, beta from v1.35.
	PodTopologyLabelsAdmission: {since: 33, defaults: func(minor int) bool { return minor >= 35 }},
}

// ParseFeatureGates parses a --feature-gates value: comma-separated
// Name=true|false pairs of the gates kubeplay follows.
func ParseFeatureGates(s string) (FeatureGates, error) {
	fg := FeatureGates{}
	if strings.TrimSpace(s) == "" {
		return fg, nil
	}
	for _, kv := range strings.Split(s, ",") {
		name, value, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok {
			return nil, fmt.Errorf("missing bool value for %s", name)
		}
		if _, known := featureGates[name]; !known {
			return nil, fmt.Errorf("unrecognized feature gate: %s", name)
		}
		on, err := strconv.ParseBool(value)
		if err != nil {
			return nil, fmt.Errorf("invalid value of %s=%s, err: %v", name, value, err)
		}
		fg[name] = on
	}
	return fg, nil
}

// Enabled reports whether a gate is on in release 1.minor: never before
// the release that added it, else as fg says, else its default there.
func (fg FeatureGates) Enabled(gate string, minor int) bool {
	g, ok := featureGates[gate]
	if !ok || minor < g.since {
		return false
	}
	if on, set := fg[gate]; set {
		return on
	}
	return g.defaults != nil && g.defaults(minor)
}

// SetFeatureGates sets the feature gates at once (nil: the defaults of the
// emulated release). The error is the store's, from the update of the
// local APIServices that follows.
func (s *Server) SetFeatureGates(fg FeatureGates) error {
	return s.setAPI(context.Background(), func(a *apiSettings) { a.gates = maps.Clone(fg) })
}

// FeatureGates returns every gate kubeplay follows that the emulated
// release has, and whether it is on.
func (s *Server) FeatureGates() map[string]bool {
	a := s.api.Load()
	out := map[string]bool{}
	for _, name := range slices.Sorted(maps.Keys(featureGates)) {
		if featureGates[name].since <= a.minor {
			out[name] = a.gates.Enabled(name, a.minor)
		}
	}
	return out
}

// enabled reports whether a feature gate is on now.
func (s *Server) enabled(gate string) bool {
	a := s.api.Load()
	return a.gates.Enabled(gate, a.minor)
}
