package server

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/server/catalog"
	"kubeplay/server/encoding"
	"kubeplay/store"
)

// maxBodyBytes is kube-apiserver's limit on a request body (3 MiB).
const maxBodyBytes = 3 << 20

// collectionPrefix is the store key prefix of a resource's objects in ns
// (all namespaces when ns is "").
func collectionPrefix(r *catalog.Resource, ns string) string {
	p := "/registry/" + catalog.StorageOf(r).Prefix + "/"
	if r.Namespaced && ns != "" {
		p += ns + "/"
	}
	return p
}

func objectKey(r *catalog.Resource, ns, name string) string {
	if !r.Namespaced {
		return collectionPrefix(r, "") + name
	}
	return collectionPrefix(r, ns) + name
}

// decodeStored turns a stored value into the object served as r, with its
// resourceVersion filled in from the store revision.
func decodeStored(r *catalog.Resource, kv store.KeyValue) (object, error) {
	obj, err := encoding.DecodeObject(encoding.JSON, kv.Value)
	if err != nil {
		return nil, fmt.Errorf("stored object %s is corrupt: %w", kv.Key, err)
	}
	fromStorage(r, obj)
	metadata(obj)["resourceVersion"] = strconv.FormatInt(kv.ModRevision, 10)
	return obj, nil
}

// encodeForStorage serialises obj in r's storage version, without the
// resourceVersion (which is the store's revision).
func encodeForStorage(r *catalog.Resource, obj object) ([]byte, error) {
	stored := toStorage(r, obj)
	delete(metadata(stored), "resourceVersion")
	return encoding.MarshalObject(stored)
}

// readBody reads and decodes a request body into an object of kind r.Kind.
func readBody(r *http.Request, res *catalog.Resource) (object, error) {
	mt, err := encoding.BodyMediaType(r.Header.Get("Content-Type"))
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes+1))
	if err != nil {
		return nil, encoding.BadRequest("unable to read the request body: %v", err)
	}
	if len(body) > maxBodyBytes {
		return nil, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("limit is %d", maxBodyBytes))
	}
	obj, err := encoding.DecodeObject(mt, body)
	if err != nil {
		return nil, encoding.BadRequest("the object provided is unrecognized (must be of type %s): couldn't get version/kind; json parse error: %v (%s)", res.Kind, err, truncate(body, 64))
	}
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	if apiVersion == "" {
		apiVersion = res.APIVersion()
	}
	if kind == "" {
		kind = res.Kind
	}
	version := apiVersion[strings.LastIndex(apiVersion, "/")+1:]
	switch {
	case apiVersion != res.APIVersion():
		return nil, encoding.BadRequest("%s in version %q cannot be handled as a %s: no kind %q is registered for version %q in scheme \"pkg/runtime/scheme.go:111\"", kind, version, res.Kind, kind, apiVersion)
	case kind != res.Kind:
		return nil, encoding.BadRequest("%s in version %q cannot be handled as a %s: converting (%s.%s) to (%s.%s): unknown conversion", kind, version, res.Kind, version, kind, internalPackage(res.Group), res.Kind)
	}
	obj["apiVersion"], obj["kind"] = apiVersion, kind
	if md, ok := obj["metadata"]; ok && md != nil {
		if _, ok := md.(map[string]any); !ok {
			return nil, encoding.BadRequest("the object provided is unrecognized (must be of type %s): metadata must be an object", res.Kind)
		}
	}
	return obj, nil
}

func truncate(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	return string(b[:n]) + "..."
}

// dryRun reports whether the request asks not to persist (?dryRun=All), or
// returns a 400 for an unknown value.
func dryRun(r *http.Request) (bool, error) {
	values := r.URL.Query()["dryRun"]
	for _, v := range values {
		if v != "All" {
			return false, encoding.BadRequest("Invalid dry run: %q, only \"All\" is supported", v)
		}
	}
	return len(values) > 0, nil
}

// storeError turns a store error on an object into the Status kube-apiserver gives.
func storeError(r *catalog.Resource, name string, err error) error {
	gr := r.GroupResource()
	switch {
	case errors.Is(err, store.ErrNotFound):
		return apierrors.NewNotFound(gr, name)
	case errors.Is(err, store.ErrExists):
		return apierrors.NewAlreadyExists(gr, name)
	case errors.Is(err, store.ErrConflict):
		return apierrors.NewConflict(gr, name, errors.New(registryConflictMessage))
	case errors.Is(err, store.ErrCompacted):
		return apierrors.NewResourceExpired("The resourceVersion for the provided watch is too old.")
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return apierrors.NewTimeoutError("request did not complete within requested timeout - context canceled", 0)
	}
	return apierrors.NewInternalError(err)
}

const registryConflictMessage = "the object has been modified; please apply your changes to the latest version and try again"

func (s *Server) get(w http.ResponseWriter, r *http.Request, req *request) {
	obj, _, err := s.getObject(r.Context(), req.res, req.namespace, req.name)
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	encoding.Write(w, r, http.StatusOK, obj)
}

func (s *Server) getObject(ctx context.Context, res *catalog.Resource, ns, name string) (object, store.KeyValue, error) {
	kv, err := s.store.Get(ctx, objectKey(res, ns, name), 0)
	if err != nil {
		return nil, kv, storeError(res, name, err)
	}
	obj, err := decodeStored(res, kv)
	if err != nil {
		return nil, kv, apierrors.NewInternalError(err)
	}
	return obj, kv, nil
}

// requireNamespace checks that the namespace of a new object exists and is
// not being deleted.
func (s *Server) requireNamespace(ctx context.Context, res *catalog.Resource, ns, name string) error {
	nsRes := s.catalog.Lookup(namespacesGVR)
	obj, _, err := s.getObject(ctx, nsRes, "", ns)
	if err != nil {
		return err
	}
	if deleting(obj) {
		return apierrors.NewForbidden(res.GroupResource(), name,
			fmt.Errorf("unable to create new content in namespace %s because it is being terminated", ns))
	}
	return nil
}

func deleting(obj object) bool { return metadata(obj)["deletionTimestamp"] != nil }

func (s *Server) create(w http.ResponseWriter, r *http.Request, req *request) {
	obj, code, err := s.createObject(r, req)
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
	if len(errs) > 0 {
		return nil, 0, errInvalid(res, name, errs)
	}
	if res.Namespaced {
		if err := s.requireNamespace(r.Context(), res, req.namespace, name); err != nil {
			return nil, 0, err
		}
	}
	s.prepareForCreate(res, obj)
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

func (s *Server) update(w http.ResponseWriter, r *http.Request, req *request) {
	res := req.res
	isDryRun, err := dryRun(r)
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	obj, err := readBody(r, res)
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
	old, kv, err := s.getObject(r.Context(), res, req.namespace, req.name)
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	expected := kv.ModRevision
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
	prepareForUpdate(res, obj, old)
	if errs := validateFinalizersOnUpdate(obj, old); len(errs) > 0 {
		encoding.WriteError(w, r, errInvalid(res, req.name, errs))
		return
	}
	out, err := s.commitUpdate(r.Context(), res, req.namespace, req.name, obj, expected, isDryRun)
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	encoding.Write(w, r, http.StatusOK, out)
}

// validateFinalizersOnUpdate rejects new finalizers on an object being
// deleted, as kube-apiserver does.
func validateFinalizersOnUpdate(obj, old object) field.ErrorList {
	if !deleting(old) {
		return nil
	}
	had := map[string]bool{}
	for _, f := range finalizers(old) {
		had[f] = true
	}
	var errs field.ErrorList
	for _, f := range finalizers(obj) {
		if !had[f] {
			errs = append(errs, field.Forbidden(field.NewPath("metadata", "finalizers"),
				fmt.Sprintf("no new finalizers can be added if the object is being deleted, found new finalizers []string{%q}", f)))
		}
	}
	return errs
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

// commitUpdate writes obj over the object at revision expected. An object
// being deleted whose last finalizer is gone is deleted instead.
func (s *Server) commitUpdate(ctx context.Context, res *catalog.Resource, ns, name string, obj object, expected int64, isDryRun bool) (object, error) {
	if isDryRun {
		return obj, nil
	}
	key := objectKey(res, ns, name)
	if deleting(obj) && !hasFinalizers(res, obj) {
		rev, _, err := s.store.Delete(ctx, key, expected)
		if err != nil {
			return nil, storeError(res, name, err)
		}
		metadata(obj)["resourceVersion"] = strconv.FormatInt(rev, 10)
		return obj, nil
	}
	value, err := encodeForStorage(res, obj)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	rev, err := s.store.Update(ctx, key, value, expected)
	if err != nil {
		return nil, storeError(res, name, err)
	}
	metadata(obj)["resourceVersion"] = strconv.FormatInt(rev, 10)
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

// deleteOptions reads DeleteOptions from the body or the query.
func deleteOptions(r *http.Request) (*metav1.DeleteOptions, error) {
	opts := &metav1.DeleteOptions{}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes))
	if err != nil {
		return nil, encoding.BadRequest("unable to read the request body: %v", err)
	}
	if len(bytes.TrimSpace(body)) > 0 {
		mt, err := encoding.BodyMediaType(r.Header.Get("Content-Type"))
		if err != nil {
			return nil, err
		}
		m, err := encoding.DecodeObject(mt, body)
		if err != nil {
			return nil, encoding.BadRequest("%v", err)
		}
		j, _ := json.Marshal(m)
		if err := json.Unmarshal(j, opts); err != nil {
			return nil, encoding.BadRequest("%v", err)
		}
	}
	q := r.URL.Query()
	if v := q.Get("gracePeriodSeconds"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, encoding.BadRequest("%v", err)
		}
		opts.GracePeriodSeconds = &n
	}
	if v := q.Get("propagationPolicy"); v != "" {
		p := metav1.DeletionPropagation(v)
		opts.PropagationPolicy = &p
	}
	if v := q["dryRun"]; len(v) > 0 {
		opts.DryRun = v
	}
	for _, v := range opts.DryRun {
		if v != "All" {
			return nil, encoding.BadRequest("Invalid dry run: %q, only \"All\" is supported", v)
		}
	}
	return opts, nil
}

func (s *Server) delete(w http.ResponseWriter, r *http.Request, req *request) {
	opts, err := deleteOptions(r)
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	code, out, err := s.deleteObject(r.Context(), req.res, req.namespace, req.name, opts)
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	encoding.Write(w, r, code, out)
}

// deleteObject deletes one object. An object with finalizers is only marked
// (deletionTimestamp set) and returned; otherwise it is removed and a
// Success Status returned, as kube-apiserver does.
func (s *Server) deleteObject(ctx context.Context, res *catalog.Resource, ns, name string, opts *metav1.DeleteOptions) (int, any, error) {
	obj, kv, err := s.getObject(ctx, res, ns, name)
	if err != nil {
		return 0, nil, err
	}
	md := metadata(obj)
	if pre := opts.Preconditions; pre != nil {
		if pre.UID != nil && string(*pre.UID) != str(md, "uid") {
			return 0, nil, apierrors.NewConflict(res.GroupResource(), name, fmt.Errorf("the UID in the precondition (%s) does not match the UID in record (%s). The object might have been deleted and then recreated", *pre.UID, str(md, "uid")))
		}
		if pre.ResourceVersion != nil && *pre.ResourceVersion != str(md, "resourceVersion") {
			return 0, nil, apierrors.NewConflict(res.GroupResource(), name, fmt.Errorf("the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%s). The object might have been modified", *pre.ResourceVersion, str(md, "resourceVersion")))
		}
	}
	isDryRun := len(opts.DryRun) > 0
	if res.Group == "" && res.Resource == "namespaces" {
		if st, ok := obj["status"].(map[string]any); ok {
			st["phase"] = "Terminating"
		}
	}
	if hasFinalizers(res, obj) {
		if !deleting(obj) {
			md["deletionTimestamp"] = s.now().UTC().Format("2006-01-02T15:04:05Z")
			md["deletionGracePeriodSeconds"] = int64(0)
		}
		out, err := s.commitUpdate(ctx, res, ns, name, obj, kv.ModRevision, isDryRun)
		if err != nil {
			return 0, nil, err
		}
		return http.StatusOK, out, nil
	}
	if !isDryRun {
		if _, _, err := s.store.Delete(ctx, objectKey(res, ns, name), kv.ModRevision); err != nil {
			return 0, nil, storeError(res, name, err)
		}
	}
	if res.Group == "" && res.Resource == "namespaces" {
		return http.StatusOK, obj, nil
	}
	return http.StatusOK, &metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusSuccess,
		Details: &metav1.StatusDetails{
			Name: name, Group: res.Group, Kind: res.Resource, UID: typesUID(str(md, "uid")),
		},
	}, nil
}

func (s *Server) deleteCollection(w http.ResponseWriter, r *http.Request, req *request) {
	opts, err := deleteOptions(r)
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	sel, err := parseSelectors(r, req.res)
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	list, err := s.listObjects(r.Context(), req.res, req.namespace, sel, listOptions{})
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	deleted := []object{}
	for _, item := range list.items {
		md := metadata(item)
		_, _, err := s.deleteObject(r.Context(), req.res, str(md, "namespace"), str(md, "name"), opts)
		if apierrors.IsNotFound(err) {
			continue // deleted meanwhile
		}
		if err != nil {
			encoding.WriteError(w, r, err)
			return
		}
		deleted = append(deleted, item)
	}
	list.items = deleted
	encoding.Write(w, r, http.StatusOK, list.encode(req.res))
}

// finalizeNamespace is PUT /api/v1/namespaces/{name}/finalize: it replaces
// the namespace's spec.finalizers and, if the namespace is being deleted and
// nothing holds it any more, removes it.
func (s *Server) finalizeNamespace(w http.ResponseWriter, r *http.Request, req *request) {
	if r.Method != http.MethodPut {
		encoding.WriteError(w, r, errMethodNotAllowed())
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
	out, err := s.commitUpdate(r.Context(), req.res, "", req.name, old, kv.ModRevision, false)
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	encoding.Write(w, r, http.StatusOK, out)
}

// continueToken is the state a paginated list resumes from; encoded as
// kube-apiserver encodes it (base64 of JSON), so clients treat it as opaque.
type continueToken struct {
	APIVersion      string `json:"v"`
	ResourceVersion int64  `json:"rv"`
	StartKey        string `json:"start"`
}

func encodeContinue(rev int64, nextKey string) string {
	b, _ := json.Marshal(continueToken{APIVersion: "meta.k8s.io/v1", ResourceVersion: rev, StartKey: nextKey})
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeContinue(token string) (continueToken, error) {
	var t continueToken
	b, err := base64.RawURLEncoding.DecodeString(token)
	if err == nil {
		err = json.Unmarshal(b, &t)
	}
	if err != nil || t.APIVersion != "meta.k8s.io/v1" || t.ResourceVersion <= 0 || strings.Contains(t.StartKey, "..") {
		return continueToken{}, encoding.BadRequest("continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)")
	}
	return t, nil
}
