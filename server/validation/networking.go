package validation

import (
	"strings"

	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/internal/jsonmap"
)

// ingress checks an Ingress: a default backend or rules, hosts that are
// DNS names, paths with a type, absolute, to a service port, the class's
// name.
func ingress(spec Object) field.ErrorList {
	var errs field.ErrorList
	rules := jsonmap.Items(spec["rules"])
	if jsonmap.Child(spec, "defaultBackend") == nil && len(rules) == 0 {
		errs = append(errs, field.Invalid(specPath, spec["rules"], "either `defaultBackend` or `rules` must be specified"))
	}
	if backend, ok := spec["defaultBackend"].(map[string]any); ok {
		errs = append(errs, ingressBackend(backend, specPath.Child("defaultBackend"))...)
	}
	for i, r := range rules {
		rp := specPath.Child("rules").Index(i)
		if host := str(r, "host"); host != "" {
			for _, msg := range utilvalidation.IsDNS1123Subdomain(strings.TrimPrefix(host, "*.")) {
				errs = append(errs, field.Invalid(rp.Child("host"), host, msg))
			}
		}
		http, ok := r["http"].(map[string]any)
		if !ok {
			continue
		}
		paths := jsonmap.Items(http["paths"])
		if len(paths) == 0 {
			errs = append(errs, field.Required(rp.Child("http", "paths"), ""))
		}
		for j, p := range paths {
			errs = append(errs, ingressPath(p, rp.Child("http", "paths").Index(j))...)
		}
	}
	if class, ok := spec["ingressClassName"].(string); ok {
		for _, msg := range utilvalidation.IsDNS1123Subdomain(class) {
			errs = append(errs, field.Invalid(specPath.Child("ingressClassName"), class, msg))
		}
	}
	return errs
}

// ingressPath checks a path of an Ingress rule: its type, the path as the
// type wants it, its backend.
func ingressPath(p Object, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	at := str(p, "path")
	switch typ, ok := p["pathType"].(string); {
	case !ok:
		return field.ErrorList{field.Required(path.Child("pathType"), "pathType must be specified")}
	case typ == "Exact" || typ == "Prefix":
		if !strings.HasPrefix(at, "/") {
			errs = append(errs, field.Invalid(path.Child("path"), at, "must be an absolute path"))
		}
		if at != "" {
			for _, seq := range []string{"//", "/./", "/../", "%2f", "%2F"} {
				if strings.Contains(at, seq) {
					errs = append(errs, field.Invalid(path.Child("path"), at, "must not contain '"+seq+"'"))
				}
			}
			for _, suffix := range []string{"/..", "/."} {
				if strings.HasSuffix(at, suffix) {
					errs = append(errs, field.Invalid(path.Child("path"), at, "cannot end with '"+suffix+"'"))
				}
			}
		}
	case typ == "ImplementationSpecific":
		if at != "" && !strings.HasPrefix(at, "/") {
			errs = append(errs, field.Invalid(path.Child("path"), at, "must be an absolute path"))
		}
	default:
		errs = append(errs, field.NotSupported(path.Child("pathType"), typ, []string{"Exact", "ImplementationSpecific", "Prefix"}))
	}
	return append(errs, ingressBackend(jsonmap.Child(p, "backend"), path.Child("backend"))...)
}

// ingressBackend checks an Ingress backend: a resource or a service (a
// DNS-1035 name, and a port by name or number).
func ingressBackend(b Object, path *field.Path) field.ErrorList {
	_, hasResource := b["resource"].(map[string]any)
	svc, hasService := b["service"].(map[string]any)
	switch {
	case hasResource && hasService:
		return field.ErrorList{field.Invalid(path, "", "cannot set both resource and service backends")}
	case hasResource:
		return nil
	case !hasService:
		return field.ErrorList{field.Invalid(path, "", "resource or service backend is required")}
	}
	var errs field.ErrorList
	if name := str(svc, "name"); name == "" {
		errs = append(errs, field.Required(path.Child("service", "name"), ""))
	} else {
		for _, msg := range utilvalidation.IsDNS1035Label(name) {
			errs = append(errs, field.Invalid(path.Child("service", "name"), name, msg))
		}
	}
	port := jsonmap.Child(svc, "port")
	name, number := str(port, "name"), intOf(port["number"])
	switch {
	case name != "" && number != 0:
		errs = append(errs, field.Invalid(path, "", "cannot set both port name & port number"))
	case name != "":
		for _, msg := range utilvalidation.IsValidPortName(name) {
			errs = append(errs, field.Invalid(path.Child("service", "port", "name"), name, msg))
		}
	case number != 0:
		errs = append(errs, portRange(path.Child("service", "port", "number"), number)...)
	default:
		errs = append(errs, field.Required(path, "port name or number is required"))
	}
	return errs
}

// NetworkPolicy checks a NetworkPolicy's spec: its selectors, ports,
// peers and policy types.
func NetworkPolicy(obj Object) field.ErrorList {
	spec := jsonmap.Child(obj, "spec")
	ls, _ := labelSelectorOf(spec["podSelector"])
	errs := metav1validation.ValidateLabelSelector(ls, metav1validation.LabelSelectorValidationOptions{}, specPath.Child("podSelector"))
	for _, dir := range []struct{ rules, peers string }{{"ingress", "from"}, {"egress", "to"}} {
		for i, r := range jsonmap.Items(spec[dir.rules]) {
			at := specPath.Child(dir.rules).Index(i)
			for j, p := range jsonmap.Items(r["ports"]) {
				errs = append(errs, networkPolicyPort(p, at.Child("ports").Index(j))...)
			}
			for j, p := range jsonmap.Items(r[dir.peers]) {
				errs = append(errs, networkPolicyPeer(p, at.Child(dir.peers).Index(j))...)
			}
		}
	}
	for i, t := range strs(spec["policyTypes"]) {
		if t != "Ingress" && t != "Egress" {
			errs = append(errs, field.NotSupported(specPath.Child("policyTypes").Index(i), t, []string{"Ingress", "Egress"}))
		}
	}
	return errs
}

// NetworkPolicyUpdate checks a NetworkPolicy's update: kube-apiserver
// checks its spec as new twice.
func NetworkPolicyUpdate(obj, _ Object) field.ErrorList {
	return append(NetworkPolicy(obj), NetworkPolicy(obj)...)
}

// networkPolicyPort checks a port of a NetworkPolicy rule: a protocol and a
// port number or name.
func networkPolicyPort(p Object, at *field.Path) field.ErrorList {
	var errs field.ErrorList
	if protocol, ok := p["protocol"].(string); ok && protocol != "TCP" && protocol != "UDP" && protocol != "SCTP" {
		errs = append(errs, field.NotSupported(at.Child("protocol"), protocol, []string{"TCP", "UDP", "SCTP"}))
	}
	switch port := p["port"].(type) {
	case nil:
	case string:
		for _, msg := range utilvalidation.IsValidPortName(port) {
			errs = append(errs, field.Invalid(at.Child("port"), port, msg))
		}
	default:
		errs = append(errs, portRange(at.Child("port"), intOf(port))...)
	}
	return errs
}

// networkPolicyPeer checks a peer of a NetworkPolicy rule: selectors of
// pods and namespaces, or an IP block.
func networkPolicyPeer(p Object, at *field.Path) field.ErrorList {
	var errs field.ErrorList
	peers := 0
	for _, k := range []string{"podSelector", "namespaceSelector"} {
		if ls, ok := labelSelectorOf(p[k]); ok {
			peers++
			errs = append(errs, metav1validation.ValidateLabelSelector(ls, metav1validation.LabelSelectorValidationOptions{}, at.Child(k))...)
		}
	}
	if _, ok := p["ipBlock"].(map[string]any); ok {
		if peers > 0 {
			errs = append(errs, field.Forbidden(at, "may not specify both ipBlock and another peer"))
		}
		peers++
	}
	if peers == 0 {
		errs = append(errs, field.Required(at, "must specify a peer"))
	}
	return errs
}
