package playground

import (
	"context"
	"fmt"
	"maps"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"

	"kubeplay/server/inproc"
	"kubeplay/store"
)

// endpointSliceController is kube-controller-manager's EndpointSlice
// controller: a Service with a selector gets EndpointSlices (<service>-xxxxx,
// owned by it) listing its pods' addresses with their conditions, node and
// zone, grouped by the ports they serve, at most maxEndpointsPerSlice a
// slice; a Service with no such pod gets one empty placeholder slice. Its
// keys are "<namespace>/<name>" of Services.
type endpointSliceController struct {
	c        *inproc.Client
	events   *eventRecorder
	services serviceSelectors
	triggers triggerTimes
	served   func() bool
}

var endpointSliceDef = controllerDef{name: "endpointSlice", title: "endpointslice controller", serviceAccount: "endpointslice-controller",
	start: func(sb *Sandbox) reconciler {
		c := inproc.New(sb.handler, controllerAgent("endpointslice-controller"))
		return &endpointSliceController{c: c, events: newEventRecorder(c, "endpoint-slice-controller", "", sb.clock.Now), triggers: triggerTimes{},
			served: servedIn(sb, endpointSliceGVR)}
	}}

const (
	// endpointSliceManager is the endpointslice.kubernetes.io/managed-by
	// label of the slices the controller writes.
	endpointSliceManager = "endpointslice-controller.k8s.io"
	// maxEndpointsPerSlice is kube-controller-manager's default
	// --max-endpoints-per-slice.
	maxEndpointsPerSlice = 100
)

var (
	endpointSliceGVR       = schema.GroupVersionResource{Group: "discovery.k8s.io", Version: "v1", Resource: "endpointslices"}
	endpointSliceKeyPrefix = builtinKeyPrefix(endpointSliceGVR)
)

func (sc *endpointSliceController) resync(ctx context.Context, _ int64) ([]string, error) {
	if !sc.served() {
		sc.services.index = selectorIndex{}
		return nil, nil
	}
	return sc.services.resync(ctx, sc.c)
}

// keysOf names the Service a change of a Service, of one of its pods or of
// one of the slices the controller manages concerns.
func (sc *endpointSliceController) keysOf(ev store.Event, q queue) {
	if rest, ok := strings.CutPrefix(ev.KV.Key, endpointSliceKeyPrefix); ok {
		ns, _, _ := strings.Cut(rest, "/")
		l := labelsOf(ev.KV.Value)
		if l[discoveryv1.LabelManagedBy] == endpointSliceManager && l[discoveryv1.LabelServiceName] != "" {
			q.Add(ns + "/" + l[discoveryv1.LabelServiceName])
		}
		return
	}
	sc.services.keysOf(ev, q)
}

func (sc *endpointSliceController) reconcile(ctx context.Context, key string) (time.Duration, error) {
	svc, err := getService(ctx, sc.c, key)
	if err != nil {
		return 0, err
	}
	if svc == nil {
		delete(sc.triggers, key) // its slices go with it: it owns them
		return 0, nil
	}
	if svc.Spec.Type == corev1.ServiceTypeExternalName || svc.Spec.Selector == nil {
		return 0, nil
	}
	svcRef := metaRef("v1", "Service", svc.ObjectMeta)
	pods, err := selectedPods(ctx, sc.c, svc)
	if err != nil {
		sc.events.event(ctx, svcRef, "Warning", "FailedToListPods", fmt.Sprintf("Error listing Pods for Service %s/%s: %v", svc.Namespace, svc.Name, err))
		return 0, err
	}
	var list discoveryv1.EndpointSliceList
	sel := labels.Set{discoveryv1.LabelServiceName: svc.Name, discoveryv1.LabelManagedBy: endpointSliceManager}.String()
	if err := sc.c.Get(ctx, workloadCollection("discovery.k8s.io/v1", "endpointslices", svc.Namespace)+"?labelSelector="+url.QueryEscape(sel), &list); err != nil {
		sc.events.event(ctx, svcRef, "Warning", "FailedToListEndpointSlices", fmt.Sprintf("Error listing Endpoint Slices for Service %s/%s: %v", svc.Namespace, svc.Name, err))
		return 0, err
	}
	var existing []discoveryv1.EndpointSlice
	for _, s := range list.Items {
		if s.DeletionTimestamp == nil {
			existing = append(existing, s)
		}
	}
	triggered := sc.triggers.compute(key, svc, pods)
	if err := sc.sync(ctx, svc, pods, existing, triggered); err != nil {
		sc.events.event(ctx, svcRef, "Warning", "FailedToUpdateEndpointSlices", fmt.Sprintf("Error updating Endpoint Slices for Service %s/%s: %v", svc.Namespace, svc.Name, err))
		return 0, err
	}
	return 0, nil
}

// sliceChanges are the writes that bring a Service's slices to what they
// should be.
type sliceChanges struct {
	create, update, remove []discoveryv1.EndpointSlice
}

func (sc *endpointSliceController) sync(ctx context.Context, svc *corev1.Service, pods []corev1.Pod, existing []discoveryv1.EndpointSlice, triggered time.Time) error {
	nodes := map[string]*corev1.Node{}
	node := func(name string) (*corev1.Node, bool, error) {
		if n, ok := nodes[name]; ok {
			return n, n != nil, nil
		}
		var n corev1.Node
		if err := sc.c.Get(ctx, "/api/v1/nodes/"+name, &n); err != nil {
			if apierrors.IsNotFound(err) {
				nodes[name] = nil
				return nil, false, nil
			}
			return nil, false, err
		}
		nodes[name] = &n
		return &n, true, nil
	}
	families := addressTypes(svc)
	var changes sliceChanges
	byType := map[discoveryv1.AddressType][]discoveryv1.EndpointSlice{}
	for _, s := range existing {
		if slices.Contains(families, s.AddressType) {
			byType[s.AddressType] = append(byType[s.AddressType], s)
		} else {
			changes.remove = append(changes.remove, s)
		}
	}
	for _, family := range families {
		desired := map[string]*portGroup{}
		for i := range pods {
			pod := &pods[i]
			if !podServes(pod, true) {
				continue
			}
			var n *corev1.Node
			if name := pod.Spec.NodeName; name != "" {
				found, ok, err := node(name)
				if err != nil {
					return err
				}
				// A pod on a Node not (yet) known is left out until the
				// Node comes, unless the Service publishes every address.
				if !ok && !svc.Spec.PublishNotReadyAddresses {
					continue
				}
				n = found
			}
			ep := podEndpoint(pod, n, svc, family)
			if len(ep.Addresses) == 0 {
				continue
			}
			ports := endpointSlicePorts(svc, pod)
			k := portsKey(ports)
			if desired[k] == nil {
				desired[k] = &portGroup{ports: ports}
			}
			desired[k].endpoints = append(desired[k].endpoints, ep)
		}
		sc.planFamily(svc, family, byType[family], desired, &changes)
	}
	return sc.apply(ctx, svc, changes, triggered)
}

// portGroup is the endpoints that serve one set of ports.
type portGroup struct {
	ports     []discoveryv1.EndpointPort
	endpoints []discoveryv1.Endpoint
}

// planFamily adds to changes what brings the slices of one address type to
// desired (by ports key): each existing slice keeps the endpoints it has
// that are still wanted, with their new conditions; new endpoints fill the
// slices with room first, then new slices; slices left empty go, and a
// Service with no endpoint at all keeps one empty placeholder.
func (sc *endpointSliceController) planFamily(svc *corev1.Service, family discoveryv1.AddressType, existing []discoveryv1.EndpointSlice, desired map[string]*portGroup, changes *sliceChanges) {
	wantLabels := endpointSliceLabels(svc)
	removedBefore := len(changes.remove)
	byPorts := map[string][]discoveryv1.EndpointSlice{}
	for _, s := range existing {
		if ownedByService(&s, svc) {
			byPorts[portsKey(s.Ports)] = append(byPorts[portsKey(s.Ports)], s)
		} else {
			changes.remove = append(changes.remove, s)
		}
	}
	created := 0
	for _, k := range slices.Sorted(maps.Keys(desired)) {
		group := desired[k]
		remaining := map[string]discoveryv1.Endpoint{}
		for _, ep := range group.endpoints {
			remaining[endpointKey(ep)] = ep
		}
		kept := byPorts[k]
		next := make([][]discoveryv1.Endpoint, len(kept))
		for i, s := range kept {
			for _, ep := range s.Endpoints {
				if want, ok := remaining[endpointKey(ep)]; ok {
					next[i] = append(next[i], want)
					delete(remaining, endpointKey(ep))
				}
			}
		}
		var rest []discoveryv1.Endpoint
		for _, k := range slices.Sorted(maps.Keys(remaining)) {
			rest = append(rest, remaining[k])
		}
		for i := range kept {
			n := min(maxEndpointsPerSlice-len(next[i]), len(rest))
			next[i] = append(next[i], rest[:n]...)
			rest = rest[n:]
		}
		for i, s := range kept {
			switch {
			case len(next[i]) == 0:
				changes.remove = append(changes.remove, s)
			case !reflect.DeepEqual(next[i], s.Endpoints) || !maps.Equal(s.Labels, wantLabels):
				s = *s.DeepCopy()
				s.Endpoints, s.Labels = next[i], wantLabels
				changes.update = append(changes.update, s)
			}
		}
		for len(rest) > 0 {
			n := min(maxEndpointsPerSlice, len(rest))
			s := newEndpointSlice(svc, family, group.ports, wantLabels)
			s.Endpoints = rest[:n]
			rest = rest[n:]
			changes.create = append(changes.create, s)
			created++
		}
		delete(byPorts, k)
	}
	for _, k := range slices.Sorted(maps.Keys(byPorts)) {
		changes.remove = append(changes.remove, byPorts[k]...)
	}
	if len(changes.remove)-removedBefore < len(existing) || created > 0 {
		return
	}
	// Nothing would remain: a placeholder stands for the Service.
	placeholder := newEndpointSlice(svc, family, nil, wantLabels)
	if gone := changes.remove[removedBefore:]; len(gone) == 1 && isPlaceholder(&gone[0], &placeholder, svc) {
		changes.remove = changes.remove[:removedBefore]
		if !maps.Equal(gone[0].Labels, wantLabels) {
			s := *gone[0].DeepCopy()
			s.Labels = wantLabels
			changes.update = append(changes.update, s)
		}
		return
	}
	changes.create = append(changes.create, placeholder)
}

// apply writes changes: a slice that would be deleted while another is
// created is updated into it instead; no slice is created for a Service
// being deleted (the garbage collector deletes its slices).
func (sc *endpointSliceController) apply(ctx context.Context, svc *corev1.Service, changes sliceChanges, triggered time.Time) error {
	for i := 0; i < len(changes.remove) && len(changes.create) > 0; {
		gone, s := changes.remove[i], changes.create[len(changes.create)-1]
		if gone.AddressType != s.AddressType || !ownedByService(&gone, svc) {
			i++
			continue
		}
		s.ObjectMeta = *gone.ObjectMeta.DeepCopy()
		s.Labels = endpointSliceLabels(svc)
		changes.create = changes.create[:len(changes.create)-1]
		changes.update = append(changes.update, s)
		changes.remove = slices.Delete(changes.remove, i, i+1)
	}
	collection := workloadCollection("discovery.k8s.io/v1", "endpointslices", svc.Namespace)
	if svc.DeletionTimestamp == nil {
		for _, s := range changes.create {
			noteTriggerTime(&s, triggered)
			if err := sc.c.Do(ctx, "POST", collection, s, nil); err != nil {
				if apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
					return nil
				}
				return fmt.Errorf("failed to create EndpointSlice for Service %s/%s: %v", svc.Namespace, svc.Name, err)
			}
		}
	}
	for _, s := range changes.update {
		noteTriggerTime(&s, triggered)
		if err := sc.c.Do(ctx, "PUT", collection+"/"+s.Name, s, nil); err != nil {
			return fmt.Errorf("failed to update %s EndpointSlice for Service %s/%s: %v", s.Name, svc.Namespace, svc.Name, err)
		}
	}
	for _, s := range changes.remove {
		if err := sc.c.Do(ctx, "DELETE", collection+"/"+s.Name, nil, nil); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("failed to delete %s EndpointSlice for Service %s/%s: %v", s.Name, svc.Namespace, svc.Name, err)
		}
	}
	return nil
}

// noteTriggerTime sets (or, with none, removes) the slice's
// last-change-trigger-time annotation.
func noteTriggerTime(s *discoveryv1.EndpointSlice, triggered time.Time) {
	if s.Annotations == nil {
		s.Annotations = map[string]string{}
	}
	if triggered.IsZero() {
		delete(s.Annotations, corev1.EndpointsLastChangeTriggerTime)
	} else {
		s.Annotations[corev1.EndpointsLastChangeTriggerTime] = triggered.UTC().Format(time.RFC3339Nano)
	}
}

// newEndpointSlice is an empty slice of svc for ports.
func newEndpointSlice(svc *corev1.Service, family discoveryv1.AddressType, ports []discoveryv1.EndpointPort, lbls map[string]string) discoveryv1.EndpointSlice {
	prefix := svc.Name + "-"
	if len(validation.IsDNS1123Subdomain(prefix+"xxxxx")) != 0 {
		prefix = svc.Name
	}
	yes := true
	return discoveryv1.EndpointSlice{
		TypeMeta: metav1.TypeMeta{APIVersion: "discovery.k8s.io/v1", Kind: "EndpointSlice"},
		ObjectMeta: metav1.ObjectMeta{GenerateName: prefix, Namespace: svc.Namespace, Labels: lbls,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Service", Name: svc.Name, UID: svc.UID, Controller: &yes, BlockOwnerDeletion: &yes}}},
		AddressType: family,
		Ports:       ports,
		Endpoints:   []discoveryv1.Endpoint{},
	}
}

// isPlaceholder reports whether s is svc's placeholder slice (no
// endpoint, no port).
func isPlaceholder(s, placeholder *discoveryv1.EndpointSlice, svc *corev1.Service) bool {
	return len(s.Endpoints) == 0 && len(s.Ports) == 0 && s.AddressType == placeholder.AddressType && ownedByService(s, svc)
}

func ownedByService(s *discoveryv1.EndpointSlice, svc *corev1.Service) bool {
	for _, ref := range s.OwnerReferences {
		if ref.Kind == "Service" && ref.UID == svc.UID && ref.Controller != nil && *ref.Controller {
			return true
		}
	}
	return false
}

// endpointSliceLabels are the labels of svc's slices: its own but for the
// reserved ones, which say whose slices they are.
func endpointSliceLabels(svc *corev1.Service) map[string]string {
	out := map[string]string{}
	for k, v := range svc.Labels {
		if k != discoveryv1.LabelServiceName && k != discoveryv1.LabelManagedBy && k != corev1.IsHeadlessService {
			out[k] = v
		}
	}
	if headless(svc) {
		out[corev1.IsHeadlessService] = ""
	}
	out[discoveryv1.LabelServiceName] = svc.Name
	out[discoveryv1.LabelManagedBy] = endpointSliceManager
	return out
}

// addressTypes are the address types of svc's slices, by its IP families;
// a Service with none (written before families existed) by its cluster IP,
// both for a headless one.
func addressTypes(svc *corev1.Service) []discoveryv1.AddressType {
	var out []discoveryv1.AddressType
	for _, f := range svc.Spec.IPFamilies {
		switch f {
		case corev1.IPv4Protocol:
			out = append(out, discoveryv1.AddressTypeIPv4)
		case corev1.IPv6Protocol:
			out = append(out, discoveryv1.AddressTypeIPv6)
		}
	}
	switch {
	case len(out) > 0:
	case headless(svc):
		out = []discoveryv1.AddressType{discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6}
	case strings.Contains(svc.Spec.ClusterIP, ":"):
		out = []discoveryv1.AddressType{discoveryv1.AddressTypeIPv6}
	default:
		out = []discoveryv1.AddressType{discoveryv1.AddressTypeIPv4}
	}
	return out
}

// podEndpoint is the endpoint of pod in svc's slices of family: serving
// when ready, ready only if also not terminating (or if the Service
// publishes every address).
func podEndpoint(pod *corev1.Pod, node *corev1.Node, svc *corev1.Service, family discoveryv1.AddressType) discoveryv1.Endpoint {
	serving := isPodReady(pod)
	terminating := pod.DeletionTimestamp != nil
	ready := svc.Spec.PublishNotReadyAddresses || serving && !terminating
	ep := discoveryv1.Endpoint{
		Addresses:  []string{},
		Conditions: discoveryv1.EndpointConditions{Ready: &ready, Serving: &serving, Terminating: &terminating},
		TargetRef:  &corev1.ObjectReference{Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID},
	}
	if ip := podIPOfFamily(pod, family == discoveryv1.AddressTypeIPv6); ip != "" {
		ep.Addresses = append(ep.Addresses, ip)
	}
	if pod.Spec.NodeName != "" {
		ep.NodeName = &pod.Spec.NodeName
	}
	if node != nil && node.Labels[corev1.LabelTopologyZone] != "" {
		zone := node.Labels[corev1.LabelTopologyZone]
		ep.Zone = &zone
	}
	if h := podHostname(pod, svc); h != "" {
		ep.Hostname = &h
	}
	return ep
}

// endpointSlicePorts are the ports of svc pod serves.
func endpointSlicePorts(svc *corev1.Service, pod *corev1.Pod) []discoveryv1.EndpointPort {
	ports := []discoveryv1.EndpointPort{}
	for i := range svc.Spec.Ports {
		port := &svc.Spec.Ports[i]
		num, err := findPort(pod, port)
		if err != nil {
			continue
		}
		name, protocol := port.Name, port.Protocol
		ports = append(ports, discoveryv1.EndpointPort{Name: &name, Port: &num, Protocol: &protocol, AppProtocol: port.AppProtocol})
	}
	return ports
}

// portsKey identifies a set of ports, whatever their order.
func portsKey(ports []discoveryv1.EndpointPort) string {
	var parts []string
	for _, p := range ports {
		parts = append(parts, fmt.Sprintf("%s/%d/%s/%s", deref(p.Name), deref(p.Port), deref(p.Protocol), deref(p.AppProtocol)))
	}
	slices.Sort(parts)
	return strings.Join(parts, ",")
}

// endpointKey identifies an endpoint: its pod, or its first address.
func endpointKey(ep discoveryv1.Endpoint) string {
	if ep.TargetRef != nil && ep.TargetRef.UID != "" {
		return string(ep.TargetRef.UID)
	}
	return strings.Join(ep.Addresses, ",")
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
