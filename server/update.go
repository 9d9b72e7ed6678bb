package server

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/server/catalog"
	"kubeplay/server/encoding"
	"kubeplay/store"
)

func (s *Server) update(w http.ResponseWriter, r *http.Request, req *request) {
	res := req.res
	opts, err := writeOptionsOf(r, "UpdateOptions", "")
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	manager, isDryRun := opts.manager, opts.dryRun
	obj, err := readBody(w, r, res)
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	md := metadata(obj)
	if name := str(md, "name"); name != req.name {
		encoding.WriteError(w, r, encoding.BadRequest("the name of the object (%s) does not match the name on the URL (%s)", name, req.name))
		return
	}
	if res.Namespaced {
		if ns := str(md, "namespace"); ns != "" && ns != req.namespace {
			encoding.WriteError(w, r, encoding.BadRequest("the namespace of the provided object does not match the namespace sent on the request"))
			return
		}
		md["namespace"] = req.namespace
	} else {
		delete(md, "namespace")
	}
	old, kv, err := s.getLive(r.Context(), res, req.namespace, req.name)
	if apierrors.IsNotFound(err) && req.subresource == "" && createOnUpdate(res) {
		delete(md, "resourceVersion") // as kube-apiserver, a create ignores it
		out, code, err := s.insert(r, req, obj, manager, isDryRun)
		if err != nil {
			encoding.WriteError(w, r, err)
			return
		}
		encoding.Write(w, r, code, out)
		return
	}
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	if str(md, "resourceVersion") == "" && !unconditionalUpdate(res) {
		encoding.WriteError(w, r, apierrors.NewInvalid(schema.GroupKind{Group: res.Group, Kind: res.Resource}, req.name, field.ErrorList{
			field.Invalid(field.NewPath("metadata", "resourceVersion"), 0, "must be specified for an update")}))
		return
	}
	if rv := str(md, "resourceVersion"); rv != "" {
		n, err := strconv.ParseInt(rv, 10, 64)
		if err != nil || n <= 0 {
			encoding.WriteError(w, r, errInvalid(res, req.name, field.ErrorList{
				field.Invalid(field.NewPath("metadata", "resourceVersion"), rv, "must be a positive integer")}))
			return
		}
		if n != kv.ModRevision {
			encoding.WriteError(w, r, storeError(res, req.name, store.ErrConflict))
			return
		}
	}
	if uid, stored := str(md, "uid"), str(metadata(old), "uid"); uid != "" && uid != stored {
		encoding.WriteError(w, r, errUIDPrecondition(res, req.namespace, req.name, uid, stored))
		return
	}
	if req.subresource == "status" {
		// Only the status changes: the rest is checked as stored.
		obj = statusOnly(res, obj, old)
	}
	if err := applyDefaults(res, obj); err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	err = s.admitSchema(r.Context(), req, obj, old)
	writeWarnings(w, req)
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	if err := s.confirmNoEscalation(r.Context(), req, obj, old); err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	if errs, err := validateUpdate(r.Context(), req, obj, old); err != nil {
		encoding.WriteError(w, r, err)
		return
	} else if len(errs) > 0 {
		encoding.WriteError(w, r, errInvalid(res, req.name, errs))
		return
	}
	// After the validation, which compares what the client sent with the
	// stored object (a changed deletionGracePeriodSeconds, say).
	obj = prepareUpdate(req, obj, old)
	if obj, err = s.trackUpdate(res, req.subresource, old, obj, manager); err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	req.warnings = nil // written above
	err = s.admitPolicies(r.Context(), req, obj, old, isDryRun)
	writeWarnings(w, req) // admission's
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	if req.subresource == "" {
		if err := s.keepServiceAddresses(r.Context(), res, req.namespace, req.name, obj, old, isDryRun); err != nil {
			encoding.WriteError(w, r, err)
			return
		}
	}
	out, err := s.commitUpdate(r.Context(), res, req.namespace, req.name, obj, kv, isDryRun)
	if err == nil && !isDryRun {
		err = s.afterWrite(r.Context(), res, deepCopyObject(out))
	}
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	s.writeObject(w, r, req, http.StatusOK, out)
}

// validateFinalizersOnUpdate rejects both cascade finalizers together, new
// finalizers on an object being deleted, and a different
// deletionGracePeriodSeconds, as kube-apiserver does. kube-apiserver checks object metadata twice on update (generic and
// type-specific validation), so it reports each error twice.
func validateFinalizersOnUpdate(obj, old object) field.ErrorList {
	if errs := gcFinalizerErrors(obj); len(errs) > 0 {
		return append(errs, errs...)
	}
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

// commitUpdate writes obj over live, the stored object it was computed
// from. An object being deleted whose last finalizer is gone is deleted
// instead, unless it is still in its grace period (a pod, which its kubelet
// deletes). As kube-apiserver, a write that would store the bytes already
// stored stores nothing: the answer keeps live's resourceVersion and no
// watcher hears of it, so a client that writes back what it read does not
// wake every informer.
func (s *Server) commitUpdate(ctx context.Context, res *catalog.Resource, ns, name string, obj object, live store.KeyValue, isDryRun bool) (object, error) {
	expected := live.ModRevision
	key := objectKey(res, ns, name)
	if deleting(obj) && !hasFinalizers(res, obj) && int64Of(metadata(obj)["deletionGracePeriodSeconds"]) == 0 {
		if !isDryRun {
			if _, _, err := s.store.Delete(ctx, key, expected); err != nil {
				return nil, storeError(res, name, err)
			}
			s.journalWrite(ctx, res, key, expected, obj, true)
		}
		// kube-apiserver answers with the object at the revision it read.
		metadata(obj)["resourceVersion"] = strconv.FormatInt(expected, 10)
		return obj, nil
	}
	value, err := encodeForStorage(res, obj)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if isDryRun || bytes.Equal(value, live.Value) {
		// A dry run answers with the revision it would replace.
		metadata(obj)["resourceVersion"] = strconv.FormatInt(expected, 10)
		return obj, nil
	}
	rev, err := s.store.Update(ctx, key, value, expected)
	if err != nil {
		return nil, storeError(res, name, err)
	}
	metadata(obj)["resourceVersion"] = strconv.FormatInt(rev, 10)
	if deleting(obj) {
		s.journalWrite(ctx, res, key, expected, obj, false)
	}
	return obj, nil
}

// hasFinalizers reports whether anything still holds obj back from deletion:
// metadata.finalizers, and for a namespace its spec.finalizers.
func hasFinalizers(res *catalog.Resource, obj object) bool {
	if len(finalizers(obj)) > 0 {
		return true
	}
	if res.Group == "" && res.Resource == "namespaces" {
		spec, _ := obj["spec"].(map[string]any)
		list, _ := spec["finalizers"].([]any)
		return len(list) > 0
	}
	return false
}
