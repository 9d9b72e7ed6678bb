package server

import (
	"net/http"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/server/encoding"
)

// update serves a PUT: the object sent replaces the live one, or creates
// it where the type allows.
func (s *Server) update(w http.ResponseWriter, r *http.Request, req *request) {
	out, code, err := s.updateObject(r, req)
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	s.writeObject(w, r, req, code, out)
}

func (s *Server) updateObject(r *http.Request, req *request) (object, int, error) {
	res := req.res
	opts, err := writeOptionsOf(r, "UpdateOptions", "")
	if err != nil {
		return nil, 0, err
	}
	sent, err := readBody(r, res)
	if err != nil {
		return nil, 0, err
	}
	md := metadata(sent)
	if name := str(md, "name"); name != req.name {
		return nil, 0, encoding.BadRequest("the name of the object (%s) does not match the name on the URL (%s)", name, req.name)
	}
	if res.Namespaced {
		if ns := str(md, "namespace"); ns != "" && ns != req.namespace {
			return nil, 0, encoding.BadRequest("the namespace of the provided object does not match the namespace sent on the request")
		}
		md["namespace"] = req.namespace
	} else {
		delete(md, "namespace")
	}
	wr := &write{request: req, manager: opts.manager, dryRun: opts.dryRun, createsMissing: req.store.strategy.createOnUpdate}
	out, code, err := s.reg.updateWith(r.Context(), wr, func(live object, rev int64) (object, error) {
		obj := deepCopyObject(sent) // computed again on a retry
		md := metadata(obj)
		if live == nil {
			delete(md, "resourceVersion") // as kube-apiserver, a create ignores it
			return obj, nil
		}
		rv := str(md, "resourceVersion")
		if rv == "" && req.store.strategy.conditionalUpdate {
			return nil, apierrors.NewInvalid(schema.GroupKind{Group: res.Group, Kind: res.Resource}, req.name, field.ErrorList{
				field.Invalid(field.NewPath("metadata", "resourceVersion"), 0, "must be specified for an update")})
		}
		if n, err := strconv.ParseInt(rv, 10, 64); rv != "" && (err != nil || n <= 0) {
			return nil, req.store.errInvalid(req.name, field.ErrorList{
				field.Invalid(field.NewPath("metadata", "resourceVersion"), rv, "must be a positive integer")})
		}
		if err := checkResourceVersion(wr, obj, rev); err != nil {
			return nil, err
		}
		if uid, stored := str(md, "uid"), str(metadata(live), "uid"); uid != "" && uid != stored {
			return nil, req.store.errUIDPrecondition(req.namespace, req.name, uid, stored)
		}
		return obj, nil
	})
	return out, code, err
}
