package server

import (
	"net/http"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/server/encoding"
)

func (s *Server) create(w http.ResponseWriter, r *http.Request, req *request) {
	obj, code, err := s.createObject(w, r, req)
	writeWarnings(w, req)
	if err == nil && !dryRunRequested(r) {
		err = s.afterWrite(r.Context(), req.res, obj)
	}
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	s.writeObject(w, r, req, code, obj)
}

func (s *Server) createObject(w http.ResponseWriter, r *http.Request, req *request) (object, int, error) {
	res := req.res
	opts, err := writeOptionsOf(r, "CreateOptions", "")
	if err != nil {
		return nil, 0, err
	}
	obj, err := readBody(w, r, res)
	if err != nil {
		return nil, 0, err
	}
	return s.insert(r, req, obj, opts.manager, opts.dryRun)
}

// insert creates obj, decoded from a create (or an update that creates).
func (s *Server) insert(r *http.Request, req *request, obj object, manager string, isDryRun bool) (object, int, error) {
	ctx := r.Context()
	res := req.res
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
		name = GenerateName(str(md, "generateName"))
		md["name"] = name
	}
	// NamespaceLifecycle is admission, which kube-apiserver runs before
	// it validates the name.
	if res.Namespaced {
		if err := s.requireNamespace(ctx, res, req.namespace, name); err != nil {
			return nil, 0, err
		}
	}
	var errs field.ErrorList
	if name == "" {
		errs = append(errs, field.Required(field.NewPath("metadata", "name"), "name or generateName is required"))
	} else {
		errs = append(errs, validateName(res, name, field.NewPath("metadata", "name"))...)
	}
	errs = append(errs, gcFinalizerErrors(obj)...)
	if len(errs) > 0 && !(isCRDs(res) && name != "") { // a CRD's name is checked with the rest of it
		return nil, 0, errInvalid(res, name, errs)
	}
	// As kube-apiserver, the fields are recorded after defaulting and
	// before the type's own rules for new objects.
	if err := applyDefaults(res, obj); err != nil {
		return nil, 0, err
	}
	if err := s.admitSchema(ctx, req, obj, nil); err != nil {
		return nil, 0, err
	}
	obj, err := s.trackUpdate(res, req.subresource, nil, obj, manager)
	if err != nil {
		return nil, 0, err
	}
	if err := s.admitCreate(ctx, req, obj, isDryRun); err != nil {
		return nil, 0, err
	}
	if err := s.allocateServiceAddresses(r.Context(), res, obj, isDryRun); err != nil {
		return nil, 0, err
	}
	md = metadata(obj)
	if isDryRun {
		return obj, http.StatusCreated, nil
	}
	value, err := encodeForStorage(res, obj)
	if err != nil {
		return nil, 0, apierrors.NewInternalError(err)
	}
	rev, err := s.store.Create(ctx, objectKey(res, req.namespace, name), value)
	if err != nil {
		return nil, 0, storeError(res, name, err)
	}
	md["resourceVersion"] = strconv.FormatInt(rev, 10)
	return obj, http.StatusCreated, nil
}
