package defaults

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/netip"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/internal/jsonmap"
)

// The address ranges of Services, as the reference server is configured
// (--service-cluster-ip-range=10.96.0.0/16 and the default node port range).
var serviceCIDR = netip.MustParsePrefix("10.96.0.0/16")

const minNodePort, maxNodePort = 30000, 32767

// Allocated is what the existing Services hold: their cluster IPs and
// node ports.
type Allocated struct {
	IPs       map[string]bool
	NodePorts map[int64]bool
}

// Add records what the Service spec holds.
func (a *Allocated) Add(spec Object) {
	if a.IPs == nil {
		a.IPs, a.NodePorts = map[string]bool{}, map[int64]bool{}
	}
	for _, ip := range stringsOf(spec["clusterIPs"]) {
		a.IPs[ip] = true
	}
	if ip, _ := spec["clusterIP"].(string); ip != "" {
		a.IPs[ip] = true
	}
	for _, p := range jsonmap.Items(spec["ports"]) {
		if n, ok := jsonmap.IntOf(p["nodePort"]); ok && n != 0 {
			a.NodePorts[n] = true
		}
	}
}

// AllocateService gives a new Service what its storage gives it after the
// field manager has run: its IP families, a cluster IP (the one it asks for
// if free and in range) and a node port for each port of a NodePort or
// LoadBalancer Service. A dry run allocates nothing, and reports the
// addresses the reference server reports then (the range's first address,
// ports counted from 32769), and the node ports asked for even out of
// range.
func AllocateService(spec Object, used Allocated, dryRun bool) field.ErrorList {
	if spec == nil || spec["type"] == "ExternalName" {
		return nil
	}
	var errs field.ErrorList
	ip, _ := spec["clusterIP"].(string)
	if ips := stringsOf(spec["clusterIPs"]); ip == "" && len(ips) > 0 {
		ip = ips[0]
	}
	headless := ip == "None"
	if headless && len(jsonmap.Child(spec, "selector")) == 0 {
		// Headless without a selector: endpoints of any family may serve.
		set(spec, "ipFamilyPolicy", "RequireDualStack")
		set(spec, "ipFamilies", []any{"IPv4", "IPv6"})
	}
	set(spec, "ipFamilyPolicy", "SingleStack")
	set(spec, "ipFamilies", []any{"IPv4"})
	switch {
	case headless:
	case ip == "":
		ip = freeIP(used, dryRun)
	default:
		if msg := ipUnavailable(ip, used); msg != "" {
			errs = append(errs, field.Invalid(field.NewPath("spec", "clusterIPs"), []string{ip},
				fmt.Sprintf("failed to allocate IP %s: %s", ip, msg)))
		}
	}
	spec["clusterIP"], spec["clusterIPs"] = ip, []any{ip}
	if t := spec["type"]; t != "NodePort" && t != "LoadBalancer" {
		return errs
	}
	taken := map[int64]bool{}
	next := int64(maxNodePort + 1)
	for i, p := range jsonmap.Items(spec["ports"]) {
		n, ok := jsonmap.IntOf(p["nodePort"])
		switch {
		case ok && n != 0:
			path := field.NewPath("spec", "ports").Index(i).Child("nodePort")
			// A dry run checks that the port is free, not that it is in
			// the range, as kube-apiserver's dry-run allocator.
			if !dryRun && (n < minNodePort || n > maxNodePort) {
				errs = append(errs, field.Invalid(path, n, fmt.Sprintf("provided port is not in the valid range. The range of valid ports is %d-%d", minNodePort, maxNodePort)))
			} else if used.NodePorts[n] || taken[n] {
				errs = append(errs, field.Invalid(path, n, "provided port is already allocated"))
			}
			taken[n] = true
		case p == nil:
		case dryRun:
			next++
			p["nodePort"] = json.Number(fmt.Sprint(next))
		default:
			n = freeNodePort(used, taken)
			taken[n] = true
			p["nodePort"] = json.Number(fmt.Sprint(n))
		}
	}
	return errs
}

// ipUnavailable says why ip cannot be a new Service's cluster IP ("" if
// it can).
func ipUnavailable(ip string, used Allocated) string {
	addr, err := netip.ParseAddr(ip)
	switch {
	case err != nil || !serviceCIDR.Contains(addr):
		return "the provided network does not match the current range"
	case used.IPs[ip]:
		return "provided IP is already allocated"
	}
	return ""
}

// KubernetesServiceIP is the address of the kubernetes Service: the first
// of the range after its network address.
func KubernetesServiceIP() string { return serviceCIDR.Addr().Next().String() }

// ServiceCIDR is the service cluster IP range, kube-apiserver's
// --service-cluster-ip-range (kind's default).
func ServiceCIDR() string { return serviceCIDR.String() }

// APIServerAddress is where the kubernetes Service's Endpoints say the API
// server listens: a kind cluster's control-plane node, whose network the
// simulated nodes share (kubeplay itself has no address in a browser).
const APIServerAddress = "172.18.0.2"

// APIServerPort is the port of those Endpoints, kube-apiserver's default
// secure port.
const APIServerPort = 6443

// freeIP picks a free cluster IP at random, as the reference server does;
// neither the range's first address nor the kubernetes Service's next one.
func freeIP(used Allocated, dryRun bool) string {
	first := serviceCIDR.Addr()
	if dryRun {
		return first.String()
	}
	size := 1 << (32 - serviceCIDR.Bits())
	b := first.As4()
	base := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	for {
		n := base + 2 + uint32(rand.IntN(size-3))
		ip := netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}).String()
		if !used.IPs[ip] {
			return ip
		}
	}
}

func freeNodePort(used Allocated, taken map[int64]bool) int64 {
	for {
		n := int64(minNodePort + rand.IntN(maxNodePort-minNodePort+1))
		if !used.NodePorts[n] && !taken[n] {
			return n
		}
	}
}

func stringsOf(v any) []string {
	l, _ := v.([]any)
	var out []string
	for _, e := range l {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// KeepAllocated gives an updated Service the addresses it had that the
// update leaves out: its cluster IPs and IP families, unless it becomes an
// ExternalName, and the node port of each port it keeps (same port and
// protocol), while it stays a NodePort or LoadBalancer Service. It drops
// the fields of those types from a Service that stops being one. The
// reference server does this after recording who changed what, so the
// managers of dropped fields keep them in managedFields.
func KeepAllocated(spec, old Object) {
	if spec == nil || old == nil {
		return
	}
	DropTypeFields(spec, old)
	if spec["type"] == "ExternalName" {
		return
	}
	if unset(spec, "clusterIP") && len(stringsOf(spec["clusterIPs"])) == 0 {
		for _, k := range []string{"clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"} {
			if v, ok := old[k]; ok {
				spec[k] = v
			}
		}
	}
	if t := spec["type"]; t != "NodePort" && t != "LoadBalancer" {
		return
	}
	for _, p := range jsonmap.Items(spec["ports"]) {
		if n, _ := jsonmap.IntOf(p["nodePort"]); p == nil || n != 0 {
			continue
		}
		for _, o := range jsonmap.Items(old["ports"]) {
			if o != nil && fmt.Sprint(o["port"]) == fmt.Sprint(p["port"]) && o["protocol"] == p["protocol"] {
				if n, _ := jsonmap.IntOf(o["nodePort"]); n != 0 {
					p["nodePort"] = o["nodePort"]
				}
			}
		}
	}
}

// DropTypeFields drops from a Service that stops being a NodePort or
// LoadBalancer Service the fields of those types it kept unchanged, as
// kube-apiserver does before validating the update.
func DropTypeFields(spec, old Object) {
	external := func(s Object) bool { return s != nil && (s["type"] == "NodePort" || s["type"] == "LoadBalancer") }
	if !external(old) || external(spec) {
		return
	}
	for _, k := range []string{"externalTrafficPolicy", "allocateLoadBalancerNodePorts"} {
		if v, ok := spec[k]; ok && v == old[k] {
			delete(spec, k)
		}
	}
	for _, p := range jsonmap.Items(spec["ports"]) {
		if n, ok := jsonmap.IntOf(p["nodePort"]); ok && n != 0 {
			delete(p, "nodePort")
		}
	}
}
