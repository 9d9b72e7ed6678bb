package table

import (
	"fmt"
	"strings"
	"time"
)

func configMapCells(o obj, now time.Time) []any {
	return []any{o.name(), int64(len(o.obj("data")) + len(o.obj("binaryData"))), o.age(now)}
}

func secretCells(o obj, now time.Time) []any {
	return []any{o.name(), o.str("type"), int64(len(o.obj("data"))), o.age(now)}
}

func namespaceCells(o obj, now time.Time) []any {
	return []any{o.name(), o.str("status", "phase"), o.age(now)}
}

func nameAgeCells(o obj, now time.Time) []any { return []any{o.name(), o.age(now)} }

func serviceCells(o obj, now time.Time) []any {
	spec := o.obj("spec")
	typ := spec.str("type")
	var ports []string
	for _, p := range spec.list("ports") {
		port := itoa(p.num("port"))
		if np := p.num("nodePort"); np > 0 {
			port += ":" + itoa(np)
		}
		ports = append(ports, port+"/"+p.str("protocol"))
	}
	clusterIP := spec.str("clusterIP")
	if len(spec.strings("clusterIPs")) > 0 {
		clusterIP = strings.Join(spec.strings("clusterIPs"), ",")
	}
	return []any{
		o.name(), typ, orNone(clusterIP), serviceExternalIP(o), orNone(strings.Join(ports, ",")),
		o.age(now), formatLabels(o.stringMap("spec", "selector")),
	}
}

func serviceExternalIP(o obj) string {
	spec := o.obj("spec")
	external := spec.strings("externalIPs")
	switch spec.str("type") {
	case "ClusterIP", "NodePort":
		if len(external) > 0 {
			return strings.Join(external, ",")
		}
		return "<none>"
	case "LoadBalancer":
		ips := append(loadBalancerAddresses(o), external...)
		if len(ips) > 0 {
			return strings.Join(ips, ",")
		}
		return "<pending>"
	case "ExternalName":
		return spec.str("externalName")
	}
	return "<unknown>"
}

// loadBalancerAddresses lists the IPs (or else host names) of a service's or
// ingress's load balancer.
func loadBalancerAddresses(o obj) []string {
	var addrs []string
	for _, in := range o.list("status", "loadBalancer", "ingress") {
		if in.str("ip") != "" {
			addrs = append(addrs, in.str("ip"))
		} else if in.str("hostname") != "" {
			addrs = append(addrs, in.str("hostname"))
		}
	}
	return addrs
}

func nodeCells(o obj, now time.Time) []any {
	status := o.obj("status")
	var conds []string
	for _, c := range status.list("conditions") {
		if c.str("type") != "Ready" {
			continue
		}
		if c.str("status") == "True" {
			conds = append(conds, "Ready")
		} else {
			conds = append(conds, "NotReady")
		}
	}
	if len(conds) == 0 {
		conds = append(conds, "Unknown")
	}
	if u, _ := o.boolean("spec", "unschedulable"); u {
		conds = append(conds, "SchedulingDisabled")
	}
	var internal, external []string
	for _, a := range status.list("addresses") {
		switch a.str("type") {
		case "InternalIP":
			internal = append(internal, a.str("address"))
		case "ExternalIP":
			external = append(external, a.str("address"))
		}
	}
	first := func(l []string) string {
		if len(l) == 0 {
			return "<none>"
		}
		return l[0]
	}
	info := status.obj("nodeInfo")
	osImage := info.str("osImage")
	if osImage == "" {
		osImage = "<unknown>"
	}
	kernel, runtime := info.str("kernelVersion"), info.str("containerRuntimeVersion")
	if kernel == "" {
		kernel = "<unknown>"
	}
	if runtime == "" {
		runtime = "<unknown>"
	}
	return []any{
		o.name(), strings.Join(conds, ","), nodeRoles(o), o.age(now), info.str("kubeletVersion"),
		first(internal), first(external), osImage, kernel, runtime,
	}
}

// nodeRoles reads the roles from node-role.kubernetes.io/<role> labels and
// the legacy kubernetes.io/role label.
func nodeRoles(o obj) string {
	roles := map[string]bool{}
	for k, v := range o.stringMap("metadata", "labels") {
		switch {
		case strings.HasPrefix(k, "node-role.kubernetes.io/"):
			if r := strings.TrimPrefix(k, "node-role.kubernetes.io/"); r != "" {
				roles[r] = true
			}
		case k == "kubernetes.io/role" && v != "":
			roles[v] = true
		}
	}
	if len(roles) == 0 {
		return "<none>"
	}
	return strings.Join(sortedKeys(roles), ",")
}

func endpointsCells(o obj, now time.Time) []any {
	var eps []string
	total := 0
	for _, sub := range o.list("subsets") {
		addrs, ports := sub.list("addresses"), sub.list("ports")
		if len(ports) == 0 {
			for _, a := range addrs {
				total++
				if len(eps) < 3 {
					eps = append(eps, a.str("ip"))
				}
			}
			continue
		}
		for _, p := range ports {
			for _, a := range addrs {
				total++
				if len(eps) < 3 {
					eps = append(eps, fmt.Sprintf("%s:%d", a.str("ip"), p.num("port")))
				}
			}
		}
	}
	return []any{o.name(), moreList(eps, total, "<none>"), o.age(now)}
}

// moreList prints up to three items and how many more there are.
func moreList(items []string, total int, empty string) string {
	if total == 0 {
		return empty
	}
	s := strings.Join(items, ",")
	if total > len(items) {
		s += fmt.Sprintf(" + %d more...", total-len(items))
	}
	return s
}

// eventFields names an Event's fields in one API version: events.k8s.io/v1
// renamed those of core Events, which both print with the same columns.
type eventFields struct {
	first, last, count, source, reporter, involved, message string
}

var (
	coreEvent = eventFields{
		first: "firstTimestamp", last: "lastTimestamp", count: "count", source: "source",
		reporter: "reportingComponent", involved: "involvedObject", message: "message",
	}
	eventsV1Event = eventFields{
		first: "deprecatedFirstTimestamp", last: "deprecatedLastTimestamp", count: "deprecatedCount", source: "deprecatedSource",
		reporter: "reportingController", involved: "regarding", message: "note",
	}
)

// eventCells returns the printer of Events with fields f.
func eventCells(f eventFields) cellsFunc {
	return func(o obj, now time.Time) []any {
		first, last := o.time(f.first), o.time(f.last)
		if t := o.time("series", "lastObservedTime"); !t.IsZero() {
			last = t
		}
		if first.IsZero() {
			first = o.time("eventTime")
		}
		if last.IsZero() {
			last = first
		}
		count := o.num(f.count)
		if n, ok := o.int("series", "count"); ok {
			count = n
		}
		source := eventSource(o.str(f.source, "component"), o.str(f.reporter), o.str(f.source, "host"), o.str("reportingInstance"))
		return eventRow(o, now, o.obj(f.involved), source, o.str(f.message), first, last, count)
	}
}

// eventSource prints who reported an event: the legacy source, else the
// reporting controller and instance.
func eventSource(component, controller, host, instance string) string {
	if component == "" {
		component = controller
	}
	if host == "" {
		host = instance
	}
	if host != "" {
		return component + ", " + host
	}
	return component
}

func eventRow(o obj, now time.Time, involved obj, source, message string, first, last time.Time, count int64) []any {
	if count == 0 {
		count = 1 // an event without a count happened once
	}
	object := strings.ToLower(involved.str("kind")) + "/" + involved.str("name")
	return []any{
		age(last, now), o.str("type"), o.str("reason"), object, involved.str("fieldPath"), source,
		strings.TrimSpace(message), age(first, now), count, o.name(),
	}
}

func persistentVolumeCells(o obj, now time.Time) []any {
	spec := o.obj("spec")
	claim := ""
	if ref := spec.obj("claimRef"); ref != nil {
		claim = ref.str("namespace") + "/" + ref.str("name")
	}
	return []any{
		o.name(), spec.str("capacity", "storage"), accessModes(spec.strings("accessModes")),
		spec.str("persistentVolumeReclaimPolicy"), o.str("status", "phase"), claim,
		spec.str("storageClassName"), unset(spec.str("volumeAttributesClassName")),
		o.str("status", "reason"), o.age(now), unset(spec.str("volumeMode")),
	}
}

func persistentVolumeClaimCells(o obj, now time.Time) []any {
	spec, status := o.obj("spec"), o.obj("status")
	capacity, modes := "", ""
	if spec.str("volumeName") != "" {
		capacity = status.str("capacity", "storage")
		modes = accessModes(status.strings("accessModes"))
	}
	class := status.str("currentVolumeAttributesClassName")
	return []any{
		o.name(), status.str("phase"), spec.str("volumeName"), capacity, modes,
		spec.str("storageClassName"), unset(class), o.age(now), unset(spec.str("volumeMode")),
	}
}

func unset(s string) string {
	if s == "" {
		return "<unset>"
	}
	return s
}

// accessModes abbreviates access modes (RWO, ROX, RWX, RWOP), each once.
func accessModes(modes []string) string {
	short := map[string]string{"ReadWriteOnce": "RWO", "ReadOnlyMany": "ROX", "ReadWriteMany": "RWX", "ReadWriteOncePod": "RWOP"}
	var out []string
	for _, m := range []string{"ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod"} {
		for _, have := range modes {
			if have == m {
				out = append(out, short[m])
				break
			}
		}
	}
	return strings.Join(out, ",")
}

// componentStatusCells reports a component's Healthy condition.
func componentStatusCells(o obj, _ time.Time) []any {
	status, message, reason := "Unknown", "", ""
	for _, c := range o.list("conditions") {
		if c.str("type") != "Healthy" {
			continue
		}
		status = "Unhealthy"
		if c.str("status") == "True" {
			status = "Healthy"
		}
		message, reason = c.str("message"), c.str("error")
	}
	return []any{o.name(), status, message, reason}
}
