package playground

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"kubeplay/internal/jsonmap"
	"kubeplay/server/authn"
	"kubeplay/server/inproc"
	"kubeplay/store"
)

var serviceAccountDef = controllerDef{name: "serviceAccount", title: "serviceaccount controller", serviceAccount: "service-account-controller",
	start: func(sb *Sandbox) reconciler {
		return &serviceAccountController{h: sb.handler, c: inproc.New(sb.handler, controllerAgent("service-account-controller")),
			each: newPerNamespace(coreV1("serviceaccounts"), "default")}
	}}

// perNamespace are the keys of a controller that keeps an object of one
// name in every active namespace (the default ServiceAccount, the
// kube-root-ca.crt ConfigMap): namespace names. It follows namespaces and
// those objects from the store's changes, as an informer's cache does, so
// that looking at a namespace costs no request unless the object is to be
// made or mended.
type perNamespace struct {
	prefix, name string

	mu sync.Mutex
	// active tells of each namespace whether it is active (not being
	// deleted).
	active map[string]bool
	// objects holds the object of each namespace that has it.
	objects map[string]jsonmap.Object
}

func newPerNamespace(res schema.GroupVersionResource, name string) *perNamespace {
	return &perNamespace{prefix: builtinKeyPrefix(res), name: name}
}

// informersUser is kube-controller-manager's own identity, which its shared
// informers list and watch as, whatever the controllers' roles grant.
var informersUser = &authn.User{Name: "system:kube-controller-manager", Groups: []string{authn.Authenticated}}

// resync reads every namespace and every object of the name, as the
// shared informers do, and names the active namespaces.
func (p *perNamespace) resync(ctx context.Context, h http.Handler, res schema.GroupVersionResource) ([]string, error) {
	c := inproc.New(h, rootAgent("shared-informers"))
	ctx = authn.WithUser(ctx, informersUser)
	namespaces, err := list(ctx, c, "/api/v1/namespaces")
	if err != nil {
		return nil, err
	}
	objs, err := list(ctx, c, allPath(res)+"?fieldSelector=metadata.name%3D"+p.name)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.active, p.objects = map[string]bool{}, map[string]jsonmap.Object{}
	var keys []string
	for _, ns := range namespaces {
		name := jsonmap.String(ns, "metadata", "name")
		if p.active[name] = namespaceActive(ns); p.active[name] {
			keys = append(keys, name)
		}
	}
	for _, o := range objs {
		p.objects[jsonmap.String(o, "metadata", "namespace")] = o
	}
	return keys, nil
}

// namespaceActive reports whether a namespace is active: its phase (which
// the API sets at creation) is not Terminating.
func namespaceActive(ns jsonmap.Object) bool {
	return jsonmap.String(ns, "status", "phase") != "Terminating" && !deleting(ns)
}

// keysOf names a namespace when it changes and is active, and when its
// object changes or goes.
func (p *perNamespace) keysOf(ev store.Event, q queue) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if name, ok := strings.CutPrefix(ev.KV.Key, namespaceKeyPrefix); ok {
		if ev.Type == store.Deleted {
			delete(p.active, name)
			delete(p.objects, name)
			return
		}
		var ns jsonmap.Object
		if json.Unmarshal(ev.KV.Value, &ns) != nil {
			return
		}
		if p.active[name] = namespaceActive(ns); p.active[name] {
			q.Add(name)
		}
		return
	}
	rest, ok := strings.CutPrefix(ev.KV.Key, p.prefix)
	if !ok {
		return
	}
	if ns, name, _ := strings.Cut(rest, "/"); name == p.name {
		var o jsonmap.Object
		if ev.Type == store.Deleted || json.Unmarshal(ev.KV.Value, &o) != nil {
			delete(p.objects, ns)
		} else {
			p.objects[ns] = o
		}
		q.Add(ns)
	}
}

// state tells whether namespace ns is active, and its object as last seen
// (nil if it has none).
func (p *perNamespace) state(ns string) (active bool, obj jsonmap.Object) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.active[ns], p.objects[ns]
}

// createIgnoringGone is a create of kube-controller-manager's controllers
// that keep an object in each namespace: it is not retried when the
// namespace is gone or terminating, nor when the object exists already
// (the change that made it names the namespace again).
func createIgnoringGone(ctx context.Context, c *inproc.Client, path string, obj jsonmap.Object) error {
	err := c.Do(ctx, "POST", path, obj, nil)
	if apierrors.IsNotFound(err) || apierrors.IsAlreadyExists(err) || apierrors.HasStatusCause(err, "NamespaceTerminating") {
		return nil
	}
	return err
}

// serviceAccountController is kube-controller-manager's serviceaccount
// controller: it makes the "default" ServiceAccount of every active
// namespace, again when it is deleted. Its keys are namespace names.
type serviceAccountController struct {
	h    http.Handler
	c    *inproc.Client
	each *perNamespace
}

func (sc *serviceAccountController) resync(ctx context.Context, _ int64) ([]string, error) {
	return sc.each.resync(ctx, sc.h, coreV1("serviceaccounts"))
}

func (sc *serviceAccountController) keysOf(ev store.Event, q queue) { sc.each.keysOf(ev, q) }

func (sc *serviceAccountController) reconcile(ctx context.Context, ns string) (time.Duration, error) {
	if active, sa := sc.each.state(ns); !active || sa != nil {
		return 0, nil
	}
	return 0, createIgnoringGone(ctx, sc.c, workloadCollection("", "serviceaccounts", ns),
		jsonmap.Object{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": jsonmap.Object{"name": "default"}})
}
