package validation

import (
	"strings"

	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/server/decoded"
)

// ingress checks an Ingress: a default backend or rules, hosts that are
// DNS names, paths with a type, absolute, to a service port.
func ingress(spec Object) field.ErrorList {
	var errs field.ErrorList
	rules := decoded.Items(spec["rules"])
	if decoded.Child(spec, "defaultBackend") == nil && len(rules) == 0 {
		errs = append(errs, field.Invalid(specPath, nil, "either `defaultBackend` or `rules` must be specified"))
	}
	for i, r := range rules {
		rp := specPath.Child("rules").Index(i)
		if host := str(r, "host"); host != "" {
			for _, msg := range utilvalidation.IsDNS1123Subdomain(strings.TrimPrefix(host, "*.")) {
				errs = append(errs, field.Invalid(rp.Child("host"), host, msg))
			}
		}
		for j, p := range decoded.Items(decoded.Child(r, "http")["paths"]) {
			pp := rp.Child("http", "paths").Index(j)
			switch str(p, "pathType") {
			case "":
				errs = append(errs, field.Required(pp.Child("pathType"), "pathType must be specified"))
			case "Prefix", "Exact":
				if path := str(p, "path"); !strings.HasPrefix(path, "/") {
					errs = append(errs, field.Invalid(pp.Child("path"), path, "must be an absolute path"))
				}
			}
			if svc := decoded.Child(decoded.Child(p, "backend"), "service"); svc != nil {
				if port := decoded.Child(svc, "port"); str(port, "name") == "" && intOf(port["number"]) == 0 {
					errs = append(errs, field.Required(pp.Child("backend"), "port name or number is required"))
				}
			}
		}
	}
	return errs
}
