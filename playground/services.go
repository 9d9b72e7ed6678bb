package playground

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"

	"kubeplay/server/inproc"
	"kubeplay/store"
)

// What the endpoints and EndpointSlice controllers share: which Services
// select a pod, and which of a Service's pods serve it on which ports.

var serviceKeyPrefix = builtinKeyPrefix(coreV1("services"))

// selectorIndex holds the label selectors of one resource's objects, by
// namespace and name, as a controller's informer cache would, so that a
// change of a pod names the objects that select it. Only the event
// goroutine uses it (resync and keysOf).
type selectorIndex map[string]map[string]labels.Selector

// set records the selector of ns/name (nil: it selects nothing).
func (x selectorIndex) set(ns, name string, sel labels.Selector) {
	if x[ns] == nil {
		x[ns] = map[string]labels.Selector{}
	}
	x[ns][name] = sel
}

func (x selectorIndex) remove(ns, name string) { delete(x[ns], name) }

// queueSelecting queues the key ("<namespace>/<name>") of every object
// whose selector matches the stored pod before or after its change.
func (x selectorIndex) queueSelecting(ev store.Event, ns string, q queue) {
	podLabels := labelsOf(ev.KV.Value)
	var prevLabels labels.Set
	if ev.Prev != nil {
		prevLabels = labelsOf(ev.Prev.Value)
	}
	for name, sel := range x[ns] {
		if sel != nil && (sel.Matches(podLabels) || prevLabels != nil && sel.Matches(prevLabels)) {
			q.Add(ns + "/" + name)
		}
	}
}

// serviceSelectors follows the Services' selectors.
type serviceSelectors struct{ index selectorIndex }

func (s *serviceSelectors) set(svc *corev1.Service) {
	var sel labels.Selector
	if svc.Spec.Selector != nil {
		sel = labels.Set(svc.Spec.Selector).AsSelectorPreValidated()
	}
	s.index.set(svc.Namespace, svc.Name, sel)
}

// resync lists every Service and returns their keys.
func (s *serviceSelectors) resync(ctx context.Context, c *inproc.Client) ([]string, error) {
	var l corev1.ServiceList
	if err := c.Get(ctx, "/api/v1/services", &l); err != nil {
		return nil, err
	}
	s.index = selectorIndex{}
	var keys []string
	for i := range l.Items {
		s.set(&l.Items[i])
		keys = append(keys, l.Items[i].Namespace+"/"+l.Items[i].Name)
	}
	return keys, nil
}

// keysOf queues the Service a change of a Service names, and the Services
// that select a changed pod, before or after its change. A change of a
// Node queues every Service with a selector (its pods may run there).
func (s *serviceSelectors) keysOf(ev store.Event, q queue) {
	if rest, ok := strings.CutPrefix(ev.KV.Key, serviceKeyPrefix); ok {
		ns, name, _ := strings.Cut(rest, "/")
		if ev.Type == store.Deleted {
			s.index.remove(ns, name)
		} else {
			var svc corev1.Service
			if json.Unmarshal(ev.KV.Value, &svc) != nil {
				return
			}
			svc.Namespace, svc.Name = ns, name
			s.set(&svc)
		}
		q.Add(rest)
		return
	}
	if rest, ok := strings.CutPrefix(ev.KV.Key, podKeyPrefix); ok {
		ns, _, _ := strings.Cut(rest, "/")
		s.index.queueSelecting(ev, ns, q)
		return
	}
	if strings.HasPrefix(ev.KV.Key, nodeKeyPrefix) && nodeChangeMatters(ev) {
		for ns, services := range s.index {
			for name, sel := range services {
				if sel != nil {
					q.Add(ns + "/" + name)
				}
			}
		}
	}
}

// nodeChangeMatters reports whether a Node's change may change its pods'
// endpoints: it came, went, or changed labels (its zone); its status
// heartbeats do not.
func nodeChangeMatters(ev store.Event) bool {
	if ev.Type != store.Updated || ev.Prev == nil {
		return true
	}
	return !labels.Equals(labelsOf(ev.KV.Value), labelsOf(ev.Prev.Value))
}

// labelsOf reads the labels of a stored object.
func labelsOf(value []byte) labels.Set {
	var o struct {
		Metadata struct {
			Labels map[string]string `json:"labels"`
		} `json:"metadata"`
	}
	json.Unmarshal(value, &o)
	if o.Metadata.Labels == nil {
		return labels.Set{}
	}
	return o.Metadata.Labels
}

// getService reads the Service key ("<namespace>/<name>") names: nil if
// there is none.
func getService(ctx context.Context, c *inproc.Client, key string) (*corev1.Service, error) {
	ns, name, _ := strings.Cut(key, "/")
	var svc corev1.Service
	if err := c.Get(ctx, namedPath("", "services", ns, name), &svc); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	return &svc, nil
}

// selectedPods lists the pods svc's selector selects.
func selectedPods(ctx context.Context, c *inproc.Client, svc *corev1.Service) ([]corev1.Pod, error) {
	var l corev1.PodList
	path := workloadCollection("", "pods", svc.Namespace) + "?labelSelector=" + url.QueryEscape(labels.Set(svc.Spec.Selector).String())
	err := c.Get(ctx, path, &l)
	return l.Items, err
}

// podServes reports whether pod belongs in its Services' endpoints: it has
// an IP, has not ended, and is not being deleted unless includeTerminating.
func podServes(pod *corev1.Pod, includeTerminating bool) bool {
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return false
	}
	if pod.Status.PodIP == "" && len(pod.Status.PodIPs) == 0 {
		return false
	}
	return includeTerminating || pod.DeletionTimestamp == nil
}

// isPodReady reports whether the pod's Ready condition is True.
func isPodReady(pod *corev1.Pod) bool {
	return podReadyCondition(pod) != nil && podReadyCondition(pod).Status == corev1.ConditionTrue
}

func podReadyCondition(pod *corev1.Pod) *corev1.PodCondition {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == corev1.PodReady {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}

// podHostname is the hostname a pod's endpoint carries: its own, when it
// names the Service as its subdomain.
func podHostname(pod *corev1.Pod, svc *corev1.Service) string {
	if pod.Spec.Hostname != "" && pod.Spec.Subdomain == svc.Name && pod.Namespace == svc.Namespace {
		return pod.Spec.Hostname
	}
	return ""
}

// findPort is the pod's port a Service port targets: a number as it is,
// a name as one of the containers' (or restartable init containers')
// ports of that name and protocol.
func findPort(pod *corev1.Pod, port *corev1.ServicePort) (int32, error) {
	if port.TargetPort.Type == intstr.Int {
		return int32(port.TargetPort.IntValue()), nil
	}
	name := port.TargetPort.StrVal
	for _, c := range pod.Spec.Containers {
		for _, p := range c.Ports {
			if p.Name == name && p.Protocol == port.Protocol {
				return p.ContainerPort, nil
			}
		}
	}
	for _, c := range pod.Spec.InitContainers {
		if c.RestartPolicy == nil || *c.RestartPolicy != corev1.ContainerRestartPolicyAlways {
			continue
		}
		for _, p := range c.Ports {
			if p.Name == name && p.Protocol == port.Protocol {
				return p.ContainerPort, nil
			}
		}
	}
	return 0, fmt.Errorf("no suitable port for manifest: %s", pod.UID)
}

// wantsIPv6 reports whether a Service's (first) IP family is IPv6.
func wantsIPv6(svc *corev1.Service) bool {
	return len(svc.Spec.IPFamilies) > 0 && svc.Spec.IPFamilies[0] == corev1.IPv6Protocol
}

// headless reports whether a Service has no cluster IP.
func headless(svc *corev1.Service) bool {
	return svc.Spec.ClusterIP == "" || svc.Spec.ClusterIP == corev1.ClusterIPNone
}

// triggerTimes remembers, per Service, the trigger times its last sync saw
// (its creation, its pods' Ready transitions), to say when the change a
// sync publishes was triggered: the endpoints.kubernetes.io/last-change-trigger-time
// annotation. Only a controller's worker uses it.
type triggerTimes map[string]serviceTriggers

type serviceTriggers struct {
	service time.Time
	pods    map[string]time.Time
}

// compute is the trigger time of what a sync of the Service key publishes:
// the Service's creation when the Service is new to the controller, else
// the earliest of the trigger times that changed since the last sync (zero
// if none did).
func (t triggerTimes) compute(key string, svc *corev1.Service, pods []corev1.Pod) time.Time {
	last, known := t[key]
	var earliest time.Time
	changed := func(at time.Time) {
		if earliest.IsZero() || at.Before(earliest) {
			earliest = at
		}
	}
	now := serviceTriggers{service: svc.CreationTimestamp.Time, pods: map[string]time.Time{}}
	for i := range pods {
		cond := podReadyCondition(&pods[i])
		if cond == nil || cond.LastTransitionTime.IsZero() {
			continue
		}
		at := cond.LastTransitionTime.Time
		now.pods[pods[i].Name] = at
		if at.After(last.pods[pods[i].Name]) {
			changed(at)
		}
	}
	if now.service.After(last.service) {
		changed(now.service)
	}
	t[key] = now
	if !known {
		return svc.CreationTimestamp.Time
	}
	return earliest
}

// metaRef refers an Event to the typed object of apiVersion and kind whose
// metadata is m.
func metaRef(apiVersion, kind string, m metav1.ObjectMeta) objectRef {
	return objectRef{APIVersion: apiVersion, Kind: kind, Namespace: m.Namespace, Name: m.Name, UID: string(m.UID), ResourceVersion: m.ResourceVersion}
}
