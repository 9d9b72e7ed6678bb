package validation

import (
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/sets"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/internal/jsonmap"
)

// podSpec checks a pod's spec: its volumes, containers, tolerations,
// deadline and restart policy (what any pod may have; a controller's
// template may allow less).
func podSpec(spec Object, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	// A volume with an error is not one of the pod's volumes: a later one
	// may have its name, a container may not mount it (as kube-apiserver).
	volumes := sets.New[string]()
	for i, v := range jsonmap.Items(spec["volumes"]) {
		name, namePath := str(v, "name"), path.Child("volumes").Index(i).Child("name")
		var volumeErrs field.ErrorList
		if name == "" {
			volumeErrs = append(volumeErrs, field.Required(namePath, ""))
		} else {
			volumeErrs = append(volumeErrs, dnsLabel(namePath, name)...)
		}
		if volumes.Has(name) {
			volumeErrs = append(volumeErrs, field.Duplicate(namePath, name))
		}
		if claim, ok := v["persistentVolumeClaim"].(map[string]any); ok && str(claim, "claimName") == "" {
			volumeErrs = append(volumeErrs, field.Required(path.Child("volumes").Index(i).Child("persistentVolumeClaim", "claimName"), ""))
		}
		if len(volumeErrs) == 0 {
			volumes.Insert(name)
		}
		errs = append(errs, volumeErrs...)
	}
	// Containers and init containers have distinct names, each checked
	// after the rest of its container.
	names := uniqueNames{}
	containers := jsonmap.Items(spec["containers"])
	if len(containers) == 0 {
		errs = append(errs, field.Required(path.Child("containers"), ""))
	}
	for i, c := range containers {
		at := path.Child("containers").Index(i)
		errs = append(errs, container(c, at, volumes)...)
		errs = append(errs, names.add(at.Child("name"), str(c, "name"))...)
	}
	for i, c := range jsonmap.Items(spec["initContainers"]) {
		at := path.Child("initContainers").Index(i)
		errs = append(errs, container(c, at, volumes)...)
		// An unnamed init container is not noted: only a container
		// before it can be its duplicate.
		if name := str(c, "name"); name != "" || names[name] {
			errs = append(errs, names.add(at.Child("name"), name)...)
		}
	}
	if spec["hostNetwork"] == true {
		errs = append(errs, hostNetworkPorts(spec, path)...)
	}
	errs = append(errs, sysctls(spec, path.Child("securityContext", "sysctls"))...)
	errs = append(errs, validateTolerations(jsonmap.Items(spec["tolerations"]), path.Child("tolerations"))...)
	if n, ok := jsonmap.IntOf(spec["activeDeadlineSeconds"]); ok && (n < 1 || n > math.MaxInt32) {
		errs = append(errs, field.Invalid(path.Child("activeDeadlineSeconds"), n, fmt.Sprintf("must be between %d and %d, inclusive", 1, math.MaxInt32)))
	}
	switch policy := str(spec, "restartPolicy"); policy {
	case "Always", "OnFailure", "Never":
	case "":
		errs = append(errs, field.Required(path.Child("restartPolicy"), ""))
	default:
		errs = append(errs, field.NotSupported(path.Child("restartPolicy"), policy, []string{"Always", "OnFailure", "Never"}))
	}
	return errs
}

// container checks a container's name, image, ports, volume mounts (of
// volumes, at distinct paths) and resources (requests within limits).
func container(c Object, path *field.Path, volumes sets.Set[string]) field.ErrorList {
	var errs field.ErrorList
	if name := str(c, "name"); name == "" {
		errs = append(errs, field.Required(path.Child("name"), ""))
	} else {
		errs = append(errs, dnsLabel(path.Child("name"), name)...)
	}
	if str(c, "image") == "" {
		errs = append(errs, field.Required(path.Child("image"), ""))
	}
	switch policy := str(c, "imagePullPolicy"); policy {
	case "Always", "IfNotPresent", "Never", "": // empty: defaulted
	default:
		errs = append(errs, field.NotSupported(path.Child("imagePullPolicy"), policy, []string{"Always", "IfNotPresent", "Never"}))
	}
	for i, e := range jsonmap.Items(c["env"]) {
		if name, _ := e["name"].(string); name == "" {
			errs = append(errs, field.Required(path.Child("env").Index(i).Child("name"), ""))
		} else {
			for _, msg := range utilvalidation.IsRelaxedEnvVarName(name) {
				errs = append(errs, field.Invalid(path.Child("env").Index(i).Child("name"), name, msg))
			}
		}
	}
	portNames := uniqueNames{}
	for i, p := range jsonmap.Items(c["ports"]) {
		pp := path.Child("ports").Index(i)
		if name, _ := p["name"].(string); name != "" {
			msgs := utilvalidation.IsValidPortName(name)
			for _, msg := range msgs {
				errs = append(errs, field.Invalid(pp.Child("name"), name, msg))
			}
			if len(msgs) == 0 {
				errs = append(errs, portNames.add(pp.Child("name"), name)...)
			}
		}
		if n := intOf(p["containerPort"]); n == 0 {
			errs = append(errs, field.Required(pp.Child("containerPort"), ""))
		} else {
			errs = append(errs, portRange(pp.Child("containerPort"), n)...)
		}
		if n := intOf(p["hostPort"]); n != 0 {
			errs = append(errs, portRange(pp.Child("hostPort"), n)...)
		}
		errs = append(errs, protocol(pp.Child("protocol"), p)...)
	}
	paths := sets.New[string]()
	for i, m := range jsonmap.Items(c["volumeMounts"]) {
		mp := path.Child("volumeMounts").Index(i)
		name := str(m, "name")
		if name == "" {
			errs = append(errs, field.Required(mp.Child("name"), ""))
		}
		if !volumes.Has(name) {
			errs = append(errs, field.NotFound(mp.Child("name"), name))
		}
		if at := str(m, "mountPath"); at == "" {
			errs = append(errs, field.Required(mp.Child("mountPath"), ""))
		} else if paths.Has(at) {
			errs = append(errs, field.Invalid(mp.Child("mountPath"), at, "must be unique"))
		} else {
			paths.Insert(at)
		}
	}
	for _, k := range []string{"livenessProbe", "readinessProbe", "startupProbe"} {
		if p := jsonmap.Child(c, k); p != nil {
			errs = append(errs, probe(p, path.Child(k), k != "readinessProbe")...)
		}
	}
	for _, k := range []string{"limits", "requests"} {
		amounts := jsonmap.Child(jsonmap.Child(c, "resources"), k)
		for _, name := range slices.Sorted(maps.Keys(amounts)) {
			at := path.Child("resources", k).Key(name)
			errs = append(errs, containerResourceName(name, at)...)
			errs = append(errs, resourceQuantity(name, amounts[name], at)...)
		}
	}
	return append(errs, requestsWithinLimits(jsonmap.Child(c, "resources"), path.Child("resources"))...)
}

// containerResourceName checks the name of a resource a container
// requests or limits: a qualified name, a standard resource unless it has
// a domain.
func containerResourceName(name string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range utilvalidation.IsQualifiedName(name) {
		errs = append(errs, field.Invalid(path, name, msg))
	}
	if !strings.Contains(name, "/") && name != "cpu" && name != "memory" && name != "ephemeral-storage" && !strings.HasPrefix(name, "hugepages-") {
		errs = append(errs, field.Invalid(path, name, "must be a standard resource for containers"))
	}
	return errs
}

// probe checks a probe: one handler, with a port in range, and a success
// threshold of 1 where one success is all it can mean (oneSuccess).
func probe(p Object, path *field.Path, oneSuccess bool) field.ErrorList {
	var errs field.ErrorList
	handlers := 0
	for _, h := range []string{"exec", "httpGet", "tcpSocket", "grpc"} {
		action := jsonmap.Child(p, h)
		if action == nil {
			continue
		}
		if handlers++; handlers > 1 {
			errs = append(errs, field.Forbidden(path.Child(h), "may not specify more than 1 handler type"))
			continue
		}
		if h == "exec" {
			continue
		}
		if name, named := action["port"].(string); named {
			for _, msg := range utilvalidation.IsValidPortName(name) {
				errs = append(errs, field.Invalid(path.Child(h, "port"), name, msg))
			}
		} else {
			errs = append(errs, portRange(path.Child(h, "port"), intOf(action["port"]))...)
		}
	}
	if handlers == 0 {
		errs = append(errs, field.Required(path, "must specify a handler type"))
	}
	for _, k := range []string{"initialDelaySeconds", "timeoutSeconds", "periodSeconds", "successThreshold", "failureThreshold"} {
		if n := intOf(p[k]); n < 0 {
			errs = append(errs, field.Invalid(path.Child(k), n, "must be greater than or equal to 0"))
		}
	}
	if n := intOf(p["successThreshold"]); oneSuccess && n != 1 {
		errs = append(errs, field.Invalid(path.Child("successThreshold"), n, "must be 1"))
	}
	return errs
}

// requestsWithinLimits checks, resource by resource in name order, that a
// container requests no more than it limits.
func requestsWithinLimits(res Object, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	requests, limits := jsonmap.Child(res, "requests"), jsonmap.Child(res, "limits")
	for _, name := range slices.Sorted(maps.Keys(requests)) {
		req, okReq := jsonmap.Quantity(requests[name])
		lim, okLim := jsonmap.Quantity(limits[name])
		if okReq && okLim && req.Cmp(lim) > 0 {
			errs = append(errs, field.Invalid(path.Child("requests"), req.String(), fmt.Sprintf("must be less than or equal to %s limit of %s", name, lim.String())))
		}
	}
	return errs
}

func portRange(path *field.Path, n int64) field.ErrorList {
	if n < 1 || n > 65535 {
		return field.ErrorList{field.Invalid(path, n, "must be between 1 and 65535, inclusive")}
	}
	return nil
}

func protocol(path *field.Path, port Object) field.ErrorList {
	switch p := str(port, "protocol"); p {
	case "TCP", "UDP", "SCTP":
		return nil
	default:
		return field.ErrorList{field.NotSupported(path, p, []string{"SCTP", "TCP", "UDP"})}
	}
}

// hostNetworkPorts checks that a pod on the host's network names no host
// port other than its container port.
func hostNetworkPorts(spec Object, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, list := range []string{"containers", "initContainers"} {
		for i, c := range jsonmap.Items(spec[list]) {
			for j, p := range jsonmap.Items(c["ports"]) {
				if host := intOf(p["hostPort"]); host != 0 && host != intOf(p["containerPort"]) {
					errs = append(errs, field.Invalid(path.Child(list).Index(i).Child("ports").Index(j).Child("hostPort"), host, "must match `containerPort` when `hostNetwork` is true"))
				}
			}
		}
	}
	return errs
}

// validateTolerations checks a pod's tolerations: a qualified key, Exists
// for all keys, a label value to equal, a known effect.
func validateTolerations(tolerations []Object, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, t := range tolerations {
		at := path.Index(i)
		key, op, value, effect := str(t, "key"), str(t, "operator"), str(t, "value"), str(t, "effect")
		if key != "" {
			for _, msg := range utilvalidation.IsQualifiedName(key) {
				errs = append(errs, field.Invalid(at.Child("key"), key, msg))
			}
		}
		if key == "" && op != "Exists" {
			errs = append(errs, field.Invalid(at.Child("operator"), op, "operator must be Exists when `key` is empty, which means \"match all values and all keys\""))
		}
		if _, ok := t["tolerationSeconds"]; ok && effect != "NoExecute" {
			errs = append(errs, field.Invalid(at.Child("effect"), effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"))
		}
		switch op {
		case "Equal", "":
			if msgs := utilvalidation.IsValidLabelValue(value); len(msgs) > 0 {
				// kube-apiserver names the operator for a bad value.
				errs = append(errs, field.Invalid(at.Child("operator"), value, strings.Join(msgs, ";")))
			}
		case "Exists":
			if value != "" {
				errs = append(errs, field.Invalid(at.Child("operator"), value, "value must be empty when `operator` is 'Exists'"))
			}
		default:
			errs = append(errs, field.NotSupported(at.Child("operator"), op, []string{"Equal", "Exists"}))
		}
		switch effect {
		case "", "NoSchedule", "PreferNoSchedule", "NoExecute":
		default:
			errs = append(errs, field.NotSupported(at.Child("effect"), effect, []string{"NoSchedule", "PreferNoSchedule", "NoExecute"}))
		}
	}
	return errs
}

// deepCopy copies a decoded JSON object.
func deepCopy(obj Object) Object {
	out := make(Object, len(obj))
	for k, v := range obj {
		out[k] = deepCopyValue(v)
	}
	return out
}

func deepCopyValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		return deepCopy(v)
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = deepCopyValue(e)
		}
		return out
	}
	return v
}

// sysctlName is what a sysctl's name must match ("." or "/" between the
// segments).
var sysctlName = regexp.MustCompile(`^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$`)

const sysctlMaxLength = 253

// sysctls checks the names of a pod's securityContext.sysctls: well
// formed, distinct, and none of the namespaced ones of a namespace the pod
// shares with its host (its network, its IPC).
func sysctls(spec Object, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	names := sets.New[string]()
	for i, s := range jsonmap.Items(jsonmap.Child(spec, "securityContext")["sysctls"]) {
		name, namePath := str(s, "name"), path.Index(i).Child("name")
		switch {
		case name == "":
			errs = append(errs, field.Required(namePath, ""))
		case len(name) > sysctlMaxLength || !sysctlName.MatchString(name):
			errs = append(errs, field.Invalid(namePath, name, fmt.Sprintf("must have at most %d characters and match regex %s", sysctlMaxLength, sysctlName)))
		case names.Has(name):
			errs = append(errs, field.Duplicate(namePath, name))
		}
		switch sysctlNamespace(name) {
		case "net":
			if spec["hostNetwork"] == true {
				errs = append(errs, field.Invalid(namePath, name, "may not be specified when 'hostNetwork' is true"))
			}
		case "ipc":
			if spec["hostIPC"] == true {
				errs = append(errs, field.Invalid(namePath, name, "may not be specified when 'hostIPC' is true"))
			}
		}
		names.Insert(name)
	}
	return errs
}

// ipcSysctls are the sysctls of the IPC namespace (besides fs.mqueue.*).
var ipcSysctls = sets.New("kernel.sem", "kernel.shmall", "kernel.shmmax", "kernel.shmmni", "kernel.shm_rmid_forced", "kernel.shm",
	"kernel.msgmax", "kernel.msgmnb", "kernel.msgmni", "kernel.msg")

// sysctlNamespace is the Linux namespace a sysctl belongs to, "net" or
// "ipc" ("" if unknown), its name read with "." between segments (a name
// whose first separator is "/" uses "/" so, and "." within a segment).
func sysctlNamespace(name string) string {
	if i := strings.IndexAny(name, "./"); i >= 0 && name[i] == '/' {
		name = strings.Map(func(r rune) rune {
			switch r {
			case '.':
				return '/'
			case '/':
				return '.'
			}
			return r
		}, name)
	}
	name, _, _ = strings.Cut(name, "*")
	switch {
	case ipcSysctls.Has(name), strings.HasPrefix(name, "fs.mqueue."):
		return "ipc"
	case strings.HasPrefix(name, "net."):
		return "net"
	}
	return ""
}
