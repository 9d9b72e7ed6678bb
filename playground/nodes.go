package playground

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"kubeplay/internal/jsonmap"
	"kubeplay/server/inproc"
	"kubeplay/store"
)

// The simulated nodes: each registers itself as a kubelet does when it
// starts (a Node with its capacity, labels, conditions, addresses and
// version, then a Lease in kube-node-lease), and is registered again if
// someone deletes it. No node runs anything: their kubelets (kubelet.go)
// only report the lifecycle of the pods bound to them.
//
// A real kubelet renews its Lease every 10 s and a node lifecycle
// controller marks a node whose Lease is 40 s old NotReady. Here an idle
// sandbox must write nothing, so a Lease is renewed only when the kubelet
// acts anyway (a change of one of its node's pods, if the Lease is 10 s
// old) and when the sandbox's clock is advanced (the controllers restart
// and look at every node); and since nothing polls for stale Leases, a
// simulated node is never marked NotReady.

// defaultNodes is how many nodes a sandbox has unless told otherwise.
const defaultNodes = 3

// Lease timings of a kubelet: the Lease is renewed every leaseRenewal and
// lasts leaseDuration (kubelet's --node-lease-duration-seconds).
const (
	leaseRenewal  = 10 * time.Second
	leaseDuration = 40
)

// What the simulated nodes report about their machines: each is a kind
// worker with the same hardware.
const (
	nodeCPU              = "8"
	nodeMemory           = "16303264Ki"
	nodeEphemeralStorage = "102626232Ki"
	nodeMaxPods          = "110"
	nodeRuntime          = "kubeplay://simulated"
	kubeletPort          = 10250
)

// controlPlaneNode is the simulated node the control plane runs on, as
// kind names it: tainted so that workloads go to the workers, with the
// control plane's components as static pods (kubesystem.go).
const controlPlaneNode = "kubeplay-control-plane"

// controlPlaneTaint keeps pods that do not tolerate it off the control
// plane's node, as kubeadm taints it.
const controlPlaneTaint = "node-role.kubernetes.io/control-plane"

// nodeNames names the simulated nodes as kind names a cluster's: the
// control plane's, then n workers (kubeplay-worker, kubeplay-worker2, ...).
func nodeNames(n int) []string {
	if n <= 0 {
		n = defaultNodes
	}
	names := []string{controlPlaneNode}
	for i := range n {
		name := "kubeplay-worker"
		if i > 0 {
			name += strconv.Itoa(i + 1)
		}
		names = append(names, name)
	}
	return names
}

// nodeNames names the sandbox's simulated nodes; called as its
// controllers start, with sb.mu held.
func (sb *Sandbox) nodeNames() []string { return nodeNames(sb.controllers.Nodes) }

// nodeIndex is the position of a simulated node among names (from 0, the
// control plane's), -1 for a node not simulated.
func nodeIndex(names []string, name string) int {
	for i, n := range names {
		if n == name {
			return i
		}
	}
	return -1
}

// nodeIP is the InternalIP of the simulated node i, on kind's network: the
// control plane's is defaults.APIServerAddress (.2), the workers' follow.
func nodeIP(i int) string { return fmt.Sprintf("172.18.0.%d", i+2) }

// nodePodCIDR is the range the pods of the simulated node i get their IPs
// from (kind's control plane has 10.244.0.0/24, its workers the next ones).
func nodePodCIDR(i int) string { return fmt.Sprintf("10.244.%d.0/24", i) }

// podIP is the n-th address of node i's pod CIDR.
func podIP(i, n int) string { return fmt.Sprintf("10.244.%d.%d", i, n%254) }

// leaseKeyPrefix is where the store keeps the nodes' Leases (nodeKeyPrefix,
// the nodes, is the DaemonSet controller's).
var leaseKeyPrefix = builtinKeyPrefix(coordinationV1("leases")) + nodeLeaseNamespace + "/"

const nodeLeaseNamespace = "kube-node-lease"

// Keys of the nodes controller: a node to register and check, or a Lease
// to renew if it is due.
const (
	nodeKey  = "node/"
	leaseKey = "lease/"
)

// nodes registers the simulated nodes and keeps their Leases.
type nodes struct {
	api   *inproc.Client
	now   func() time.Time
	names []string

	mu sync.Mutex
	// renewed is when each node's Lease was last renewed, so that a pod
	// change on a node renews it only when it is due, without a read.
	renewed map[string]time.Time
}

var nodesDef = controllerDef{name: "nodes", title: "nodes", simulated: true,
	start: func(sb *Sandbox) reconciler {
		return &nodes{api: inproc.New(sb.handler, kubeletAgent), now: sb.clock.Now,
			names: sb.nodeNames(), renewed: map[string]time.Time{}}
	}}

// resync looks at every node, which renews their Leases: it runs when the
// controllers start and when the sandbox's clock is advanced.
func (n *nodes) resync(context.Context, int64) ([]string, error) {
	keys := make([]string, len(n.names))
	for i, name := range n.names {
		keys[i] = nodeKey + name
	}
	return keys, nil
}

func (n *nodes) keysOf(ev store.Event, q queue) {
	key := ev.KV.Key
	if name, ok := strings.CutPrefix(key, nodeKeyPrefix); ok {
		if nodeIndex(n.names, name) >= 0 {
			q.Add(nodeKey + name)
		}
		return
	}
	if name, ok := strings.CutPrefix(key, leaseKeyPrefix); ok {
		if ev.Type == store.Deleted && nodeIndex(n.names, name) >= 0 {
			q.Add(nodeKey + name)
		}
		return
	}
	if pod, ok := strings.CutPrefix(key, podKeyPrefix); ok && ev.Type == store.Deleted && isMirrorPodKey(pod) {
		q.Add(nodeKey + controlPlaneNode)
		return
	}
	if strings.HasPrefix(key, podKeyPrefix) && ev.Type != store.Deleted {
		if name := podNodeName(ev.KV.Value); nodeIndex(n.names, name) >= 0 {
			q.Add(leaseKey + name)
		}
	}
}

// podNodeName is the node a stored pod is bound to.
func podNodeName(value []byte) string {
	var p struct {
		Spec struct {
			NodeName string `json:"nodeName"`
		} `json:"spec"`
	}
	json.Unmarshal(value, &p)
	return p.Spec.NodeName
}

func (n *nodes) reconcile(ctx context.Context, key string) (time.Duration, error) {
	if name, ok := strings.CutPrefix(key, leaseKey); ok {
		n.mu.Lock()
		last, seen := n.renewed[name]
		n.mu.Unlock()
		if seen && n.now().Sub(last) < leaseRenewal {
			return 0, nil
		}
		node, err := get(ctx, n.api, "/api/v1/nodes/"+name)
		if err != nil || node == nil {
			return 0, err
		}
		return 0, n.renewLease(ctx, node)
	}
	name := strings.TrimPrefix(key, nodeKey)
	i := nodeIndex(n.names, name)
	if i < 0 {
		return 0, nil
	}
	node, err := get(ctx, n.api, "/api/v1/nodes/"+name)
	if err != nil {
		return 0, err
	}
	if node == nil {
		// Registered anew; the change that creates it brings it back here.
		err := n.api.Do(ctx, "POST", "/api/v1/nodes", n.register(name, i), nil)
		if apierrors.IsAlreadyExists(err) {
			return 0, nil
		}
		return 0, err
	}
	if deleting(node) {
		return 0, nil
	}
	if name == controlPlaneNode {
		if err := n.publishStaticPods(ctx, node); err != nil {
			return 0, err
		}
	}
	return 0, n.renewLease(ctx, node)
}

// register is the Node a kubelet registers for the simulated node i.
func (n *nodes) register(name string, i int) jsonmap.Object {
	ts := timestamp(n.now)
	condition := func(t, status, reason, message string) map[string]any {
		return map[string]any{"type": t, "status": status, "reason": reason, "message": message,
			"lastHeartbeatTime": ts, "lastTransitionTime": ts}
	}
	resources := map[string]any{"cpu": nodeCPU, "memory": nodeMemory, "ephemeral-storage": nodeEphemeralStorage,
		"pods": nodeMaxPods, "hugepages-1Gi": "0", "hugepages-2Mi": "0"}
	id := func(what string) string {
		h := fnv.New128a()
		fmt.Fprint(h, what, name)
		return fmt.Sprintf("%x", h.Sum(nil))
	}
	labels := map[string]any{"beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux",
		"kubernetes.io/arch": "amd64", "kubernetes.io/hostname": name, "kubernetes.io/os": "linux"}
	spec := map[string]any{"podCIDR": nodePodCIDR(i), "podCIDRs": []any{nodePodCIDR(i)},
		"providerID": "kubeplay://simulated/" + name}
	if name == controlPlaneNode {
		// kubeadm labels and taints it as it joins.
		labels[controlPlaneTaint] = ""
		labels["node.kubernetes.io/exclude-from-external-load-balancers"] = ""
		spec["taints"] = []any{map[string]any{"key": controlPlaneTaint, "effect": "NoSchedule"}}
	}
	return jsonmap.Object{"apiVersion": "v1", "kind": "Node",
		"metadata": map[string]any{"name": name, "labels": labels,
			"annotations": map[string]any{"volumes.kubernetes.io/controller-managed-attach-detach": "true"}},
		"spec": spec,
		"status": map[string]any{
			"capacity": resources, "allocatable": resources,
			"conditions": []any{
				condition("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
				condition("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
				condition("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
				condition("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
			},
			"addresses":       []any{map[string]any{"type": "InternalIP", "address": nodeIP(i)}, map[string]any{"type": "Hostname", "address": name}},
			"daemonEndpoints": map[string]any{"kubeletEndpoint": map[string]any{"Port": kubeletPort}},
			"nodeInfo": map[string]any{"machineID": id("machine")[:32], "systemUUID": uuidOf(id("system")), "bootID": uuidOf(id("boot")),
				"kernelVersion": "6.8.0-kubeplay", "osImage": "kubeplay simulated node", "containerRuntimeVersion": nodeRuntime,
				"kubeletVersion": "v1.35.4", "operatingSystem": "linux", "architecture": "amd64"},
		}}
}

// uuidOf formats 32 hex digits as a UUID.
func uuidOf(hex string) string {
	return hex[:8] + "-" + hex[8:12] + "-" + hex[12:16] + "-" + hex[16:20] + "-" + hex[20:32]
}

func (n *nodes) renewLease(ctx context.Context, node jsonmap.Object) error {
	name := jsonmap.String(node, "metadata", "name")
	now := n.now()
	renewTime := now.UTC().Format("2006-01-02T15:04:05.000000Z07:00")
	path := namedPath("coordination.k8s.io/v1", "leases", nodeLeaseNamespace, name)
	lease, err := get(ctx, n.api, path)
	if err != nil {
		return err
	}
	owner := []any{map[string]any{"apiVersion": "v1", "kind": "Node", "name": name, "uid": jsonmap.String(node, "metadata", "uid")}}
	switch {
	case lease == nil:
		lease = jsonmap.Object{"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
			"metadata": map[string]any{"name": name, "namespace": nodeLeaseNamespace, "ownerReferences": owner},
			"spec":     map[string]any{"holderIdentity": name, "leaseDurationSeconds": leaseDuration, "renewTime": renewTime}}
		err = n.api.Do(ctx, "POST", workloadCollection("coordination.k8s.io/v1", "leases", nodeLeaseNamespace), lease, nil)
	case now.Sub(leaseRenewed(lease)) >= leaseRenewal:
		jsonmap.Child(lease, "spec")["renewTime"] = renewTime
		err = n.api.Do(ctx, "PUT", path, lease, nil)
	default:
		now = leaseRenewed(lease)
	}
	if err != nil {
		return err
	}
	n.mu.Lock()
	n.renewed[name] = now
	n.mu.Unlock()
	return nil
}

// leaseRenewed is when a Lease was last renewed.
func leaseRenewed(lease jsonmap.Object) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, jsonmap.String(lease, "spec", "renewTime"))
	return t
}

func coordinationV1(resource string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: resource}
}
