package defaults

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"kubeplay/internal/jsonmap"
)

// pod defaults a Pod's spec: a pod template's defaults, then what only a
// Pod gets: its containers request what they limit, and on the host's
// network, listen on the host's ports.
func pod(spec Object) {
	podSpec(spec)
	// As the conversion of a Pod (not a template) to the internal type does.
	if g, ok := jsonmap.IntOf(spec["terminationGracePeriodSeconds"]); ok && g < 0 {
		spec["terminationGracePeriodSeconds"] = num(1)
	}
	set(spec, "enableServiceLinks", true)
	for _, list := range []string{"containers", "initContainers"} {
		for _, c := range jsonmap.Items(spec[list]) {
			requestsFromLimits(jsonmap.Child(c, "resources"))
			if spec["hostNetwork"] != true {
				continue
			}
			for _, p := range jsonmap.Items(c["ports"]) {
				if n, ok := jsonmap.IntOf(p["hostPort"]); p != nil && (!ok || n == 0) {
					p["hostPort"] = p["containerPort"]
				}
			}
		}
	}
}

// requestsFromLimits makes a container request what it limits, for each
// resource it limits and does not request.
func requestsFromLimits(res Object) {
	limits := jsonmap.Child(res, "limits")
	if len(limits) == 0 {
		return
	}
	requests := setObject(res, "requests")
	for k, v := range limits {
		if _, ok := requests[k]; !ok {
			requests[k] = v
		}
	}
}

// podTemplate defaults a PodTemplateSpec.
func podTemplate(t Object) { podSpec(jsonmap.Child(t, "spec")) }

func podSpec(spec Object) {
	if spec == nil {
		return
	}
	set(spec, "dnsPolicy", "ClusterFirst")
	set(spec, "restartPolicy", "Always")
	set(spec, "schedulerName", "default-scheduler")
	setObject(spec, "securityContext")
	set(spec, "terminationGracePeriodSeconds", num(30))
	syncServiceAccount(spec)
	for _, list := range []string{"containers", "initContainers", "ephemeralContainers"} {
		for _, c := range jsonmap.Items(spec[list]) {
			container(c)
		}
	}
	for _, v := range jsonmap.Items(spec["volumes"]) {
		volume(v)
	}
}

func container(c Object) {
	set(c, "imagePullPolicy", pullPolicy(c["image"]))
	set(c, "terminationMessagePath", "/dev/termination-log")
	set(c, "terminationMessagePolicy", "File")
	for _, p := range jsonmap.Items(c["ports"]) {
		set(p, "protocol", "TCP")
	}
	for _, k := range []string{"livenessProbe", "readinessProbe", "startupProbe"} {
		if p := jsonmap.Child(c, k); p != nil {
			set(p, "timeoutSeconds", num(1))
			set(p, "periodSeconds", num(10))
			set(p, "successThreshold", num(1))
			set(p, "failureThreshold", num(3))
			handler(p)
		}
	}
	if l := jsonmap.Child(c, "lifecycle"); l != nil {
		handler(jsonmap.Child(l, "postStart"))
		handler(jsonmap.Child(l, "preStop"))
	}
	for _, e := range jsonmap.Items(c["env"]) {
		if from := jsonmap.Child(e, "valueFrom"); from != nil {
			fieldRef(jsonmap.Child(from, "fieldRef"))
			resourceFieldRef(jsonmap.Child(from, "resourceFieldRef"))
		}
	}
}

// pullPolicy is the imagePullPolicy of a container that names none: pull
// always an image with no tag or the tag latest, else only when missing.
func pullPolicy(image any) string {
	name, _ := image.(string)
	name, digest, _ := strings.Cut(name, "@")
	tag := ""
	if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") {
		tag = name[i+1:]
	}
	if tag == "latest" || tag == "" && digest == "" {
		return "Always"
	}
	return "IfNotPresent"
}

// handler defaults a probe's or a lifecycle hook's action.
func handler(h Object) {
	if g := jsonmap.Child(h, "httpGet"); g != nil {
		set(g, "path", "/")
		set(g, "scheme", "HTTP")
	}
	if g := jsonmap.Child(h, "grpc"); g != nil {
		set(g, "service", "")
	}
}

func fieldRef(r Object) { set(r, "apiVersion", "v1") }

func resourceFieldRef(r Object) { set(r, "divisor", "0") }

// defaultMode is 0644, the mode of files projected into a volume.
const defaultMode = json.Number("420")

func volume(v Object) {
	if v != nil && !slices.ContainsFunc(slices.Collect(maps.Keys(v)), func(k string) bool { return k != "name" && v[k] != nil }) {
		v["emptyDir"] = map[string]any{} // a volume without a source
	}
	for _, k := range []string{"configMap", "secret", "projected"} {
		set(jsonmap.Child(v, k), "defaultMode", defaultMode)
	}
	if d := jsonmap.Child(v, "downwardAPI"); d != nil {
		set(d, "defaultMode", defaultMode)
		downwardAPIItems(d)
	}
	if p := jsonmap.Child(v, "projected"); p != nil {
		for _, s := range jsonmap.Items(p["sources"]) {
			downwardAPIItems(jsonmap.Child(s, "downwardAPI"))
			set(jsonmap.Child(s, "serviceAccountToken"), "expirationSeconds", num(3600))
		}
	}
	set(jsonmap.Child(v, "hostPath"), "type", "")
	set(jsonmap.Child(v, "iscsi"), "iscsiInterface", "default")
	if r := jsonmap.Child(v, "rbd"); r != nil {
		set(r, "pool", "rbd")
		set(r, "user", "admin")
		set(r, "keyring", "/etc/ceph/keyring")
	}
	if e := jsonmap.Child(v, "ephemeral"); e != nil {
		set(jsonmap.Child(jsonmap.Child(e, "volumeClaimTemplate"), "spec"), "volumeMode", "Filesystem")
	}
}

func downwardAPIItems(d Object) {
	for _, it := range jsonmap.Items(d["items"]) {
		fieldRef(jsonmap.Child(it, "fieldRef"))
		resourceFieldRef(jsonmap.Child(it, "resourceFieldRef"))
	}
}
