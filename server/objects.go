package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
	if r.Custom != nil && r.Custom.StorageVersion != r.Version {
		// Stored in another version, what that version's schema does not
		// know is dropped, in obj too: as kube-apiserver's, the answer is
		// what was stored (after managedFields recorded what was sent).
		r.Custom.StorageSchema.Prune(obj)
	}
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
	body, err := readBytes(r)
	if err != nil {
		return nil, err
	}
	obj, err := encoding.DecodeObject(mt, body)
	var yamlErr *encoding.YAMLSyntaxError
	switch {
	case errors.As(err, &yamlErr):
		return nil, encoding.BadRequest("the object provided is unrecognized (must be of type %s): %v (%s)", res.Kind, err, excerpt(body))
	case err != nil:
		return nil, encoding.BadRequest("the object provided is unrecognized (must be of type %s): couldn't get version/kind; json parse error: %v (%s)", res.Kind, err, excerpt(body))
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
	case apiVersion != res.APIVersion() && res.Custom != nil:
		return nil, encoding.BadRequest("the API version in the data (%s) does not match the expected API version (%s)", apiVersion, res.APIVersion())
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

// readBytes reads a request body of at most maxBodyBytes.
func readBytes(r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes+1))
	if err != nil {
		return nil, encoding.BadRequest("unable to read the request body: %v", err)
	}
	if len(body) > maxBodyBytes {
		return nil, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("limit is %d", maxBodyBytes))
	}
	return body, nil
}

// excerpt shows the start of a body that did not decode as kube-apiserver
// does: the text of what looks like a JSON object, the bytes in hex (30 at
// most) of anything else.
func excerpt(body []byte) string {
	if len(body) > 0 && body[0] == '{' {
		return truncate(body, 64)
	}
	const max = 30
	if len(body) > max {
		return fmt.Sprintf("%x ...", body[:max])
	}
	return fmt.Sprintf("%x", body)
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

func (s *Server) getObject(ctx context.Context, res *catalog.Resource, ns, name string) (object, store.KeyValue, error) {
	kv, err := s.store.Get(ctx, objectKey(res, ns, name), 0)
	if err != nil {
		return nil, kv, storeError(res, name, err)
	}
	obj, err := decodeStored(res, kv)
	if err != nil {
		return nil, kv, s.corruptError(kv, err)
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
		err := apierrors.NewForbidden(res.GroupResource(), name,
			fmt.Errorf("unable to create new content in namespace %s because it is being terminated", ns))
		err.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: "NamespaceTerminating", Field: "metadata.namespace", Message: "namespace " + ns + " is being terminated"}}
		return err
	}
	return nil
}

func deleting(obj object) bool { return metadata(obj)["deletionTimestamp"] != nil }
