package validation

import (
	"fmt"
	"net/netip"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/server/decoded"
)

// Endpoints checks an Endpoints object's subsets: addresses that are IPs
// a Service may route to, ports named (when more than one) and in range.
func Endpoints(obj Object) field.ErrorList {
	var errs field.ErrorList
	for i, ss := range decoded.Items(obj["subsets"]) {
		at := field.NewPath("subsets").Index(i)
		addresses, notReady := decoded.Items(ss["addresses"]), decoded.Items(ss["notReadyAddresses"])
		if len(addresses) == 0 && len(notReady) == 0 {
			errs = append(errs, field.Required(at, "must specify `addresses` or `notReadyAddresses`"))
		}
		for list, items := range map[string][]Object{"addresses": addresses, "notReadyAddresses": notReady} {
			for j, a := range items {
				errs = append(errs, endpointAddress(a, at.Child(list).Index(j))...)
			}
		}
		ports := decoded.Items(ss["ports"])
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
	if addr.IsUnspecified() {
		errs = append(errs, field.Invalid(at.Child("ip"), ip, fmt.Sprintf("may not be unspecified (%v)", ip)))
	}
	if addr.IsLoopback() {
		errs = append(errs, field.Invalid(at.Child("ip"), ip, "may not be in the loopback range (127.0.0.0/8, ::1/128)"))
	}
	if addr.IsLinkLocalUnicast() {
		errs = append(errs, field.Invalid(at.Child("ip"), ip, "may not be in the link-local range (169.254.0.0/16, fe80::/10)"))
	}
	if addr.IsLinkLocalMulticast() {
		errs = append(errs, field.Invalid(at.Child("ip"), ip, "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)"))
	}
	return errs
}
