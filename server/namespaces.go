package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"kubeplay/server/authz"
	"kubeplay/server/catalog"
	"kubeplay/server/defaults"
	"kubeplay/server/encoding"
	"kubeplay/store"
)

var namespacesGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

// systemNamespaces exist in every cluster from the start.
var systemNamespaces = []string{"default", "kube-node-lease", "kube-public", "kube-system"}

// bootstrap creates what kube-apiserver creates when it first starts on an
// empty store: the system namespaces, the RBAC bootstrap policy and the
// kubernetes Service, those of them that are missing. A database opened
// again holds them all, so it looks first, with one List per collection:
// preparing an object (defaults, managedFields) is most of a start's work
// (~1 s in a browser), and a Get per object took a quarter of a second there.
func (s *Server) bootstrap(ctx context.Context) error {
	var objs []map[string]any
	for _, name := range systemNamespaces {
		objs = append(objs, map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name}})
	}
	rbac, err := authz.Bootstrap()
	if err != nil {
		return err
	}
	objs = append(objs, rbac...)
	objs = append(objs, kubernetesService())
	stored := map[string]bool{} // keys
	listed := map[string]bool{} // collection prefixes
	for _, obj := range objs {
		gv, err := schema.ParseGroupVersion(str(obj, "apiVersion"))
		if err != nil {
			return err
		}
		kind := str(obj, "kind")
		res := catalog.LookupBuiltin(gv.WithResource(strings.ToLower(kind) + "s"))
		if res == nil {
			return fmt.Errorf("no resource for %s", kind)
		}
		if prefix := collectionPrefix(res, ""); !listed[prefix] {
			list, err := s.store.List(ctx, prefix, "", 0, 0)
			if err != nil {
				return err
			}
			for _, kv := range list.Items {
				stored[kv.Key] = true
			}
			listed[prefix] = true
		}
		md := metadata(obj)
		if key := objectKey(res, str(md, "namespace"), str(md, "name")); !stored[key] {
			if err := s.createBootstrap(ctx, res, key, obj); err != nil {
				return err
			}
		}
	}
	return nil
}

// kubernetesService is the Service kube-apiserver keeps in default for
// clients inside the cluster, as it writes it: the service range's first
// address, port 443 to its own secure port (here kube-apiserver's default,
// 6443: kubeplay has no port of its own in a browser).
func kubernetesService() map[string]any {
	return map[string]any{
		"apiVersion": "v1", "kind": "Service",
		"metadata": map[string]any{
			"name": "kubernetes", "namespace": "default",
			"labels": map[string]any{"component": "apiserver", "provider": "kubernetes"},
		},
		"spec": map[string]any{
			"type": "ClusterIP", "clusterIP": defaults.KubernetesServiceIP(), "ipFamilyPolicy": "SingleStack",
			"sessionAffinity": "None",
			"ports":           []any{map[string]any{"name": "https", "port": int64(443), "protocol": "TCP", "targetPort": int64(6443)}},
		},
	}
}

// createBootstrap stores obj, a bootstrap object, under key, unless
// something else created it meanwhile.
func (s *Server) createBootstrap(ctx context.Context, res *catalog.Resource, key string, obj object) error {
	if err := applyDefaults(res, obj); err != nil {
		return err
	}
	obj, err := s.trackUpdate(res, "", nil, obj, "kube-apiserver")
	if err != nil {
		return err
	}
	if err := s.allocateServiceAddresses(ctx, res, obj, false); err != nil {
		return err
	}
	s.prepareForCreate(res, obj)
	value, err := encodeForStorage(res, obj)
	if err != nil {
		return err
	}
	_, err = s.store.Create(ctx, key, value)
	if err != nil && !errors.Is(err, store.ErrExists) {
		return err
	}
	return nil
}

// finalizeNamespace is PUT /api/v1/namespaces/{name}/finalize: it replaces
// the namespace's spec.finalizers and, if the namespace is being deleted and
// nothing holds it any more, removes it.
func (s *Server) finalizeNamespace(w http.ResponseWriter, r *http.Request, req *request) {
	s.updateNamespacePart(w, r, req, func(obj, old object) {
		spec, _ := obj["spec"].(map[string]any)
		oldSpec, _ := old["spec"].(map[string]any)
		if oldSpec == nil {
			oldSpec = map[string]any{}
			old["spec"] = oldSpec
		}
		if list, ok := spec["finalizers"].([]any); ok && len(list) > 0 {
			oldSpec["finalizers"] = list
		} else {
			delete(oldSpec, "finalizers")
		}
	})
}

// updateNamespacePart is a PUT of a namespace subresource: apply copies the
// part the subresource may change from the request's object to the stored
// one, which is then written.
func (s *Server) updateNamespacePart(w http.ResponseWriter, r *http.Request, req *request, apply func(obj, old object)) {
	if r.Method != http.MethodPut {
		encoding.WriteError(w, r, errMethodNotAllowed())
		return
	}
	obj, err := readBody(w, r, req.res)
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	old, kv, err := s.getObject(r.Context(), req.res, "", req.name)
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	if rv := str(metadata(obj), "resourceVersion"); rv != "" && rv != str(metadata(old), "resourceVersion") {
		encoding.WriteError(w, r, storeError(req.res, req.name, store.ErrConflict))
		return
	}
	apply(obj, old)
	out, err := s.commitUpdate(r.Context(), req.res, "", req.name, old, kv.ModRevision, false)
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	encoding.Write(w, r, http.StatusOK, out)
}
