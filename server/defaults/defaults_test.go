package defaults

import (
	"encoding/json"
	"net/netip"
	"testing"

	"kubeplay/internal/jsonmap"
)

// The pull policies kube-apiserver v1.35 gave containers naming these
// images and no imagePullPolicy.
func TestPullPolicy(t *testing.T) {
	digest := "@sha256:" + "0000000000000000000000000000000000000000000000000000000000000000"
	for image, want := range map[string]string{
		"nginx":                  "Always",
		"nginx:latest":           "Always",
		"nginx:1.27":             "IfNotPresent",
		"nginx" + digest:         "IfNotPresent",
		"nginx:latest" + digest:  "Always",
		"localhost:5000/nginx":   "Always",
		"localhost:5000/app:v1":  "IfNotPresent",
		"registry.k8s.io/pause:": "Always",
	} {
		if got := pullPolicy(image); got != want {
			t.Errorf("pullPolicy(%q) = %s, want %s", image, got, want)
		}
	}
}

// TestAllocateService checks what the golden scenarios cannot, the
// addresses being random: they are free and in range.
func TestAllocateService(t *testing.T) {
	var used Allocated
	used.Add(Object{"clusterIP": "10.96.0.5", "ports": []any{Object{"nodePort": json.Number("30001")}}})
	for range 200 {
		spec := Object{"type": "NodePort", "ports": []any{Object{"port": 80}, Object{"port": 81}}}
		if errs := AllocateService(spec, used, false); len(errs) > 0 {
			t.Fatal(errs)
		}
		ip := spec["clusterIP"].(string)
		addr := netip.MustParseAddr(ip)
		if !serviceCIDR.Contains(addr) || addr == serviceCIDR.Addr() || addr == serviceCIDR.Addr().Next() || used.IPs[ip] {
			t.Fatalf("allocated cluster IP %s", ip)
		}
		for _, p := range jsonmap.Items(spec["ports"]) {
			n, _ := jsonmap.IntOf(p["nodePort"])
			if n < minNodePort || n > maxNodePort || used.NodePorts[n] {
				t.Fatalf("allocated node port %d", n)
			}
		}
		used.Add(spec)
	}
	if len(used.IPs) != 201 || len(used.NodePorts) != 401 {
		t.Errorf("%d cluster IPs and %d node ports in use, want 201 and 401 (each allocated once)", len(used.IPs), len(used.NodePorts))
	}
}
