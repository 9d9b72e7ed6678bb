package server

import (
	"net/http"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/server/encoding"
)

func (s *Server) create(w http.ResponseWriter, r *http.Request, req *request) {
	obj, code, err := s.createObject(r, req)
	writeWarnings(w, req)
	if isDryRun, _ := dryRun(r); err == nil && !isDryRun {
		err = s.afterWrite(r.Context(), req.res, obj)
	}
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	encoding.Write(w, r, code, obj)
}

func (s *Server) createObject(r *http.Request, req *request) (object, int, error) {
	res := req.res
	isDryRun, err := dryRun(r)
	if err != nil {
		return nil, 0, err
	}
	manager, err := fieldManagerOf(r, "CreateOptions")
	if err != nil {
		return nil, 0, err
	}
	obj, err := readBody(r, res)
	if err != nil {
		return nil, 0, err
	}
	md := metadata(obj)
	if str(md, "resourceVersion") != "" {
		// kube-apiserver answers this with a 500; it is the client's mistake.
		return nil, 0, encoding.BadRequest("resourceVersion should not be set on objects to be created")
	}
	if res.Namespaced {
		if ns := str(md, "namespace"); ns != "" && ns != req.namespace {
			return nil, 0, encoding.BadRequest("the namespace of the provided object does not match the namespace sent on the request")
		}
		md["namespace"] = req.namespace
	} else {
		delete(md, "namespace")
	}
	name := str(md, "name")
	if name == "" && str(md, "generateName") != "" {
		name = generateName(str(md, "generateName"))
		md["name"] = name
	}
	var errs field.ErrorList
	if name == "" {
		errs = append(errs, field.Required(field.NewPath("metadata", "name"), "name or generateName is required"))
	} else {
		errs = append(errs, validateName(res, name, field.NewPath("metadata", "name"))...)
	}
	if len(errs) > 0 && !(isCRDs(res) && name != "") { // a CRD's name is checked with the rest of it
		return nil, 0, errInvalid(res, name, errs)
	}
	if res.Namespaced {
		if err := s.requireNamespace(r.Context(), res, req.namespace, name); err != nil {
			return nil, 0, err
		}
	}
	// As kube-apiserver, the fields are recorded after defaulting and
	// before the type's own rules for new objects.
	if err := applyDefaults(res, obj); err != nil {
		return nil, 0, err
	}
	if err := s.admit(req, obj, nil); err != nil {
		return nil, 0, err
	}
	if obj, err = s.trackUpdate(res, req.subresource, nil, obj, manager); err != nil {
		return nil, 0, err
	}
	s.prepareForCreate(res, obj)
	md = metadata(obj)
	if isDryRun {
		return obj, http.StatusCreated, nil
	}
	value, err := encodeForStorage(res, obj)
	if err != nil {
		return nil, 0, apierrors.NewInternalError(err)
	}
	rev, err := s.store.Create(r.Context(), objectKey(res, req.namespace, name), value)
	if err != nil {
		return nil, 0, storeError(res, name, err)
	}
	md["resourceVersion"] = strconv.FormatInt(rev, 10)
	return obj, http.StatusCreated, nil
}
