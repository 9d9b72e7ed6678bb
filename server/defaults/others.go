package defaults

import "kubeplay/internal/jsonmap"

func service(spec Object) {
	if spec == nil {
		return
	}
	set(spec, "type", "ClusterIP")
	set(spec, "sessionAffinity", "None")
	if spec["sessionAffinity"] == "ClientIP" {
		set(setObject(setObject(spec, "sessionAffinityConfig"), "clientIP"), "timeoutSeconds", num(10800))
	}
	for _, p := range jsonmap.Items(spec["ports"]) {
		set(p, "protocol", "TCP")
		if n, ok := jsonmap.IntOf(p["targetPort"]); p != nil && (unset(p, "targetPort") || ok && n == 0) {
			p["targetPort"] = p["port"]
		}
	}
	switch spec["type"] {
	case "NodePort", "LoadBalancer":
		set(spec, "externalTrafficPolicy", "Cluster")
	}
	if spec["type"] == "LoadBalancer" {
		set(spec, "allocateLoadBalancerNodePorts", true)
	}
	if spec["type"] != "ExternalName" {
		set(spec, "internalTrafficPolicy", "Cluster")
	}
}

func persistentVolume(spec Object) {
	set(spec, "persistentVolumeReclaimPolicy", "Retain")
	set(spec, "volumeMode", "Filesystem")
	set(jsonmap.Child(spec, "hostPath"), "type", "")
}

// limitRange defaults a container's limits to the maximum and its
// requests to the default limits, or else to the minimum.
func limitRange(spec Object) {
	for _, l := range jsonmap.Items(spec["limits"]) {
		if l["type"] != "Container" {
			continue
		}
		fill(l, "default", jsonmap.Child(l, "max"))
		fill(l, "defaultRequest", jsonmap.Child(l, "default"))
		fill(l, "defaultRequest", jsonmap.Child(l, "min"))
	}
}

// fill sets each resource of from that obj's field k lacks.
func fill(obj Object, k string, from Object) {
	if len(from) == 0 {
		return
	}
	to := setObject(obj, k)
	for r, q := range from {
		if _, ok := to[r]; !ok {
			to[r] = q
		}
	}
}

// networkPolicy defaults a NetworkPolicy's policyTypes: Ingress always,
// Egress when it has egress rules.
func networkPolicy(spec Object) {
	if spec == nil {
		return
	}
	for _, dir := range []string{"ingress", "egress"} {
		for _, rule := range jsonmap.Items(spec[dir]) {
			for _, p := range jsonmap.Items(rule["ports"]) {
				set(p, "protocol", "TCP")
			}
		}
	}
	if unset(spec, "policyTypes") {
		types := []any{"Ingress"}
		if egress, _ := spec["egress"].([]any); len(egress) > 0 {
			types = append(types, "Egress")
		}
		spec["policyTypes"] = types
	}
}

// horizontalPodAutoscaler defaults an HPA: one replica at least, a target
// of 80% CPU when it names no metric, and, when it has a behavior, the
// policies of both directions.
func horizontalPodAutoscaler(version string, spec Object) {
	set(spec, "minReplicas", num(1))
	if version == "v2" {
		if metrics, _ := spec["metrics"].([]any); len(metrics) == 0 && spec != nil {
			spec["metrics"] = []any{map[string]any{
				"type": "Resource",
				"resource": map[string]any{
					"name":   "cpu",
					"target": map[string]any{"type": "Utilization", "averageUtilization": num(80)},
				},
			}}
		}
		if b := jsonmap.Child(spec, "behavior"); b != nil {
			up := setObject(b, "scaleUp")
			set(up, "stabilizationWindowSeconds", num(0))
			set(up, "selectPolicy", "Max")
			set(up, "policies", []any{policy("Pods", 4), policy("Percent", 100)})
			down := setObject(b, "scaleDown")
			set(down, "selectPolicy", "Max")
			set(down, "policies", []any{policy("Percent", 100)})
		}
	}
}

// policy is an HPA scaling policy over the default period of 15 seconds.
func policy(typ string, value int) map[string]any {
	return map[string]any{"type": typ, "value": num(value), "periodSeconds": num(15)}
}

// deviceRequests defaults the device requests of a claim's spec: each asks
// for an exact count of devices, one, unless it says otherwise; so does each
// of a request's alternatives (firstAvailable).
func deviceRequests(spec Object) {
	exact := func(r Object) {
		set(r, "allocationMode", "ExactCount")
		if n, _ := jsonmap.IntOf(r["count"]); r != nil && r["allocationMode"] == "ExactCount" && n == 0 {
			r["count"] = num(1)
		}
	}
	for _, r := range jsonmap.Items(jsonmap.Child(spec, "devices")["requests"]) {
		exact(jsonmap.Child(r, "exactly"))
		for _, sub := range jsonmap.Items(r["firstAvailable"]) {
			exact(sub)
		}
	}
}
