package validation

import (
	"fmt"
	"net/netip"
	"reflect"

	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/internal/jsonmap"
)

// Endpoints checks an Endpoints object's subsets: addresses that are IPs
// a Service may route to, ports named (when more than one) and in range.
func Endpoints(obj Object) field.ErrorList {
	var errs field.ErrorList
	for i, ss := range jsonmap.Items(obj["subsets"]) {
		at := field.NewPath("subsets").Index(i)
		addresses, notReady := jsonmap.Items(ss["addresses"]), jsonmap.Items(ss["notReadyAddresses"])
		if len(addresses) == 0 && len(notReady) == 0 {
			errs = append(errs, field.Required(at, "must specify `addresses` or `notReadyAddresses`"))
		}
		for list, items := range map[string][]Object{"addresses": addresses, "notReadyAddresses": notReady} {
			for j, a := range items {
				errs = append(errs, endpointAddress(a, at.Child(list).Index(j))...)
			}
		}
		ports := jsonmap.Items(ss["ports"])
		for j, p := range ports {
			pp := at.Child("ports").Index(j)
			if name := str(p, "name"); name == "" && len(ports) > 1 {
				errs = append(errs, field.Required(pp.Child("name"), ""))
			} else if name != "" {
				errs = append(errs, dnsLabel(pp.Child("name"), name)...)
			}
			errs = append(errs, portRange(pp.Child("port"), intOf(p["port"]))...)
			errs = append(errs, protocol(pp.Child("protocol"), p)...)
		}
	}
	return errs
}

// EndpointsUpdate checks an Endpoints object's update: it as new.
func EndpointsUpdate(obj, _ Object) field.ErrorList { return Endpoints(obj) }

// endpointAddress checks an address of an Endpoints subset: an IP, not
// unspecified, loopback or link-local, and a DNS label for a host name.
func endpointAddress(a Object, at *field.Path) field.ErrorList {
	var errs field.ErrorList
	ip, _ := a["ip"].(string)
	if host := str(a, "hostname"); host != "" {
		errs = append(errs, dnsLabel(at.Child("hostname"), host)...)
	}
	addr, err := netip.ParseAddr(ip)
	if err != nil {
		// Checked twice, as a legacy IP field and as an endpoint.
		return append(errs,
			field.Invalid(at.Child("ip"), ip, "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"),
			field.Invalid(at.Child("ip"), ip, "must be a valid IP address"))
	}
	return append(errs, specialIP(addr, ip, at.Child("ip"))...)
}

// specialIP checks that an endpoint's IP is not one a Service cannot
// route to: unspecified, loopback or link-local.
func specialIP(addr netip.Addr, ip string, at *field.Path) field.ErrorList {
	var errs field.ErrorList
	if addr.IsUnspecified() {
		errs = append(errs, field.Invalid(at, ip, fmt.Sprintf("may not be unspecified (%v)", ip)))
	}
	if addr.IsLoopback() {
		errs = append(errs, field.Invalid(at, ip, "may not be in the loopback range (127.0.0.0/8, ::1/128)"))
	}
	if addr.IsLinkLocalUnicast() {
		errs = append(errs, field.Invalid(at, ip, "may not be in the link-local range (169.254.0.0/16, fe80::/10)"))
	}
	if addr.IsLinkLocalMulticast() {
		errs = append(errs, field.Invalid(at, ip, "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)"))
	}
	return errs
}

// EndpointSlice checks an EndpointSlice: its address type, ports and
// endpoints (whose addresses must be of that type).
func EndpointSlice(obj Object) field.ErrorList {
	return append(endpointSliceMeta(obj), endpointSliceEndpoints(obj)...)
}

// EndpointSliceUpdate checks an EndpointSlice's update: it as new (its
// endpoints only if they changed), its address type unchanged.
func EndpointSliceUpdate(obj, old Object) field.ErrorList {
	errs := endpointSliceMeta(obj)
	if !reflect.DeepEqual(obj["endpoints"], old["endpoints"]) {
		errs = append(errs, endpointSliceEndpoints(obj)...)
	}
	if obj["addressType"] != old["addressType"] {
		errs = append(errs, field.Invalid(field.NewPath("addressType"), obj["addressType"], "field is immutable"))
	}
	return errs
}

// endpointSliceMeta checks an EndpointSlice's address type and ports.
func endpointSliceMeta(obj Object) field.ErrorList {
	var errs field.ErrorList
	switch typ := str(obj, "addressType"); typ {
	case "IPv4", "IPv6", "FQDN":
	case "":
		errs = append(errs, field.Required(field.NewPath("addressType"), ""))
	default:
		errs = append(errs, field.NotSupported(field.NewPath("addressType"), typ, []string{"FQDN", "IPv4", "IPv6"}))
	}
	names := uniqueNames{}
	for i, p := range jsonmap.Items(obj["ports"]) {
		at := field.NewPath("ports").Index(i)
		name := str(p, "name")
		if name != "" {
			errs = append(errs, dnsLabel(at.Child("name"), name)...)
		}
		errs = append(errs, names.add(at.Child("name"), name)...)
		if protocol, ok := p["protocol"].(string); !ok {
			errs = append(errs, field.Required(at.Child("protocol"), ""))
		} else if protocol != "TCP" && protocol != "UDP" && protocol != "SCTP" {
			errs = append(errs, field.NotSupported(at.Child("protocol"), protocol, []string{"SCTP", "TCP", "UDP"}))
		}
	}
	return errs
}

// endpointSliceEndpoints checks the endpoints of an EndpointSlice: at
// least one address each, of the slice's type.
func endpointSliceEndpoints(obj Object) field.ErrorList {
	var errs field.ErrorList
	typ := str(obj, "addressType")
	for i, e := range jsonmap.Items(obj["endpoints"]) {
		at := field.NewPath("endpoints").Index(i).Child("addresses")
		addresses := strs(e["addresses"])
		if len(addresses) == 0 {
			errs = append(errs, field.Required(at, "must contain at least 1 address"))
		}
		for j, a := range addresses {
			switch typ {
			case "IPv4", "IPv6":
				addr, err := netip.ParseAddr(a)
				if err != nil {
					errs = append(errs, field.Invalid(at.Index(j), a, "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"))
					continue
				}
				if typ == "IPv4" && !addr.Is4() {
					errs = append(errs, field.Invalid(at, a, "must be an IPv4 address"))
				}
				if typ == "IPv6" && !addr.Is6() {
					errs = append(errs, field.Invalid(at, a, "must be an IPv6 address"))
				}
				errs = append(errs, specialIP(addr, a, at.Index(j))...)
			case "FQDN":
				errs = append(errs, utilvalidation.IsFullyQualifiedDomainName(at.Index(j), a)...)
			}
		}
	}
	return errs
}
