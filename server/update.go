package server

import (
	"fmt"
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
	wr := &write{request: req, manager: opts.manager, dryRun: opts.dryRun, createsMissing: strategyOf(res).createOnUpdate}
	out, code, err := s.reg.updateWith(r.Context(), wr, func(live object, rev int64) (object, error) {
		obj := deepCopyObject(sent) // computed again on a retry
		md := metadata(obj)
		if live == nil {
			delete(md, "resourceVersion") // as kube-apiserver, a create ignores it
			return obj, nil
		}
		rv := str(md, "resourceVersion")
		if rv == "" && strategyOf(res).conditionalUpdate {
			return nil, apierrors.NewInvalid(schema.GroupKind{Group: res.Group, Kind: res.Resource}, req.name, field.ErrorList{
				field.Invalid(field.NewPath("metadata", "resourceVersion"), 0, "must be specified for an update")})
		}
		if n, err := strconv.ParseInt(rv, 10, 64); rv != "" && (err != nil || n <= 0) {
			return nil, errInvalid(res, req.name, field.ErrorList{
				field.Invalid(field.NewPath("metadata", "resourceVersion"), rv, "must be a positive integer")})
		}
		if err := checkResourceVersion(wr, obj, rev); err != nil {
			return nil, err
		}
		if uid, stored := str(md, "uid"), str(metadata(live), "uid"); uid != "" && uid != stored {
			return nil, errUIDPrecondition(res, req.namespace, req.name, uid, stored)
		}
		return obj, nil
	})
	return out, code, err
}

// validateDeletingUpdate rejects, on an object being deleted, new
// finalizers and a different deletionGracePeriodSeconds, as kube-apiserver
// does. It checks object metadata twice on update (generic and
// type-specific validation), so it reports each error twice.
func validateDeletingUpdate(obj, old object) field.ErrorList {
	if !deleting(old) {
		return nil
	}
	if g, ok := metadata(obj)["deletionGracePeriodSeconds"]; ok && g != nil && int64Of(g) != int64Of(metadata(old)["deletionGracePeriodSeconds"]) {
		err := field.Invalid(field.NewPath("metadata", "deletionGracePeriodSeconds"), int64Of(g), "field is immutable")
		return field.ErrorList{err, err}
	}
	had := map[string]bool{}
	for _, f := range finalizers(old) {
		had[f] = true
	}
	var added []string
	for _, f := range finalizers(obj) {
		if !had[f] {
			added = append(added, f)
		}
	}
	if len(added) == 0 {
		return nil
	}
	err := field.Forbidden(field.NewPath("metadata", "finalizers"),
		fmt.Sprintf("no new finalizers can be added if the object is being deleted, found new finalizers %#v", added))
	return field.ErrorList{err, err}
}

func finalizers(obj object) []string {
	list, _ := metadata(obj)["finalizers"].([]any)
	out := make([]string, 0, len(list))
	for _, f := range list {
		if s, ok := f.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
