package server

import (
	"context"
	"encoding/json"
	"errors"
	"mime"
	"net/http"
	"strconv"
	"strings"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/mergepatch"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"kubeplay/server/catalog"
	"kubeplay/server/encoding"
	"kubeplay/server/fieldmanager"
	"kubeplay/server/typed"
	"kubeplay/store"
)

// The patch formats of PATCH request bodies.
const (
	jsonPatchType      = "application/json-patch+json"
	mergePatchType     = "application/merge-patch+json"
	strategicPatchType = "application/strategic-merge-patch+json"
	applyPatchType     = "application/apply-patch+yaml"
)

// maxPatchAttempts bounds how often a patch is recomputed when the object
// changed between reading and writing it, as kube-apiserver retries.
const maxPatchAttempts = 5

// patchRequest is a PATCH after its options were checked.
type patchRequest struct {
	*request
	// kind describes the patched objects: req.res, or autoscaling/v1 Scale
	// for the scale subresource.
	kind      *catalog.Resource
	patchType string
	body      []byte
	manager   string
	force     bool
	dryRun    bool
}

func (s *Server) patch(w http.ResponseWriter, r *http.Request, req *request) {
	obj, code, err := s.patchObject(r, req)
	writeWarnings(w, req)
	if err == nil && !dryRunRequested(r) {
		err = s.afterWrite(r.Context(), req.res, deepCopyObject(obj))
	}
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	encoding.Write(w, r, code, obj)
}

func (s *Server) patchObject(r *http.Request, req *request) (object, int, error) {
	pr := &patchRequest{request: req, kind: req.res}
	if req.subresource == "scale" {
		pr.kind = scaleKind
	}
	var cborApply bool
	pr.patchType, cborApply = patchTypeOf(r)
	opts, err := writeOptionsOf(r, "PatchOptions", pr.patchType)
	if err != nil {
		return nil, 0, err
	}
	pr.manager, pr.dryRun, pr.force = opts.manager, opts.dryRun, opts.force
	if pr.body, err = readBytes(r); err != nil {
		return nil, 0, err
	}
	if cborApply {
		if pr.body, err = encoding.CBORToJSON(pr.body); err != nil {
			return nil, 0, encoding.BadRequest("error decoding YAML: %v", err)
		}
	}
	for attempt := 1; ; attempt++ {
		try := s.tryPatch
		if req.subresource == "scale" {
			try = s.tryPatchScale
		}
		obj, code, err := try(r.Context(), pr)
		if attempt < maxPatchAttempts && errors.Is(err, errRetry) {
			continue
		}
		if errors.Is(err, errRetry) {
			err = storeError(req.res, req.name, store.ErrConflict)
		}
		return obj, code, err
	}
}

// patchTypeOf is the patch format of r's body, which serveResource checked:
// an apply configuration in CBOR is applied as the JSON it stands for
// (cbor reports it).
func patchTypeOf(r *http.Request) (patchType string, cbor bool) {
	patchType, _, _ = mime.ParseMediaType(r.Header.Get("Content-Type"))
	if patchType == encoding.ApplyPatchCBOR {
		return applyPatchType, true
	}
	return patchType, false
}

// checkPatchType answers 415 for a patch format kube-apiserver does not
// read (an apply configuration in CBOR only with the CBORServingAndStorage
// gate on). kube-apiserver checks it before negotiating the answer: the
// 415 comes before a 406, and never in CBOR.
func (s *Server) checkPatchType(r *http.Request) error {
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch mt {
	case jsonPatchType, mergePatchType, strategicPatchType, applyPatchType:
		return nil
	case encoding.ApplyPatchCBOR:
		if s.enabled(CBORServingAndStorage) {
			return nil
		}
	}
	return errUnsupportedMediaType()
}

// errRetry says the object changed while a patch was computed on it.
var errRetry = errors.New("object changed during the patch")

// tryPatch applies a patch to the current object and writes the result.
func (s *Server) tryPatch(ctx context.Context, pr *patchRequest) (object, int, error) {
	res := pr.res
	pr.warnings = nil
	live, kv, err := s.getLive(ctx, res, pr.namespace, pr.name)
	creating := false
	switch {
	case err == nil:
	case apierrors.IsNotFound(err) && pr.patchType == applyPatchType && pr.subresource == "":
		creating = true // Server-Side Apply creates what does not exist
		live = fieldmanager.NewObject(res.GroupVersionKind())
	default:
		return nil, 0, err
	}
	obj, err := s.patched(pr, live)
	if err != nil {
		return nil, 0, err
	}
	md := metadata(obj)
	if name := str(md, "name"); name != pr.name {
		return nil, 0, encoding.BadRequest("the name of the object (%s) does not match the name on the URL (%s)", name, pr.name)
	}
	if res.Namespaced {
		md["namespace"] = pr.namespace
	} else {
		delete(md, "namespace")
	}
	obj["apiVersion"], obj["kind"] = res.APIVersion(), res.Kind
	if pr.subresource == "status" && !creating {
		obj = statusOnly(res, obj, live)
	}
	if creating {
		return s.createPatched(ctx, pr, obj)
	}
	if rv := str(md, "resourceVersion"); rv != "" && rv != strconv.FormatInt(kv.ModRevision, 10) {
		return nil, 0, storeError(res, pr.name, store.ErrConflict)
	}
	if uid := str(md, "uid"); uid != str(metadata(live), "uid") {
		return nil, 0, errUIDChanged(res, pr.name, uid)
	}
	if err := applyDefaults(res, obj); err != nil {
		return nil, 0, err
	}
	if err := s.admitSchema(ctx, pr.request, obj, live); err != nil {
		return nil, 0, err
	}
	if err := s.confirmNoEscalation(ctx, pr.request, obj, live); err != nil {
		return nil, 0, err
	}
	if errs, err := validateUpdate(ctx, pr.request, obj, live); err != nil {
		return nil, 0, err
	} else if len(errs) > 0 {
		return nil, 0, errInvalid(res, pr.name, errs)
	}
	obj = prepareUpdate(pr.request, obj, live)
	if pr.patchType != applyPatchType {
		if obj, err = s.trackUpdate(res, pr.subresource, live, obj, pr.manager); err != nil {
			return nil, 0, err
		}
	}
	if err := s.admitPolicies(ctx, pr.request, obj, live, pr.dryRun); err != nil {
		return nil, 0, err
	}
	if pr.subresource == "" {
		if err := s.keepServiceAddresses(ctx, res, pr.namespace, pr.name, obj, live, pr.dryRun); err != nil {
			return nil, 0, err
		}
	}
	out, err := s.commitUpdate(ctx, res, pr.namespace, pr.name, obj, kv, pr.dryRun)
	if apierrors.IsConflict(err) {
		// Recomputed on the new object, a patch that named the old
		// resourceVersion fails the check above.
		return nil, 0, errRetry
	}
	if err != nil {
		return nil, 0, err
	}
	return out, http.StatusOK, nil
}

// createPatched stores the object an apply created.
func (s *Server) createPatched(ctx context.Context, pr *patchRequest, obj object) (object, int, error) {
	res := pr.res
	if res.Namespaced {
		if err := s.requireNamespace(ctx, res, pr.namespace, pr.name); err != nil {
			return nil, 0, err
		}
	}
	if errs := validateName(res, pr.name, field.NewPath("metadata", "name")); len(errs) > 0 {
		return nil, 0, errInvalid(res, pr.name, errs)
	}
	if err := applyDefaults(res, obj); err != nil {
		return nil, 0, err
	}
	if err := s.admitSchema(ctx, pr.request, obj, nil); err != nil {
		return nil, 0, err
	}
	if err := s.admitCreate(ctx, pr.request, obj, pr.dryRun); err != nil {
		return nil, 0, err
	}
	if err := s.allocateServiceAddresses(ctx, res, obj, pr.dryRun); err != nil {
		return nil, 0, err
	}
	if pr.dryRun {
		return obj, http.StatusCreated, nil
	}
	value, err := encodeForStorage(res, obj)
	if err != nil {
		return nil, 0, apierrors.NewInternalError(err)
	}
	rev, err := s.store.Create(ctx, objectKey(res, pr.namespace, pr.name), value)
	if errors.Is(err, store.ErrExists) {
		return nil, 0, errRetry
	}
	if err != nil {
		return nil, 0, storeError(res, pr.name, err)
	}
	metadata(obj)["resourceVersion"] = strconv.FormatInt(rev, 10)
	return obj, http.StatusCreated, nil
}

// patched returns live with the patch applied.
func (s *Server) patched(pr *patchRequest, live object) (object, error) {
	if pr.patchType == applyPatchType {
		return s.applyConfiguration(pr, live)
	}
	return mergePatch(pr, live)
}

// applyConfiguration merges a Server-Side Apply configuration into live.
func (s *Server) applyConfiguration(pr *patchRequest, live object) (object, error) {
	applied, err := decodeApplied(pr, false)
	if err != nil {
		return nil, err
	}
	return s.applyDecoded(pr, live, applied)
}

// decodeApplied decodes the configuration of an apply, which must be of
// the patched kind and, when exactVersion, of its group version too.
func decodeApplied(pr *patchRequest, exactVersion bool) (map[string]any, error) {
	var applied map[string]any
	if err := yaml.Unmarshal(pr.body, &applied, func(d *json.Decoder) *json.Decoder { d.UseNumber(); return d }); err != nil {
		return nil, encoding.BadRequest("error decoding YAML: %v", err)
	}
	if duplicates := encoding.YAMLDuplicates(pr.body); len(duplicates) > 0 {
		switch pr.fieldValidation {
		case "Strict":
			return nil, encoding.BadRequest("error strict decoding YAML: error converting YAML to JSON: %v", duplicates)
		case "Ignore":
		default:
			pr.warnings = append(pr.warnings, duplicates...)
		}
	}
	if applied == nil {
		applied = map[string]any{}
	}
	apiVersion, _ := applied["apiVersion"].(string)
	kind, _ := applied["kind"].(string)
	gv, _ := schema.ParseGroupVersion(apiVersion)
	if kind != pr.kind.Kind || exactVersion && gv != pr.kind.GroupVersionKind().GroupVersion() {
		return nil, encoding.BadRequest("invalid object type: %v", gv.WithKind(kind))
	}
	return applied, nil
}

// applyDecoded merges a decoded apply configuration into live.
func (s *Server) applyDecoded(pr *patchRequest, live, applied object) (object, error) {
	f, err := s.fieldManager(pr.kind, pr.subresource)
	if err != nil {
		return nil, err
	}
	obj, err := fieldmanager.Apply(f, live, applied, pr.manager, pr.force)
	var status apierrors.APIStatus
	if err != nil && !errors.As(err, &status) {
		// kube-apiserver passes the field manager's own errors (a field
		// not in the schema, say) through.
		return nil, errBare(err)
	}
	return obj, err
}

// errBare answers an error kube-apiserver has no Status for. It answers a
// 500 with the error's text; these are the client's mistakes, so kubeplay
// answers a 400 with the same text.
func errBare(err error) error {
	return encoding.BadRequest("%v", err)
}

// errBareInternal is a 500 Status with a message and nothing else, as
// kube-apiserver answers the errors it does not classify.
func errBareInternal(msg string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: http.StatusInternalServerError, Message: msg}}
}

// strategicPatchError sorts the errors of a strategic merge patch as
// kube-apiserver does: a malformed patch is a 400, a patch the object's
// shape cannot take a 422, anything else (a list item without its merge
// key, say) a bare error.
func strategicPatchError(err error) error {
	switch {
	case errors.Is(err, mergepatch.ErrBadJSONDoc), errors.Is(err, mergepatch.ErrBadPatchFormatForPrimitiveList),
		errors.Is(err, mergepatch.ErrBadPatchFormatForRetainKeys), errors.Is(err, mergepatch.ErrBadPatchFormatForSetElementOrderList),
		errors.Is(err, mergepatch.ErrUnsupportedStrategicMergePatchFormat):
		return encoding.BadRequest("%v", err)
	case errors.Is(err, mergepatch.ErrNoListOfLists), errors.Is(err, mergepatch.ErrPatchContentNotMatchRetainKeys):
		return apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "", schema.GroupResource{}, "", err.Error(), 0, false)
	}
	return errBare(err)
}

// mergePatch applies a JSON, merge or strategic merge patch to live.
func mergePatch(pr *patchRequest, live object) (object, error) {
	current, err := encoding.MarshalObject(live)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if pr.patchType == strategicPatchType {
		return strategicMergePatch(pr, current)
	}
	patched, err := jsonOrMergePatch(pr.patchType, current, pr.body)
	if err != nil {
		return nil, err
	}
	obj, err := encoding.DecodeObject(encoding.JSON, patched)
	if err != nil {
		return nil, encoding.BadRequest("%v", err)
	}
	if pr.kind.Custom != nil {
		if err := customPatchFieldErrors(pr, obj); err != nil {
			return nil, err
		}
	}
	return obj, nil
}

// customPatchFieldErrors applies fieldValidation to a JSON or merge patch
// of a custom object. kube-apiserver decodes the patched object strictly:
// with Strict, the keys a merge patch gives twice and the unknown fields of
// the result are a 422 that quotes the patched object; with Warn, the
// duplicates are warned of here, the unknown fields by admitSchema.
func customPatchFieldErrors(pr *patchRequest, obj object) error {
	var duplicates []string
	if pr.patchType == mergePatchType {
		duplicates = typed.Duplicates(pr.body)
	}
	switch pr.fieldValidation {
	case "Ignore":
		return nil
	case "Strict":
		errs := append(duplicates, unknownFields(pr.kind.Custom.Schema.Prune(deepCopyObject(obj)))...)
		if len(errs) == 0 {
			return nil
		}
		patched, err := json.Marshal(obj)
		if err != nil {
			return apierrors.NewInternalError(err)
		}
		return apierrors.NewInvalid(schema.GroupKind{}, "", field.ErrorList{
			field.Invalid(field.NewPath("patch"), string(patched), "strict decoding error: "+strings.Join(errs, ", "))})
	}
	pr.warnings = append(pr.warnings, duplicates...)
	return nil
}

// jsonOrMergePatch applies a JSON patch or a JSON merge patch to a
// document.
func jsonOrMergePatch(patchType string, current, patch []byte) ([]byte, error) {
	switch patchType {
	case jsonPatchType:
		p, err := jsonpatch.DecodePatch(patch)
		if err != nil {
			return nil, encoding.BadRequest("error decoding patch: %v", err)
		}
		patched, err := p.Apply(current)
		if err != nil {
			return nil, errPatchInvalid()
		}
		return patched, nil
	case mergePatchType:
		if err := json.Unmarshal(patch, new(any)); err != nil {
			return nil, encoding.BadRequest("error decoding patch: %v", err)
		}
		patched, err := jsonpatch.MergePatch(current, patch)
		if err != nil {
			return nil, encoding.BadRequest("%v", err)
		}
		return patched, nil
	}
	return nil, errCustomMediaType()
}

// strategicMergePatch applies a strategic merge patch, with the merge keys
// and strategies of the type's OpenAPI schema.
func strategicMergePatch(pr *patchRequest, current []byte) (object, error) {
	var patch map[string]any
	if err := json.Unmarshal(pr.body, &patch); err != nil {
		return nil, encoding.BadRequest("%v", err)
	}
	schemas, err := fieldmanager.Schemas()
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	defs, err := fieldmanager.Definitions()
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	def, ok := defs[pr.kind.GroupVersionKind()]
	if !ok {
		return nil, errCustomMediaType() // custom resources have no patch strategies
	}
	var base map[string]any
	if err := json.Unmarshal(current, &base); err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	meta := strategicpatch.PatchMetaFromOpenAPIV3{SchemaList: schemas, Schema: schemas[def]}
	out, err := strategicpatch.StrategicMergeMapPatchUsingLookupPatchMeta(base, patch, meta)
	if err != nil {
		return nil, strategicPatchError(err)
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	return encoding.DecodeObject(encoding.JSON, b)
}

// errPatchInvalid is kube-apiserver's answer to a JSON patch that cannot be
// applied (a failed test, a missing path, an unknown operation): a 422
// without details.
func errPatchInvalid() error {
	return apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "", schema.GroupResource{}, "", "", 0, false)
}

// errCustomMediaType is the 415 for a patch type custom resources do not
// support.
func errCustomMediaType() error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusUnsupportedMediaType, Reason: metav1.StatusReasonUnsupportedMediaType,
		Message: "the body of the request was in an unknown format - accepted media types include: " + jsonPatchType + ", " + mergePatchType + ", " + applyPatchType,
	}}
}

func errUnsupportedMediaType() error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusUnsupportedMediaType,
		Reason: metav1.StatusReasonUnsupportedMediaType, Message: "415: Unsupported Media Type", Details: &metav1.StatusDetails{},
	}}
}
