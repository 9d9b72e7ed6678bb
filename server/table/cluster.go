package table

import (
	"strings"
	"time"
)

// Printers of the storage, networking, resource, flow control, admission and
// certificates types.

func csiDriverCells(o obj, now time.Time) []any {
	spec := o.obj("spec")
	flag := func(name string) bool { b, _ := spec.boolean(name); return b }
	var audiences []string
	for _, tr := range spec.list("tokenRequests") {
		audiences = append(audiences, tr.str("audience"))
	}
	return []any{
		o.name(), flag("attachRequired"), flag("podInfoOnMount"), flag("storageCapacity"),
		unset(strings.Join(audiences, ",")), flag("requiresRepublish"),
		unset(strings.Join(spec.strings("volumeLifecycleModes"), ",")), o.age(now),
	}
}

func csiNodeCells(o obj, now time.Time) []any {
	return []any{o.name(), int64(len(o.list("spec", "drivers"))), o.age(now)}
}

func volumeAttachmentCells(o obj, now time.Time) []any {
	attached, _ := o.boolean("status", "attached")
	return []any{
		o.name(), o.str("spec", "attacher"), o.str("spec", "source", "persistentVolumeName"),
		o.str("spec", "nodeName"), attached, o.age(now),
	}
}

func volumeAttributesClassCells(o obj, now time.Time) []any {
	return []any{o.name(), o.str("driverName"), o.age(now)}
}

// ipAddressCells has one cell more than IPAddress has columns, an age, as
// kube-apiserver sends it.
func ipAddressCells(o obj, now time.Time) []any {
	ref := o.obj("spec", "parentRef")
	parent := ""
	if ref != nil {
		parent = ref.str("resource")
		if g := ref.str("group"); g != "" {
			parent += "." + g
		}
		parent += "/"
		if ns := ref.str("namespace"); ns != "" {
			parent += ns + "/"
		}
		parent += ref.str("name")
	}
	return []any{o.name(), parent, o.age(now)}
}

func serviceCIDRCells(o obj, now time.Time) []any {
	return []any{o.name(), strings.Join(o.strings("spec", "cidrs"), ","), o.age(now)}
}

func deviceClassCells(o obj, now time.Time) []any { return []any{o.name(), o.age(now)} }

func resourceClaimCells(o obj, now time.Time) []any {
	var states []string
	if o.str("metadata", "deletionTimestamp") != "" {
		states = append(states, "deleted")
	}
	if o.obj("status", "allocation") == nil {
		if len(states) == 0 {
			states = append(states, "pending")
		}
	} else {
		states = append(states, "allocated")
		if len(o.list("status", "reservedFor")) > 0 {
			states = append(states, "reserved")
		}
	}
	return []any{o.name(), strings.Join(states, ","), o.age(now)}
}

func resourceSliceCells(o obj, now time.Time) []any {
	spec := o.obj("spec")
	return []any{o.name(), spec.str("nodeName"), spec.str("driver"), spec.str("pool", "name"), o.age(now)}
}

func flowSchemaCells(o obj, now time.Time) []any {
	spec := o.obj("spec")
	method := "<none>"
	if m := spec.str("distinguisherMethod", "type"); m != "" {
		method = m
	}
	missing := "?"
	for _, c := range o.list("status", "conditions") {
		if c.str("type") == "Dangling" {
			missing = c.str("status")
		}
	}
	return []any{
		o.name(), spec.str("priorityLevelConfiguration", "name"), spec.num("matchingPrecedence"),
		method, o.age(now), missing,
	}
}

func priorityLevelCells(o obj, now time.Time) []any {
	spec := o.obj("spec")
	var shares, queues, hand, limit any = "<none>", "<none>", "<none>", "<none>"
	if lim := spec.obj("limited"); lim != nil {
		shares = lim.num("nominalConcurrencyShares")
		if q := lim.obj("limitResponse", "queuing"); q != nil {
			queues, hand, limit = q.num("queues"), q.num("handSize"), q.num("queueLengthLimit")
		}
	}
	return []any{o.name(), spec.str("type"), shares, queues, hand, limit, o.age(now)}
}

func webhookConfigurationCells(o obj, now time.Time) []any {
	return []any{o.name(), int64(len(o.list("webhooks"))), o.age(now)}
}

func validatingAdmissionPolicyCells(o obj, now time.Time) []any {
	paramKind := "<unset>"
	if pk := o.obj("spec", "paramKind"); pk != nil {
		paramKind = pk.str("apiVersion") + "/" + pk.str("kind")
	}
	return []any{o.name(), int64(len(o.list("spec", "validations"))), paramKind, o.age(now)}
}

func validatingAdmissionPolicyBindingCells(o obj, now time.Time) []any {
	paramRef := "<unset>"
	if pr := o.obj("spec", "paramRef"); pr != nil {
		paramRef = pr.str("name")
		if ns := pr.str("namespace"); ns != "" {
			paramRef = ns + "/" + paramRef
		}
	}
	return []any{o.name(), o.str("spec", "policyName"), paramRef, o.age(now)}
}

func certificateSigningRequestCells(o obj, now time.Time) []any {
	spec := o.obj("spec")
	requested := "<none>"
	if s, ok := spec.int("expirationSeconds"); ok {
		requested = age(time.Unix(0, 0), time.Unix(s, 0))
	}
	// The decision (Denied over Approved, else Pending), then what followed.
	has := map[string]bool{}
	for _, c := range o.list("status", "conditions") {
		has[c.str("type")] = true
	}
	condition := "Pending"
	switch {
	case has["Denied"]:
		condition = "Denied"
	case has["Approved"]:
		condition = "Approved"
	}
	if has["Failed"] {
		condition += ",Failed"
	}
	if o.str("status", "certificate") != "" {
		condition += ",Issued"
	}
	return []any{o.name(), o.age(now), spec.str("signerName"), spec.str("username"), requested, condition}
}
