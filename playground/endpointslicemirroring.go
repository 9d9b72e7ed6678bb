package playground

import (
	"context"
	"fmt"
	"maps"
	"net/netip"
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

	"kubeplay/server/inproc"
	"kubeplay/store"
)

// endpointSliceMirroring is kube-controller-manager's EndpointSlice
// mirroring controller: the Endpoints of a Service without a selector
// (which someone writes by hand) are mirrored into EndpointSlices, one per
// address type and set of ports, owned by the Endpoints and labelled with
// the service name and endpointslicemirroring-controller.k8s.io as their
// manager; they follow the Endpoints' changes, and go when the Endpoints
// or the Service go, when the Service gets a selector, or when the
// Endpoints are labelled endpointslice.kubernetes.io/skip-mirror=true or
// hold a leader election record. Its keys are "<namespace>/<name>" of
// Endpoints (and so of Services).
type endpointSliceMirroring struct {
	c      *inproc.Client
	events *eventRecorder
	served func() bool
}

var endpointSliceMirroringDef = controllerDef{name: "endpointSliceMirroring", title: "endpointslicemirroring controller", serviceAccount: "endpointslicemirroring-controller",
	start: func(sb *Sandbox) reconciler {
		c := inproc.New(sb.handler, controllerAgent("endpointslicemirroring-controller"))
		return &endpointSliceMirroring{c: c, events: newEventRecorder(c, "endpoint-slice-mirroring-controller", "", sb.clock.Now),
			served: servedIn(sb, endpointSliceGVR)}
	}}

const (
	// mirroringManager is the endpointslice.kubernetes.io/managed-by label
	// of the slices the controller writes.
	mirroringManager = "endpointslicemirroring-controller.k8s.io"
	// maxMirroredPerSubset is kube-controller-manager's default
	// --mirroring-max-endpoints-per-subset.
	maxMirroredPerSubset = 1000
)

func (m *endpointSliceMirroring) resync(ctx context.Context, _ int64) ([]string, error) {
	if !m.served() {
		return nil, nil
	}
	var list corev1.EndpointsList
	if err := m.c.Get(ctx, "/api/v1/endpoints", &list); err != nil {
		return nil, err
	}
	var keys []string
	for _, ep := range list.Items {
		keys = append(keys, ep.Namespace+"/"+ep.Name)
	}
	return keys, nil
}

// keysOf names the Endpoints a change of Endpoints, of their Service or of
// a mirrored slice concerns.
func (m *endpointSliceMirroring) keysOf(ev store.Event, q queue) {
	key := ev.KV.Key
	if rest, ok := strings.CutPrefix(key, endpointSliceKeyPrefix); ok {
		ns, _, _ := strings.Cut(rest, "/")
		l := labelsOf(ev.KV.Value)
		if ev.Type != store.Deleted && l[discoveryv1.LabelManagedBy] == mirroringManager && l[discoveryv1.LabelServiceName] != "" {
			q.Add(ns + "/" + l[discoveryv1.LabelServiceName])
		}
		return
	}
	for _, prefix := range []string{endpointsKeyPrefix, serviceKeyPrefix} {
		if rest, ok := strings.CutPrefix(key, prefix); ok {
			q.Add(rest)
		}
	}
}

func (m *endpointSliceMirroring) reconcile(ctx context.Context, key string) (time.Duration, error) {
	if !m.served() {
		return 0, nil
	}
	ns, name, _ := strings.Cut(key, "/")
	var list discoveryv1.EndpointSliceList
	sel := labels.Set{discoveryv1.LabelServiceName: name, discoveryv1.LabelManagedBy: mirroringManager}.String()
	if err := m.c.Get(ctx, workloadCollection("discovery.k8s.io/v1", "endpointslices", ns)+"?labelSelector="+url.QueryEscape(sel), &list); err != nil {
		return 0, err
	}
	var existing []discoveryv1.EndpointSlice
	for _, s := range list.Items {
		if s.DeletionTimestamp == nil {
			existing = append(existing, s)
		}
	}
	ep, err := m.mirrored(ctx, ns, name)
	if err != nil {
		return 0, err
	}
	if ep == nil {
		return 0, m.remove(ctx, existing)
	}
	desired, order := m.desired(ctx, ep)
	byKey := map[string][]discoveryv1.EndpointSlice{}
	for _, s := range existing {
		k := string(s.AddressType) + "|" + portsKey(s.Ports)
		byKey[k] = append(byKey[k], s)
	}
	var stale []discoveryv1.EndpointSlice
	for _, k := range order {
		want := desired[k]
		have := byKey[k]
		delete(byKey, k)
		if len(have) > 0 {
			stale = append(stale, have[1:]...)
			if sliceMatches(&have[0], want) {
				continue
			}
			want.Name, want.ResourceVersion = have[0].Name, have[0].ResourceVersion
			if err := m.c.Do(ctx, "PUT", namedPath("discovery.k8s.io/v1", "endpointslices", ns, want.Name), want, nil); err != nil {
				return 0, err
			}
			continue
		}
		if err := m.c.Do(ctx, "POST", workloadCollection("discovery.k8s.io/v1", "endpointslices", ns), want, nil); err != nil {
			return 0, err
		}
	}
	for _, have := range byKey {
		stale = append(stale, have...)
	}
	return 0, m.remove(ctx, stale)
}

// mirrored are the Endpoints ns/name if they are to be mirrored: their
// Service exists with no selector, and they opt out in neither way.
func (m *endpointSliceMirroring) mirrored(ctx context.Context, ns, name string) (*corev1.Endpoints, error) {
	var ep corev1.Endpoints
	if err := m.c.Get(ctx, namedPath("", "endpoints", ns, name), &ep); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	if ep.Labels[discoveryv1.LabelSkipMirror] == "true" || ep.Annotations["control-plane.alpha.kubernetes.io/leader"] != "" {
		return nil, nil
	}
	svc, err := getService(ctx, m.c, ns+"/"+name)
	if err != nil || svc == nil || svc.Spec.Selector != nil {
		return nil, err
	}
	return &ep, nil
}

// desired are the slices that mirror ep, by address type and ports, and
// the order of their keys. Addresses that are not IPs are skipped, and so
// are those beyond the most a subset may mirror, each with its event.
func (m *endpointSliceMirroring) desired(ctx context.Context, ep *corev1.Endpoints) (map[string]*discoveryv1.EndpointSlice, []string) {
	out := map[string]*discoveryv1.EndpointSlice{}
	var order []string
	invalid, skipped := 0, 0
	for _, subset := range repackSubsets(ep.Subsets) {
		ports := []discoveryv1.EndpointPort{}
		for _, p := range subset.Ports {
			ports = append(ports, discoveryv1.EndpointPort{Name: &p.Name, Port: &p.Port, Protocol: &p.Protocol, AppProtocol: p.AppProtocol})
		}
		added := 0
		add := func(a corev1.EndpointAddress, ready bool) {
			if added >= maxMirroredPerSubset {
				skipped++
				return
			}
			ip, err := netip.ParseAddr(a.IP)
			if err != nil {
				invalid++
				skipped++
				return
			}
			added++
			family := discoveryv1.AddressTypeIPv4
			if ip.Is6() && !ip.Is4In6() {
				family = discoveryv1.AddressTypeIPv6
			}
			k := string(family) + "|" + portsKey(ports)
			s := out[k]
			if s == nil {
				s = newMirroredSlice(ep, family, ports)
				out[k] = s
				order = append(order, k)
			}
			endpoint := discoveryv1.Endpoint{Addresses: []string{ip.Unmap().String()}, Conditions: discoveryv1.EndpointConditions{Ready: &ready},
				TargetRef: a.TargetRef, NodeName: a.NodeName}
			if a.Hostname != "" {
				endpoint.Hostname = &a.Hostname
			}
			s.Endpoints = append(s.Endpoints, endpoint)
		}
		for _, a := range subset.Addresses {
			add(a, true)
		}
		for _, a := range subset.NotReadyAddresses {
			add(a, false)
		}
	}
	ref := metaRef("v1", "Endpoints", ep.ObjectMeta)
	if invalid > 0 {
		m.events.event(ctx, ref, "Warning", "InvalidIPAddress", fmt.Sprintf("Skipped %d invalid IP addresses when mirroring to EndpointSlices", invalid))
	}
	if skipped > invalid {
		m.events.event(ctx, ref, "Warning", "TooManyAddressesToMirror",
			fmt.Sprintf("A max of %d addresses can be mirrored to EndpointSlices per Endpoints subset. %d addresses were skipped", maxMirroredPerSubset, skipped))
	}
	return out, order
}

// newMirroredSlice is a slice mirroring ep: its labels and annotations
// (but the trigger time and kubectl's last applied configuration), owned
// by it.
func newMirroredSlice(ep *corev1.Endpoints, family discoveryv1.AddressType, ports []discoveryv1.EndpointPort) *discoveryv1.EndpointSlice {
	lbls := maps.Clone(ep.Labels)
	if lbls == nil {
		lbls = map[string]string{}
	}
	lbls[discoveryv1.LabelServiceName] = ep.Name
	lbls[discoveryv1.LabelManagedBy] = mirroringManager
	annotations := map[string]string{}
	for k, v := range ep.Annotations {
		if k != corev1.EndpointsLastChangeTriggerTime && k != corev1.LastAppliedConfigAnnotation {
			annotations[k] = v
		}
	}
	yes := true
	return &discoveryv1.EndpointSlice{
		TypeMeta: metav1.TypeMeta{APIVersion: "discovery.k8s.io/v1", Kind: "EndpointSlice"},
		ObjectMeta: metav1.ObjectMeta{GenerateName: ep.Name + "-", Namespace: ep.Namespace, Labels: lbls, Annotations: annotations,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Endpoints", Name: ep.Name, UID: ep.UID, Controller: &yes, BlockOwnerDeletion: &yes}}},
		AddressType: family, Ports: ports, Endpoints: []discoveryv1.Endpoint{},
	}
}

// sliceMatches reports whether have already says what want does.
func sliceMatches(have *discoveryv1.EndpointSlice, want *discoveryv1.EndpointSlice) bool {
	key := func(e discoveryv1.Endpoint) string { return endpointKey(e) }
	sorted := func(eps []discoveryv1.Endpoint) []discoveryv1.Endpoint {
		eps = slices.Clone(eps)
		slices.SortFunc(eps, func(a, b discoveryv1.Endpoint) int { return strings.Compare(key(a), key(b)) })
		return eps
	}
	annotations := have.Annotations
	if annotations == nil {
		annotations = map[string]string{}
	}
	return reflect.DeepEqual(have.Labels, want.Labels) && reflect.DeepEqual(annotations, want.Annotations) &&
		reflect.DeepEqual(sorted(have.Endpoints), sorted(want.Endpoints))
}

// remove deletes slices that mirror nothing any more.
func (m *endpointSliceMirroring) remove(ctx context.Context, stale []discoveryv1.EndpointSlice) error {
	for _, s := range stale {
		if err := m.c.Do(ctx, "DELETE", namedPath("discovery.k8s.io/v1", "endpointslices", s.Namespace, s.Name), nil, nil); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return nil
}
