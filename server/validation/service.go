package validation

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/server/decoded"
)

// service checks a Service's ports (required unless it is headless or an
// external name; named when more than one) and type.
func service(spec Object) field.ErrorList {
	var errs field.ErrorList
	typ := str(spec, "type")
	ports := decoded.Items(spec["ports"])
	if len(ports) == 0 && str(spec, "clusterIP") != "None" && typ != "ExternalName" {
		errs = append(errs, field.Required(specPath.Child("ports"), ""))
	}
	for i, p := range ports {
		pp := specPath.Child("ports").Index(i)
		if len(ports) > 1 && str(p, "name") == "" {
			errs = append(errs, field.Required(pp.Child("name"), ""))
		}
		errs = append(errs, protocol(pp.Child("protocol"), p)...)
		errs = append(errs, portRange(pp.Child("port"), intOf(p["port"]))...)
		if _, named := p["targetPort"].(string); !named {
			errs = append(errs, portRange(pp.Child("targetPort"), intOf(p["targetPort"]))...)
		}
	}
	switch typ {
	case "ClusterIP", "ExternalName", "LoadBalancer", "NodePort":
	default:
		errs = append(errs, field.NotSupported(specPath.Child("type"), typ, []string{"ClusterIP", "ExternalName", "LoadBalancer", "NodePort"}))
	}
	return errs
}
