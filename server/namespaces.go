package server

import (
	"net/http"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"kubeplay/server/encoding"
	"kubeplay/store"
)

var namespacesGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

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
// one, which is then validated and written (unless a dry run).
func (s *Server) updateNamespacePart(w http.ResponseWriter, r *http.Request, req *request, apply func(obj, old object)) {
	if r.Method != http.MethodPut {
		encoding.WriteError(w, r, errMethodNotAllowed())
		return
	}
	opts, err := writeOptionsOf(r, "UpdateOptions", "")
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	obj, err := readBody(r, req.res)
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
	if errs, err := validateUpdate(r.Context(), req, old, nil); err != nil || len(errs) > 0 {
		if err == nil {
			err = errInvalid(req.res, req.name, errs)
		}
		encoding.WriteError(w, r, err)
		return
	}
	out, err := s.commitUpdate(r.Context(), req.res, "", req.name, old, kv, opts.dryRun)
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	encoding.Write(w, r, http.StatusOK, out)
}
