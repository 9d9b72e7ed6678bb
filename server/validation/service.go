package validation

import (
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/server/decoded"
)

// service checks a Service's ports (required unless it is headless or an
// external name; named when more than one) and type.
func service(spec Object) field.ErrorList {
	var errs field.ErrorList
	typ := str(spec, "type")
	if typ == "ExternalName" && str(spec, "externalName") == "" {
		errs = append(errs, field.Required(specPath.Child("externalName"), ""))
	}
	if (typ == "NodePort" || typ == "LoadBalancer") && str(spec, "clusterIP") == "None" {
		errs = append(errs, field.Invalid(specPath.Child("clusterIPs").Index(0), "None", "may not be set to 'None' for "+typ+" services"))
	}
	ports := decoded.Items(spec["ports"])
	names, keys := sets.New[string](), sets.New[servicePortKey]()
	if len(ports) == 0 && str(spec, "clusterIP") != "None" && typ != "ExternalName" {
		errs = append(errs, field.Required(specPath.Child("ports"), ""))
	}
	for i, p := range ports {
		pp := specPath.Child("ports").Index(i)
		name := str(p, "name")
		if len(ports) > 1 && name == "" {
			errs = append(errs, field.Required(pp.Child("name"), ""))
		} else if names.Has(name) {
			errs = append(errs, field.Duplicate(pp.Child("name"), name))
		}
		names.Insert(name)
		errs = append(errs, protocol(pp.Child("protocol"), p)...)
		errs = append(errs, portRange(pp.Child("port"), intOf(p["port"]))...)
		if _, named := p["targetPort"].(string); !named {
			errs = append(errs, portRange(pp.Child("targetPort"), intOf(p["targetPort"]))...)
		}
		// A port and protocol serve once; kube-apiserver prints the key
		// it compares as its Go struct.
		key := servicePortKey{Protocol: str(p, "protocol"), Port: intOf(p["port"])}
		if keys.Has(key) {
			errs = append(errs, field.Duplicate(pp, key))
		}
		keys.Insert(key)
	}
	switch typ {
	case "ClusterIP", "ExternalName", "LoadBalancer", "NodePort":
	default:
		errs = append(errs, field.NotSupported(specPath.Child("type"), typ, []string{"ClusterIP", "ExternalName", "LoadBalancer", "NodePort"}))
	}
	return errs
}

// servicePortKey is what kube-apiserver compares to find duplicate
// Service ports, with its Go field names.
type servicePortKey struct {
	Name        string
	Protocol    string
	AppProtocol *string
	Port        int64
	TargetPort  int
	NodePort    int
}
