package table

import (
	"fmt"
	"strings"
	"time"
)

func leaseCells(o obj, now time.Time) []any {
	return []any{o.name(), o.str("spec", "holderIdentity"), o.age(now)}
}

func roleBindingCells(o obj, now time.Time) []any {
	var users, groups, sas []string
	for _, s := range o.list("subjects") {
		switch s.str("kind") {
		case "User":
			users = append(users, s.str("name"))
		case "Group":
			groups = append(groups, s.str("name"))
		case "ServiceAccount":
			sas = append(sas, s.str("namespace")+"/"+s.str("name"))
		}
	}
	return []any{
		o.name(), o.str("roleRef", "kind") + "/" + o.str("roleRef", "name"), o.age(now),
		strings.Join(users, ", "), strings.Join(groups, ", "), strings.Join(sas, ", "),
	}
}

func endpointSliceCells(o obj, now time.Time) []any {
	var ports []string
	for _, p := range o.list("ports") {
		if n, ok := p.int("port"); ok {
			ports = append(ports, itoa(n))
		} else {
			ports = append(ports, "<unset>")
		}
	}
	var addrs []string
	total := 0
	for _, ep := range o.list("endpoints") {
		for _, a := range ep.strings("addresses") {
			total++
			if len(addrs) < 3 {
				addrs = append(addrs, a)
			}
		}
	}
	portsCell := "<unset>"
	if len(ports) > 0 {
		portsCell = moreList(first3(ports), len(ports), "<unset>")
	}
	return []any{o.name(), o.str("addressType"), portsCell, moreList(addrs, total, "<unset>"), o.age(now)}
}

func first3(l []string) []string {
	if len(l) > 3 {
		return l[:3]
	}
	return l
}

func ingressCells(o obj, now time.Time) []any {
	spec := o.obj("spec")
	var hosts []string
	for _, r := range spec.list("rules") {
		if h := r.str("host"); h != "" {
			hosts = append(hosts, h)
		}
	}
	hostsCell := "*"
	if len(hosts) > 0 {
		hostsCell = moreList(first3(hosts), len(hosts), "*")
	}
	ports := "80"
	if len(spec.list("tls")) > 0 {
		ports = "80, 443"
	}
	return []any{o.name(), orNone(spec.str("ingressClassName")), hostsCell, strings.Join(loadBalancerAddresses(o), ","), ports, o.age(now)}
}

func ingressClassCells(o obj, now time.Time) []any {
	params := "<none>"
	if p := o.obj("spec", "parameters"); p != nil {
		kind := p.str("kind")
		if g := p.str("apiGroup"); g != "" {
			kind += "." + g
		}
		params = kind + "/" + p.str("name")
	}
	return []any{o.name(), o.str("spec", "controller"), params, o.age(now)}
}

func storageClassCells(o obj, now time.Time) []any {
	name := o.name()
	ann := o.stringMap("metadata", "annotations")
	if ann["storageclass.kubernetes.io/is-default-class"] == "true" || ann["storageclass.beta.kubernetes.io/is-default-class"] == "true" {
		name += " (default)"
	}
	reclaim := o.str("reclaimPolicy")
	if reclaim == "" {
		reclaim = "Delete"
	}
	binding := o.str("volumeBindingMode")
	if binding == "" {
		binding = "Immediate"
	}
	expand, _ := o.boolean("allowVolumeExpansion")
	return []any{name, o.str("provisioner"), reclaim, binding, expand, o.age(now)}
}

func networkPolicyCells(o obj, now time.Time) []any {
	return []any{o.name(), selector(o.obj("spec", "podSelector")), o.age(now)}
}

func priorityClassCells(o obj, now time.Time) []any {
	global, _ := o.boolean("globalDefault")
	return []any{o.name(), o.num("value"), global, o.age(now), o.str("preemptionPolicy")}
}

func runtimeClassCells(o obj, now time.Time) []any {
	return []any{o.name(), o.str("handler"), o.age(now)}
}

func resourceQuotaCells(o obj, now time.Time) []any {
	var req, lim []string
	hard, used := o.obj("status", "hard"), o.obj("status", "used")
	for _, k := range sortedKeys(hard) {
		u, _ := used[k].(string)
		h, _ := hard[k].(string)
		pair := fmt.Sprintf("%s: %s/%s", k, u, h)
		if strings.HasPrefix(k, "limits.") {
			lim = append(lim, pair)
		} else {
			req = append(req, pair)
		}
	}
	return []any{o.name(), strings.Join(req, ", "), strings.Join(lim, ", "), o.age(now)}
}
