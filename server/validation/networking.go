package validation

import (
	"strings"

	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/server/decoded"
)

// ingress checks an Ingress: a default backend or rules, hosts that are
// DNS names, paths with a type, absolute, to a service port, the class's
// name.
func ingress(spec Object) field.ErrorList {
	var errs field.ErrorList
	rules := decoded.Items(spec["rules"])
	if decoded.Child(spec, "defaultBackend") == nil && len(rules) == 0 {
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
		paths := decoded.Items(http["paths"])
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
	return append(errs, ingressBackend(decoded.Child(p, "backend"), path.Child("backend"))...)
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
	port := decoded.Child(svc, "port")
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
