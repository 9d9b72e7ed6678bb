package validation

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/sets"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/internal/jsonmap"
	"kubeplay/server/defaults"
)

// Service checks a Service: its ports (required unless it is headless or
// an external name; named when more than one), selector, type and what
// each type allows.
func Service(obj Object) field.ErrorList { return service(jsonmap.Child(obj, "spec")) }

// ServiceUpdate checks a Service's update: the Service as new, once the
// fields of a type it no longer has are dropped (as kube-apiserver drops
// them first), and its cluster IP unchanged.
func ServiceUpdate(obj, old Object) field.ErrorList {
	spec, oldSpec := deepCopy(jsonmap.Child(obj, "spec")), jsonmap.Child(old, "spec")
	defaults.DropTypeFields(spec, oldSpec)
	errs := service(spec)
	ip, oldIP := str(spec, "clusterIP"), str(oldSpec, "clusterIP")
	if ip != "" && oldIP != "" && ip != oldIP && spec["type"] != "ExternalName" {
		errs = append(errs, field.Invalid(specPath.Child("clusterIPs").Index(0), []string{ip}, "may not change once set"))
	}
	return errs
}

func service(spec Object) field.ErrorList {
	var errs field.ErrorList
	typ := str(spec, "type")
	if typ == "ExternalName" {
		// A trailing dot marks the name fully qualified.
		if cname := strings.TrimSuffix(str(spec, "externalName"), "."); cname == "" {
			errs = append(errs, field.Required(specPath.Child("externalName"), ""))
		} else {
			for _, msg := range utilvalidation.IsDNS1123Subdomain(cname) {
				errs = append(errs, field.Invalid(specPath.Child("externalName"), cname, msg))
			}
		}
	}
	if (typ == "NodePort" || typ == "LoadBalancer") && str(spec, "clusterIP") == "None" {
		errs = append(errs, field.Invalid(specPath.Child("clusterIPs").Index(0), "None", "may not be set to 'None' for "+typ+" services"))
	}
	ports := jsonmap.Items(spec["ports"])
	names, keys := uniqueNames{}, sets.New[servicePortKey]()
	if len(ports) == 0 && str(spec, "clusterIP") != "None" && typ != "ExternalName" {
		errs = append(errs, field.Required(specPath.Child("ports"), ""))
	}
	for i, p := range ports {
		pp := specPath.Child("ports").Index(i)
		name := str(p, "name")
		if len(ports) > 1 && name == "" {
			errs = append(errs, field.Required(pp.Child("name"), ""))
		} else if name != "" {
			errs = append(errs, dnsLabel(pp.Child("name"), name)...)
			errs = append(errs, names.add(pp.Child("name"), name)...)
		}
		errs = append(errs, protocol(pp.Child("protocol"), p)...)
		errs = append(errs, portRange(pp.Child("port"), intOf(p["port"]))...)
		if target, named := p["targetPort"].(string); named {
			for _, msg := range utilvalidation.IsValidPortName(target) {
				errs = append(errs, field.Invalid(pp.Child("targetPort"), target, msg))
			}
		} else {
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
	errs = append(errs, labelMap(jsonmap.Child(spec, "selector"), specPath.Child("selector"))...)
	if affinity, ok := spec["sessionAffinity"].(string); ok && affinity != "ClientIP" && affinity != "None" {
		errs = append(errs, field.NotSupported(specPath.Child("sessionAffinity"), affinity, []string{"ClientIP", "None"}))
	}
	switch typ {
	case "ClusterIP", "ExternalName", "LoadBalancer", "NodePort":
	default:
		errs = append(errs, field.NotSupported(specPath.Child("type"), typ, []string{"ClusterIP", "ExternalName", "LoadBalancer", "NodePort"}))
	}
	if typ == "ClusterIP" {
		for i, p := range ports {
			if intOf(p["nodePort"]) != 0 {
				errs = append(errs, field.Forbidden(specPath.Child("ports").Index(i).Child("nodePort"), "may not be used when `type` is 'ClusterIP'"))
			}
		}
	}
	nodePorts := sets.New[servicePortKey]()
	for i, p := range ports {
		n := intOf(p["nodePort"])
		if n == 0 {
			continue
		}
		key := servicePortKey{Protocol: str(p, "protocol"), NodePort: int(n)}
		if nodePorts.Has(key) {
			errs = append(errs, field.Duplicate(specPath.Child("ports").Index(i).Child("nodePort"), n))
		}
		nodePorts.Insert(key)
	}
	// Only a service reachable from outside the cluster has a policy for
	// its external traffic.
	policy, hasPolicy := spec["externalTrafficPolicy"].(string)
	if typ != "NodePort" && typ != "LoadBalancer" {
		if hasPolicy && policy != "" {
			errs = append(errs, field.Invalid(specPath.Child("externalTrafficPolicy"), policy, "may only be set for externally-accessible services"))
		}
	} else if hasPolicy && policy != "Cluster" && policy != "Local" {
		errs = append(errs, field.NotSupported(specPath.Child("externalTrafficPolicy"), policy, []string{"Cluster", "Local"}))
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
