package playground_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// kube-system as on a kind cluster: the control plane's mirror pods on its
// tainted node, kube-proxy and kindnet on every node, CoreDNS's two pods
// behind kube-dns.
func TestKubeSystem_asOnKind(t *testing.T) {
	sb := openCluster(t)
	h := sb.Handler()
	nodes := []string{"kubeplay-control-plane", "kubeplay-worker", "kubeplay-worker2", "kubeplay-worker3"}
	waitNodes(t, sb, nodes...)
	cp := mustDo(t, h, 200, "GET", "/api/v1/nodes/kubeplay-control-plane", "")
	if taints := lookup(cp, "spec.taints"); !reflect.DeepEqual(taints, []any{map[string]any{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}}) {
		t.Errorf("control plane's taints %v", taints)
	}
	// running are the Running pods of kube-system by name, each with its node.
	running := func() map[string]map[string]any {
		out := map[string]map[string]any{}
		for _, p := range items(t, h, "/api/v1/namespaces/kube-system/pods") {
			if lookup(p, "status.phase") == "Running" && condition(p, "Ready")["status"] == "True" {
				out[lookup(p, "metadata.name").(string)] = p
			}
		}
		return out
	}
	count := func(pods map[string]map[string]any, label, value string) (n int, on []string) {
		for _, p := range pods {
			if lookup(p, "metadata.labels."+label) == value {
				n++
				on = append(on, lookup(p, "spec.nodeName").(string))
			}
		}
		slices.Sort(on)
		return n, on
	}
	waitFor(t, "kube-system's 14 pods to run", func() bool { return len(running()) == 14 })
	pods := running()
	for _, app := range []string{"kube-proxy", "kindnet"} {
		if _, on := count(pods, "k8s-app", app); !slices.Equal(on, nodes) {
			t.Errorf("%s on %v, want one on each node", app, on)
		}
	}
	if n, on := count(pods, "k8s-app", "kube-dns"); n != 2 {
		t.Errorf("coredns: %d pods on %v", n, on)
	}
	for _, component := range []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"} {
		p := pods[component+"-kubeplay-control-plane"]
		if p == nil {
			t.Errorf("no mirror pod of %s", component)
			continue
		}
		owner := lookup(p, "metadata.ownerReferences").([]any)[0].(map[string]any)
		if owner["kind"] != "Node" || owner["uid"] != lookup(cp, "metadata.uid") || owner["controller"] != true {
			t.Errorf("%s owned by %v", component, owner)
		}
		if hash := lookup(p, "metadata.annotations.kubernetes.io/config.mirror"); hash == nil || hash != lookup(p, "metadata.annotations.kubernetes.io/config.hash") {
			t.Errorf("%s config.mirror %v", component, hash)
		}
		if lookup(p, "spec.priority") != float64(2000001000) || lookup(p, "spec.serviceAccountName") != nil {
			t.Errorf("%s priority %v, serviceAccountName %v", component, lookup(p, "spec.priority"), lookup(p, "spec.serviceAccountName"))
		}
	}
	if p := pods[firstNamed(pods, "coredns-")]; lookup(p, "spec.priority") != float64(2000000000) {
		t.Errorf("coredns priority %v", lookup(p, "spec.priority"))
	}
	svc := mustDo(t, h, 200, "GET", "/api/v1/namespaces/kube-system/services/kube-dns", "")
	if ip := lookup(svc, "spec.clusterIP"); ip != "10.96.0.10" {
		t.Errorf("kube-dns at %v", ip)
	}
	waitFor(t, "kube-dns's endpoints", func() bool {
		slices := items(t, h, "/apis/discovery.k8s.io/v1/namespaces/kube-system/endpointslices?labelSelector=kubernetes.io%2Fservice-name%3Dkube-dns")
		return len(slices) == 1 && len(lookup(slices[0], "endpoints").([]any)) == 2
	})

	// A mirror pod deleted is published again by its kubelet.
	mustDo(t, h, 200, "DELETE", "/api/v1/namespaces/kube-system/pods/etcd-kubeplay-control-plane?gracePeriodSeconds=0", "")
	waitFor(t, "etcd's mirror pod back", func() bool { return running()["etcd-kubeplay-control-plane"] != nil })
	waitIdle(t, sb)
}

func firstNamed(pods map[string]map[string]any, prefix string) string {
	for name := range pods {
		if strings.HasPrefix(name, prefix) {
			return name
		}
	}
	return ""
}
