package playground

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"kubeplay/server"
	"kubeplay/server/authn"
	"kubeplay/server/catalog"
	"kubeplay/server/inproc"
	"kubeplay/store"
)

// namespaceControllerAgent is how kube-controller-manager's namespace
// controller identifies itself to the API server.
const namespaceControllerAgent = "kube-controller-manager/v1.35.4 (linux/amd64) kubernetes/7b8c6cf/system:serviceaccount:kube-system:namespace-controller"

// namespaceControllerUser is who the namespace controller acts as: the
// ServiceAccount the default RBAC roles grant its permissions to.
var namespaceControllerUser = &authn.User{
	Name:   "system:serviceaccount:kube-system:namespace-controller",
	Groups: []string{"system:serviceaccounts", "system:serviceaccounts:kube-system", authn.Authenticated},
}

// namespaceController does what kube-controller-manager's namespace
// controller does: when a namespace is being deleted, it deletes everything
// in it through the API, and once nothing is left it removes the
// "kubernetes" finalizer through /finalize, which lets the API server remove
// the namespace.
type namespaceController struct {
	api     *inproc.Client
	catalog *catalog.Catalog
	store   store.Store
}

func newNamespaceController(api *server.Server, st store.Store) *namespaceController {
	return &namespaceController{api: inproc.New(api, namespaceControllerAgent), catalog: api.Catalog(), store: st}
}

// retryInterval paces another look at a namespace whose content is still
// held by finalizers, or after an error.
const retryInterval = time.Second

func (c *namespaceController) run(ctx context.Context) {
	runController(ctx, "namespace controller", c.watchAndSync)
}

// runController calls watchAndSync until ctx ends, pausing after an error.
func runController(ctx context.Context, name string, watchAndSync func(context.Context) error) {
	for ctx.Err() == nil {
		if err := watchAndSync(ctx); err != nil && ctx.Err() == nil {
			slog.Warn(name, "err", err)
			sleep(ctx, retryInterval)
		}
	}
}

// watchAndSync reconciles every terminating namespace, then again whenever
// anything changes, until the watch ends.
func (c *namespaceController) watchAndSync(ctx context.Context) error {
	rev, err := c.store.CurrentRevision(ctx)
	if err != nil {
		return err
	}
	w, err := c.store.Watch(ctx, "/registry/", rev)
	if err != nil {
		return err
	}
	defer w.Stop()
	pending := c.syncAll(ctx)
	retry := time.NewTimer(retryInterval)
	defer retry.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.Events():
			if !ok {
				return w.Err()
			}
			// Only a namespace change can start a deletion; other changes
			// matter while content is still going.
			if pending || strings.HasPrefix(ev.KV.Key, "/registry/namespaces/") {
				pending = c.syncAll(ctx)
			}
		case <-retry.C:
			if pending {
				pending = c.syncAll(ctx)
			}
			retry.Reset(retryInterval)
		}
	}
}

// syncAll reconciles the terminating namespaces; it reports whether any is
// still waiting for its content to go.
func (c *namespaceController) syncAll(ctx context.Context) (pending bool) {
	var list struct {
		Items []struct {
			Metadata metav1.ObjectMeta `json:"metadata"`
			Spec     struct {
				Finalizers []string `json:"finalizers"`
			} `json:"spec"`
		} `json:"items"`
	}
	if err := c.api.Get(ctx, "/api/v1/namespaces", &list); err != nil {
		slog.Warn("namespace controller: list namespaces", "err", err)
		return true
	}
	for _, ns := range list.Items {
		if ns.Metadata.DeletionTimestamp == nil || !slices.Contains(ns.Spec.Finalizers, "kubernetes") {
			continue
		}
		done, err := c.sync(ctx, ns.Metadata.Name)
		if err != nil {
			slog.Warn("namespace controller", "namespace", ns.Metadata.Name, "err", err)
		}
		if !done {
			pending = true
		}
	}
	return pending
}

// sync deletes the content of a terminating namespace and, once it is gone,
// finalizes the namespace. done is false while content remains.
func (c *namespaceController) sync(ctx context.Context, ns string) (done bool, err error) {
	remaining := 0
	for _, r := range c.catalog.All() {
		if !r.Namespaced || !r.HasVerb("list") || !r.HasVerb("delete") {
			continue
		}
		base := collectionPath(r, ns)
		if r.HasVerb("deletecollection") {
			if err := c.api.Do(ctx, "DELETE", base, nil, nil); err != nil && !apierrors.IsNotFound(err) {
				return false, err
			}
		}
		var left struct {
			Items []struct {
				Metadata metav1.ObjectMeta `json:"metadata"`
			} `json:"items"`
		}
		if err := c.api.Get(ctx, base, &left); err != nil {
			return false, err
		}
		for _, it := range left.Items {
			if it.Metadata.DeletionTimestamp == nil {
				err := c.api.Do(ctx, "DELETE", base+"/"+it.Metadata.Name, nil, nil)
				if err != nil && !apierrors.IsNotFound(err) {
					return false, err
				}
			}
		}
		remaining += len(left.Items)
	}
	if remaining > 0 {
		return false, nil
	}
	finalize := map[string]any{
		"apiVersion": "v1", "kind": "Namespace",
		"metadata": map[string]any{"name": ns},
		"spec":     map[string]any{"finalizers": []string{}},
	}
	err = c.api.Do(ctx, "PUT", "/api/v1/namespaces/"+ns+"/finalize", finalize, nil)
	if apierrors.IsNotFound(err) {
		err = nil
	}
	return err == nil, err
}

// collectionPath is the URL of a resource's objects in ns.
func collectionPath(r *catalog.Resource, ns string) string {
	var b strings.Builder
	if r.Group == "" {
		b.WriteString("/api/v1")
	} else {
		b.WriteString("/apis/" + r.Group + "/" + r.Version)
	}
	b.WriteString("/namespaces/" + ns + "/" + r.Resource)
	return b.String()
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
