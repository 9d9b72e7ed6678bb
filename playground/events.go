package playground

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"kubeplay/internal/jsonmap"
	"kubeplay/server/inproc"
)

// Events are how a cluster's components tell people what they did and why
// (kubectl describe's Events, kubectl get events). Two writers exist, as in
// a cluster: most of kube-controller-manager's controllers and the kubelets
// write core/v1 Events with a source; the scheduler writes events.k8s.io/v1
// Events with a reporting controller and an action. Both land in the same
// storage, so either API reads either kind. Writing one is best effort: a
// failure is logged, never a reason to retry what the controller did.

// objectRef is what an Event says about the object it concerns.
type objectRef struct {
	APIVersion      string `json:"apiVersion,omitempty"`
	Kind            string `json:"kind,omitempty"`
	Namespace       string `json:"namespace,omitempty"`
	Name            string `json:"name,omitempty"`
	UID             string `json:"uid,omitempty"`
	ResourceVersion string `json:"resourceVersion,omitempty"`
	// FieldPath names a part of the object, as a kubelet names a container
	// ("spec.containers{web}").
	FieldPath string `json:"fieldPath,omitempty"`
}

// refTo refers to o, whose apiVersion and kind are those given (objects read
// from a list carry none of their own).
func refTo(o jsonmap.Object, apiVersion, kind string) objectRef {
	md := meta(o)
	s := func(k string) string { v, _ := md[k].(string); return v }
	return objectRef{APIVersion: apiVersion, Kind: kind, Namespace: s("namespace"), Name: s("name"), UID: s("uid"), ResourceVersion: s("resourceVersion")}
}

// eventRecorder records core/v1 Events as client-go's recorder does for a
// controller of kube-controller-manager or a kubelet: one Event per
// distinct (object, type, reason, message), a repeat counted on it.
type eventRecorder struct {
	c *inproc.Client
	// component and host are the Events' source (a kubelet's host is its
	// node's name).
	component, host string
	now             func() time.Time

	mu   sync.Mutex
	seen map[eventKey]*seenEvent
}

type eventKey struct {
	ref                    objectRef
	eventType, reason, msg string
}

type seenEvent struct {
	namespace, name string
	count           int64
}

// maxSeenEvents bounds what a recorder remembers to count repeats (as
// client-go's correlator's cache does); a repeat beyond it is a new Event.
const maxSeenEvents = 4096

func newEventRecorder(c *inproc.Client, component, host string, now func() time.Time) *eventRecorder {
	return &eventRecorder{c: c, component: component, host: host, now: now, seen: map[eventKey]*seenEvent{}}
}

// event records that something of eventType ("Normal" or "Warning")
// happened to ref, for reason (UpperCamelCase), as message says.
func (r *eventRecorder) event(ctx context.Context, ref objectRef, eventType, reason, message string) {
	now := r.now()
	ts := now.UTC().Format(time.RFC3339)
	key := eventKey{ref: ref, eventType: eventType, reason: reason, msg: message}
	key.ref.ResourceVersion = "" // a repeat concerns the object, whatever its version
	r.mu.Lock()
	seen := r.seen[key]
	if seen != nil {
		seen.count++
	}
	count := int64(1)
	if seen != nil {
		count = seen.count
	}
	r.mu.Unlock()
	if seen != nil {
		patch := map[string]any{"count": count, "lastTimestamp": ts, "message": message}
		err := r.c.Patch(ctx, namedPath("", "events", seen.namespace, seen.name), "application/strategic-merge-patch+json", patch, nil)
		if err == nil {
			return
		}
		// Gone (expired, deleted): record it anew.
		r.forget(key)
	}
	ns := ref.Namespace
	if ns == "" {
		ns = "default"
	}
	meta := map[string]any{"namespace": ns}
	ev := map[string]any{"apiVersion": "v1", "kind": "Event", "metadata": meta,
		"involvedObject": ref, "reason": reason, "message": message, "type": eventType,
		"source":         eventSource(r.component, r.host),
		"firstTimestamp": ts, "lastTimestamp": ts, "count": 1,
		"reportingComponent": r.component, "reportingInstance": r.host}
	name, err := createEvent(ctx, r.c, "", ns, ref.Name, now, meta, ev)
	if err != nil {
		slog.Debug("event", "component", r.component, "reason", reason, "err", err)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.seen) >= maxSeenEvents {
		clear(r.seen)
	}
	r.seen[key] = &seenEvent{namespace: ns, name: name, count: 1}
}

func (r *eventRecorder) forget(key eventKey) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.seen, key)
}

func eventSource(component, host string) map[string]any {
	s := map[string]any{"component": component}
	if host != "" {
		s["host"] = host
	}
	return s
}

// schedulerEvent records an events.k8s.io/v1 Event, as the scheduler
// writes them: by reportingController and its instance, with an action.
func schedulerEvent(ctx context.Context, c *inproc.Client, now time.Time, controller, instance string, regarding objectRef, eventType, reason, action, note string) {
	ns := regarding.Namespace
	if ns == "" {
		ns = "default"
	}
	meta := map[string]any{"namespace": ns}
	ev := map[string]any{"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": meta,
		"eventTime":           now.UTC().Format("2006-01-02T15:04:05.000000Z07:00"),
		"reportingController": controller, "reportingInstance": instance,
		"action": action, "reason": reason, "regarding": regarding, "note": note, "type": eventType}
	if _, err := createEvent(ctx, c, "events.k8s.io/v1", ns, regarding.Name, now, meta, ev); err != nil {
		slog.Debug("event", "controller", controller, "reason", reason, "err", err)
	}
}

// maxEventNameTries bounds how often an Event's name moves on past a taken
// one.
const maxEventNameTries = 16

// createEvent creates ev (whose metadata is meta) in ns under the name
// client-go's recorders give an Event: the object's name and the time in
// hexadecimal nanoseconds. A clock coarser than that (the browser's counts
// milliseconds) gives two events of one instant the same name: the later
// one takes the next nanosecond instead of being lost.
func createEvent(ctx context.Context, c *inproc.Client, apiVersion, ns, object string, now time.Time, meta, ev map[string]any) (string, error) {
	nanos := now.UnixNano()
	for try := int64(0); ; try++ {
		name := fmt.Sprintf("%s.%x", object, nanos+try)
		meta["name"] = name
		err := c.Do(ctx, "POST", workloadCollection(apiVersion, "events", ns), ev, nil)
		if err == nil || !apierrors.IsAlreadyExists(err) || try == maxEventNameTries-1 {
			return name, err
		}
	}
}
