package playground

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"net/netip"
	"reflect"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"kubeplay/server/inproc"
	"kubeplay/store"
)

// endpointsController is kube-controller-manager's endpoints controller: a
// Service with a selector gets an Endpoints object of the same name listing
// its pods' IPs, ready or not, with the ports its targetPorts resolve to on
// each pod; the Endpoints go when the Service goes. Its keys are
// "<namespace>/<name>" of Services.
type endpointsController struct {
	c        *inproc.Client
	events   *eventRecorder
	services serviceSelectors
	triggers triggerTimes
}

var endpointsDef = controllerDef{name: "endpoints", title: "endpoints controller", serviceAccount: "endpoint-controller",
	start: func(sb *Sandbox) reconciler {
		c := inproc.New(sb.handler, controllerAgent("endpoint-controller"))
		return &endpointsController{c: c, events: newEventRecorder(c, "endpoint-controller", "", sb.clock.Now), triggers: triggerTimes{}}
	}}

const (
	// endpointsManagedBy labels the Endpoints the controller writes.
	endpointsManagedBy = "endpoints.kubernetes.io/managed-by"
	endpointsManager   = "endpoint-controller"
	// maxEndpointsAddresses is how many addresses an Endpoints object
	// holds; beyond, it is truncated and says so.
	maxEndpointsAddresses = 1000
)

var endpointsKeyPrefix = builtinKeyPrefix(coreV1("endpoints"))

func (ec *endpointsController) resync(ctx context.Context, _ int64) ([]string, error) {
	return ec.services.resync(ctx, ec.c)
}

// keysOf names the Service a change of a Service or of one of its pods
// concerns, or whose Endpoints were deleted (to make them again). As
// kube-controller-manager's, it ignores other writes of Endpoints: those of
// a Service without a selector, or of none, are the user's to keep.
func (ec *endpointsController) keysOf(ev store.Event, q queue) {
	if key, ok := strings.CutPrefix(ev.KV.Key, endpointsKeyPrefix); ok {
		if ev.Type == store.Deleted {
			q.Add(key)
		}
		return
	}
	ec.services.keysOf(ev, q)
}

func (ec *endpointsController) reconcile(ctx context.Context, key string) (time.Duration, error) {
	svc, err := getService(ctx, ec.c, key)
	if err != nil {
		return 0, err
	}
	ns, name, _ := strings.Cut(key, "/")
	if svc == nil {
		delete(ec.triggers, key)
		if err := ec.c.Do(ctx, "DELETE", namedPath("", "endpoints", ns, name), nil, nil); err != nil && !apierrors.IsNotFound(err) {
			return 0, err
		}
		return 0, nil
	}
	if svc.Spec.Type == corev1.ServiceTypeExternalName || svc.Spec.Selector == nil {
		// Their Endpoints, if any, are the user's.
		return 0, nil
	}
	pods, err := selectedPods(ctx, ec.c, svc)
	if err != nil {
		return 0, err
	}
	triggered := ec.triggers.compute(key, svc, pods)
	subsets := repackSubsets(endpointSubsets(svc, pods))

	var current corev1.Endpoints
	exists := true
	if err := ec.c.Get(ctx, namedPath("", "endpoints", ns, name), &current); err != nil {
		if !apierrors.IsNotFound(err) {
			return 0, err
		}
		exists = false
		current = corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: svc.Labels}}
	}
	if exists && reflect.DeepEqual(withoutVersions(repackSubsets(current.Subsets)), withoutVersions(subsets)) &&
		endpointsLabelsCorrect(current.Labels, svc.Labels) && overCapacityNoted(current.Annotations, current.Subsets) {
		return 0, nil
	}
	ep := current.DeepCopy()
	ep.APIVersion, ep.Kind = "v1", "Endpoints"
	ep.Subsets = subsets
	ep.Labels = map[string]string{}
	for k, v := range svc.Labels {
		ep.Labels[k] = v
	}
	if headless(svc) {
		ep.Labels[corev1.IsHeadlessService] = ""
	}
	ep.Labels[endpointsManagedBy] = endpointsManager
	if ep.Annotations == nil {
		ep.Annotations = map[string]string{}
	}
	if triggered.IsZero() {
		delete(ep.Annotations, corev1.EndpointsLastChangeTriggerTime)
	} else {
		ep.Annotations[corev1.EndpointsLastChangeTriggerTime] = triggered.UTC().Format(time.RFC3339Nano)
	}
	if truncateEndpoints(ep) {
		ep.Annotations[corev1.EndpointsOverCapacity] = "truncated"
	} else {
		delete(ep.Annotations, corev1.EndpointsOverCapacity)
	}
	if !exists {
		err = ec.c.Do(ctx, "POST", workloadCollection("", "endpoints", ns), ep, nil)
	} else {
		err = ec.c.Do(ctx, "PUT", namedPath("", "endpoints", ns, name), ep, nil)
	}
	if err == nil {
		return 0, nil
	}
	if !exists && apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
		return 0, nil // creates fail until the namespace is gone
	}
	ref := objectRef{APIVersion: "v1", Kind: "Endpoints", Namespace: ns, Name: name, UID: string(ep.UID), ResourceVersion: ep.ResourceVersion}
	if !exists {
		ec.events.event(ctx, ref, "Warning", "FailedToCreateEndpoint", fmt.Sprintf("Failed to create endpoint for service %s/%s: %v", ns, name, err))
	} else {
		ec.events.event(ctx, ref, "Warning", "FailedToUpdateEndpoint", fmt.Sprintf("Failed to update endpoint %s/%s: %v", ns, name, err))
	}
	return 0, err
}

// endpointSubsets lists, one subset each, every address of svc's pods on
// each of its ports: ready addresses, and not ready ones unless the Service
// publishes them anyway.
func endpointSubsets(svc *corev1.Service, pods []corev1.Pod) []corev1.EndpointSubset {
	var subsets []corev1.EndpointSubset
	tolerateUnready := svc.Spec.PublishNotReadyAddresses
	for i := range pods {
		pod := &pods[i]
		if !podServes(pod, tolerateUnready) {
			continue
		}
		addr, ok := endpointAddress(svc, pod)
		if !ok {
			continue
		}
		add := func(ports []corev1.EndpointPort) {
			if tolerateUnready || isPodReady(pod) {
				subsets = append(subsets, corev1.EndpointSubset{Addresses: []corev1.EndpointAddress{addr}, Ports: ports})
			} else {
				subsets = append(subsets, corev1.EndpointSubset{NotReadyAddresses: []corev1.EndpointAddress{addr}, Ports: ports})
			}
		}
		if len(svc.Spec.Ports) == 0 {
			if svc.Spec.ClusterIP == corev1.ClusterIPNone {
				add(nil) // a headless Service may have no ports
			}
			continue
		}
		for j := range svc.Spec.Ports {
			port := &svc.Spec.Ports[j]
			num, err := findPort(pod, port)
			if err != nil {
				continue
			}
			add([]corev1.EndpointPort{{Name: port.Name, Port: num, Protocol: port.Protocol, AppProtocol: port.AppProtocol}})
		}
	}
	return subsets
}

// endpointAddress is the address of pod for svc: its IP of the Service's
// family.
func endpointAddress(svc *corev1.Service, pod *corev1.Pod) (corev1.EndpointAddress, bool) {
	ip := podIPOfFamily(pod, wantsIPv6(svc))
	if ip == "" {
		return corev1.EndpointAddress{}, false
	}
	addr := corev1.EndpointAddress{IP: ip, Hostname: podHostname(pod, svc),
		TargetRef: &corev1.ObjectReference{Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID}}
	if pod.Spec.NodeName != "" {
		addr.NodeName = &pod.Spec.NodeName
	}
	return addr, true
}

// repackSubsets regroups subsets as the API expects them: one subset per
// set of addresses, with every port those addresses (and only they) serve;
// an address not ready on one port is not ready on all. Addresses are
// sorted by IP and pod uid.
func repackSubsets(subsets []corev1.EndpointSubset) []corev1.EndpointSubset {
	type addrKey struct {
		ip  string
		uid types.UID
	}
	keyOf := func(a *corev1.EndpointAddress) addrKey {
		k := addrKey{ip: a.IP}
		if a.TargetRef != nil {
			k.uid = a.TargetRef.UID
		}
		return k
	}
	noPorts := corev1.EndpointPort{Port: -1} // stands for "no port" while grouping
	addrs := map[addrKey]corev1.EndpointAddress{}
	byPort := map[corev1.EndpointPort]map[addrKey]bool{} // address → ready
	var portOrder []corev1.EndpointPort
	note := func(port corev1.EndpointPort, a *corev1.EndpointAddress, ready bool) {
		k := keyOf(a)
		if _, ok := addrs[k]; !ok {
			addrs[k] = *a
		}
		set := byPort[port]
		if set == nil {
			set = map[addrKey]bool{}
			byPort[port] = set
			portOrder = append(portOrder, port)
		}
		if wasReady, seen := set[k]; !seen || wasReady {
			set[k] = ready
		}
	}
	for _, s := range subsets {
		ports := s.Ports
		if len(ports) == 0 {
			ports = []corev1.EndpointPort{noPorts}
		}
		for _, port := range ports {
			for i := range s.Addresses {
				note(port, &s.Addresses[i], true)
			}
			for i := range s.NotReadyAddresses {
				note(port, &s.NotReadyAddresses[i], false)
			}
		}
	}
	// Ports served by the same addresses, equally ready, share a subset.
	setKey := func(set map[addrKey]bool) string {
		var parts []string
		for k, ready := range set {
			parts = append(parts, fmt.Sprintf("%s/%s/%t", k.ip, k.uid, ready))
		}
		slices.Sort(parts)
		return strings.Join(parts, ",")
	}
	out := []corev1.EndpointSubset{}
	index := map[string]int{}
	for _, port := range portOrder {
		set := byPort[port]
		k := setKey(set)
		i, ok := index[k]
		if !ok {
			var s corev1.EndpointSubset
			for ak, ready := range set {
				if ready {
					s.Addresses = append(s.Addresses, addrs[ak])
				} else {
					s.NotReadyAddresses = append(s.NotReadyAddresses, addrs[ak])
				}
			}
			sortAddresses(s.Addresses)
			sortAddresses(s.NotReadyAddresses)
			i = len(out)
			index[k] = i
			out = append(out, s)
		}
		if port != noPorts {
			out[i].Ports = append(out[i].Ports, port)
		}
	}
	for i := range out {
		slices.SortFunc(out[i].Ports, func(a, b corev1.EndpointPort) int {
			return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.Port, b.Port), cmp.Compare(a.Protocol, b.Protocol))
		})
	}
	slices.SortFunc(out, func(a, b corev1.EndpointSubset) int { return cmp.Compare(firstAddress(a), firstAddress(b)) })
	return out
}

func sortAddresses(addrs []corev1.EndpointAddress) {
	uid := func(a corev1.EndpointAddress) types.UID {
		if a.TargetRef == nil {
			return ""
		}
		return a.TargetRef.UID
	}
	slices.SortFunc(addrs, func(a, b corev1.EndpointAddress) int {
		return cmp.Or(strings.Compare(a.IP, b.IP), cmp.Compare(uid(a), uid(b)))
	})
}

// firstAddress orders subsets: by their first address, ready or not.
func firstAddress(s corev1.EndpointSubset) string {
	if len(s.Addresses) > 0 {
		return s.Addresses[0].IP
	}
	if len(s.NotReadyAddresses) > 0 {
		return s.NotReadyAddresses[0].IP
	}
	return ""
}

// withoutVersions drops the pods' resourceVersions from the addresses, a
// change of which is no reason to write the Endpoints.
func withoutVersions(subsets []corev1.EndpointSubset) []corev1.EndpointSubset {
	out := make([]corev1.EndpointSubset, len(subsets))
	for i, s := range subsets {
		s = *s.DeepCopy()
		for _, addrs := range [][]corev1.EndpointAddress{s.Addresses, s.NotReadyAddresses} {
			for j := range addrs {
				if addrs[j].TargetRef != nil {
					addrs[j].TargetRef.ResourceVersion = ""
				}
			}
		}
		out[i] = s
	}
	return out
}

// endpointsLabelsCorrect reports whether Endpoints carry their Service's
// labels, and the controller's own.
func endpointsLabelsCorrect(epLabels, svcLabels map[string]string) bool {
	if epLabels[endpointsManagedBy] != endpointsManager {
		return false
	}
	own := 0
	for k, v := range epLabels {
		if k == corev1.IsHeadlessService || k == endpointsManagedBy {
			own++
		} else if sv, ok := svcLabels[k]; !ok || sv != v {
			return false
		}
	}
	return len(svcLabels) == len(epLabels)-own
}

// overCapacityNoted reports whether the over-capacity annotation says what
// the subsets are: absent under capacity (over it, they need truncating).
func overCapacityNoted(annotations map[string]string, subsets []corev1.EndpointSubset) bool {
	n := 0
	for _, s := range subsets {
		n += len(s.Addresses) + len(s.NotReadyAddresses)
	}
	_, noted := annotations[corev1.EndpointsOverCapacity]
	return n <= maxEndpointsAddresses && !noted
}

// truncateEndpoints keeps at most maxEndpointsAddresses addresses, ready
// ones first, each subset keeping its share; it reports whether it
// dropped any.
func truncateEndpoints(ep *corev1.Endpoints) bool {
	ready, notReady := 0, 0
	for _, s := range ep.Subsets {
		ready += len(s.Addresses)
		notReady += len(s.NotReadyAddresses)
	}
	if ready+notReady <= maxEndpointsAddresses {
		return false
	}
	truncateReady := ready > maxEndpointsAddresses
	limit, total := maxEndpointsAddresses-ready, notReady
	if truncateReady {
		limit, total = maxEndpointsAddresses, ready
	}
	room := limit
	for i := range ep.Subsets {
		s := &ep.Subsets[i]
		n := len(s.NotReadyAddresses)
		if truncateReady {
			n = len(s.Addresses)
		}
		share := min(int(math.Ceil(float64(n)/float64(total)*float64(limit))), room)
		if truncateReady {
			s.Addresses = s.Addresses[:min(share, len(s.Addresses))]
			s.NotReadyAddresses = []corev1.EndpointAddress{}
			room -= len(s.Addresses)
		} else {
			s.NotReadyAddresses = s.NotReadyAddresses[:min(share, len(s.NotReadyAddresses))]
			room -= len(s.NotReadyAddresses)
		}
	}
	return true
}

// podIPOfFamily is the pod's IP of the family asked for, "" if none.
func podIPOfFamily(pod *corev1.Pod, ipv6 bool) string {
	ips := pod.Status.PodIPs
	if len(ips) == 0 && pod.Status.PodIP != "" {
		ips = []corev1.PodIP{{IP: pod.Status.PodIP}}
	}
	for _, ip := range ips {
		addr, err := netip.ParseAddr(ip.IP)
		if err != nil {
			continue
		}
		if is6 := addr.Is6() && !addr.Is4In6(); is6 == ipv6 {
			return addr.Unmap().String()
		}
	}
	return ""
}
