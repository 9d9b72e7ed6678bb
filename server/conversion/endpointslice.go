package conversion

import (
	"maps"

	"kubeplay/internal/jsonmap"
)

// EndpointSlices of discovery.k8s.io/v1beta1 (served until v1.24) are
// stored as v1. As kube-apiserver converts them, an endpoint's v1beta1
// topology map is v1's deprecatedTopology without the zone label (v1's
// zone) and without the hostname label when it names the endpoint's
// nodeName; the other way, topology gets the zone and, unless it has one,
// the nodeName as hostname.
const (
	zoneLabel     = "topology.kubernetes.io/zone"
	hostnameLabel = "kubernetes.io/hostname"
)

// endpointSliceToV1 converts a v1beta1 object to v1, in place.
func endpointSliceToV1(obj Object) {
	for _, ep := range jsonmap.Items(obj["endpoints"]) {
		topology := jsonmap.Child(ep, "topology")
		if ep == nil || topology == nil {
			delete(ep, "topology")
			continue
		}
		delete(ep, "topology")
		deprecated := maps.Clone(topology)
		if zone, ok := topology[zoneLabel]; ok {
			ep["zone"] = zone
			delete(deprecated, zoneLabel)
		}
		if node, ok := topology[hostnameLabel]; ok && ep["nodeName"] == node {
			delete(deprecated, hostnameLabel)
		}
		if len(deprecated) > 0 {
			ep["deprecatedTopology"] = deprecated
		}
	}
}

// endpointSliceFromV1 converts a v1 object to v1beta1, in place.
func endpointSliceFromV1(obj Object) {
	for _, ep := range jsonmap.Items(obj["endpoints"]) {
		if ep == nil {
			continue
		}
		deprecated := jsonmap.Child(ep, "deprecatedTopology")
		zone, hasZone := ep["zone"]
		node, hasNode := ep["nodeName"]
		delete(ep, "deprecatedTopology")
		delete(ep, "zone")
		if deprecated == nil && !hasZone && !hasNode {
			continue
		}
		topology := maps.Clone(deprecated)
		if topology == nil {
			topology = map[string]any{}
		}
		if hasZone {
			topology[zoneLabel] = zone
		}
		if hasNode && topology[hostnameLabel] == nil {
			topology[hostnameLabel] = node
		}
		ep["topology"] = topology
	}
}
