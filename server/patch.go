package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"strings"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/mergepatch"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"kubeplay/server/catalog"
	"kubeplay/server/encoding"
	"kubeplay/server/fieldmanager"
	"kubeplay/server/typed"
)

// The patch formats of PATCH request bodies.
const (
	jsonPatchType      = "application/json-patch+json"
	mergePatchType     = "application/merge-patch+json"
	strategicPatchType = "application/strategic-merge-patch+json"
	applyPatchType     = "application/apply-patch+yaml"
)

// patchRequest is a PATCH after its options were checked.
type patchRequest struct {
	*write
	// kind is the store of the patched objects: req.store, or autoscaling/v1
	// Scale's for the scale subresource.
	kind      *resourceStore
	patchType string
	body      []byte
	force     bool
}

func (s *Server) patch(w http.ResponseWriter, r *http.Request, req *request) {
	obj, code, err := s.patchObject(r, req)
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	s.writeObject(w, r, req, code, obj)
}

func (s *Server) patchObject(r *http.Request, req *request) (object, int, error) {
	patchType, cborApply := patchTypeOf(r)
	opts, err := writeOptionsOf(r, "PatchOptions", patchType)
	if err != nil {
		return nil, 0, err
	}
	applies := patchType == applyPatchType
	pr := &patchRequest{
		write:     &write{request: req, manager: opts.manager, dryRun: opts.dryRun, applied: applies, createsMissing: applies},
		kind:      req.store,
		patchType: patchType,
		force:     opts.force,
	}
	if req.subresource == "scale" {
		pr.kind = newResourceStore(scaleKind)
	}
	if pr.body, err = readBytes(r); err != nil {
		return nil, 0, err
	}
	if cborApply {
		if pr.body, err = encoding.CBORToJSON(pr.body); err != nil {
			return nil, 0, encoding.BadRequest("error decoding YAML: %v", err)
		}
	}
	if req.subresource == "scale" {
		return s.patchScale(r.Context(), pr)
	}
	return s.reg.updateWith(r.Context(), pr.write, func(live object, rev int64) (object, error) {
		return s.patchedObject(r.Context(), pr, live, rev)
	})
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

// patchedObject is the patch applied to live (to nothing, for an apply
// that creates), checked against it.
func (s *Server) patchedObject(ctx context.Context, pr *patchRequest, live object, rev int64) (object, error) {
	res := pr.res
	creating := live == nil
	if creating {
		live = fieldmanager.NewObject(res.GroupVersionKind()) // Server-Side Apply creates what does not exist
	}
	obj, err := s.patched(ctx, pr, live)
	if err != nil {
		return nil, err
	}
	md := metadata(obj)
	if name := str(md, "name"); name != pr.name {
		return nil, encoding.BadRequest("the name of the object (%s) does not match the name on the URL (%s)", name, pr.name)
	}
	if res.Namespaced {
		md["namespace"] = pr.namespace
	} else {
		delete(md, "namespace")
	}
	obj["apiVersion"], obj["kind"] = res.APIVersion(), res.Kind
	if creating {
		return obj, nil
	}
	if err := checkResourceVersion(pr.write, obj, rev); err != nil {
		return nil, err
	}
	if uid := str(md, "uid"); uid != str(metadata(live), "uid") {
		return nil, pr.store.errUIDChanged(pr.name, uid)
	}
	return obj, nil
}

// patched returns live with the patch applied.
func (s *Server) patched(ctx context.Context, pr *patchRequest, live object) (object, error) {
	if pr.patchType == applyPatchType {
		return s.applyConfiguration(ctx, pr, live)
	}
	return mergePatch(ctx, pr, live)
}

// applyConfiguration merges a Server-Side Apply configuration into live.
func (s *Server) applyConfiguration(ctx context.Context, pr *patchRequest, live object) (object, error) {
	applied, err := decodeApplied(ctx, pr, false)
	if err != nil {
		return nil, err
	}
	return s.applyDecoded(pr, live, applied)
}

// decodeApplied decodes the configuration of an apply, which must be of
// the patched kind and, when exactVersion, of its group version too.
func decodeApplied(ctx context.Context, pr *patchRequest, exactVersion bool) (map[string]any, error) {
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
			warn(ctx, duplicates...)
		}
	}
	if applied == nil {
		applied = map[string]any{}
	}
	apiVersion, _ := applied["apiVersion"].(string)
	kind, _ := applied["kind"].(string)
	gv, _ := schema.ParseGroupVersion(apiVersion)
	if kind != pr.kind.res.Kind || exactVersion && gv != pr.kind.res.GroupVersionKind().GroupVersion() {
		return nil, encoding.BadRequest("invalid object type: %v", gv.WithKind(kind))
	}
	return applied, nil
}

// applyDecoded merges a decoded apply configuration into live.
func (s *Server) applyDecoded(pr *patchRequest, live, applied object) (object, error) {
	f, err := s.reg.fieldManager(pr.kind, pr.subresource)
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
	if err == nil && pr.kind.res.Custom == nil {
		// The merged object becomes the type's Go object, which holds
		// its quantities in canonical form.
		if obj, err = asTyped(pr.kind.res, obj); err != nil {
			return nil, err
		}
		fieldmanager.PlainNumbers(obj) // as the field manager left them
	}
	return obj, err
}

// asTyped is obj as res's Go type holds it.
func asTyped(res *catalog.Resource, obj object) (object, error) {
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	decoded, _, err := decodeAs(res, encoding.JSON, b, "")
	if err != nil {
		return nil, err
	}
	return decoded.Object, nil
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
func mergePatch(ctx context.Context, pr *patchRequest, live object) (object, error) {
	current, err := encoding.MarshalObject(live)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	var patched []byte
	var shown func() string // the patch or patched object a strict error quotes
	var dropped []string    // unknown fields taken out of a strategic patch
	if pr.patchType == strategicPatchType {
		var patch map[string]any
		if patched, patch, dropped, err = strategicMergePatch(pr, current); err != nil {
			return nil, err
		}
		shown = func() string { return fmt.Sprint(patch) }
	} else {
		if patched, err = jsonOrMergePatch(pr.patchType, current, pr.body); err != nil {
			return nil, err
		}
		shown = func() string { return string(patched) }
	}
	obj, err := encoding.DecodeObject(encoding.JSON, patched)
	if err != nil {
		return nil, encoding.BadRequest("%v", err)
	}
	return patchFieldErrors(ctx, pr, patched, obj, shown, dropped)
}

// patchFieldErrors applies fieldValidation to a JSON, merge or strategic
// merge patch. As kube-apiserver decodes the patched object strictly: with
// Strict, the keys a merge or strategic patch gives twice and the unknown
// fields of the result are a 422 quoting the patched object (the patch, for
// a strategic one); with Warn (the default), they are warnings. A custom
// object's unknown fields are warned of by admitSchema.
//
// It returns obj as its type holds it: a built-in object without the
// fields its type does not have.
func patchFieldErrors(ctx context.Context, pr *patchRequest, patched []byte, obj object, shown func() string, dropped []string) (object, error) {
	if pr.subresource == "scale" {
		return obj, nil
	}
	var duplicates, unknown []string
	if pr.patchType != jsonPatchType {
		duplicates = typed.Duplicates(pr.body)
	}
	switch {
	case pr.kind.res.Custom != nil && pr.fieldValidation == "Strict":
		unknown = unknownFields(pr.kind.res.Custom.Schema.Prune(deepCopyObject(obj)))
		b, err := json.Marshal(obj) // a custom object's fields in the order of its map
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		shown = func() string { return string(b) }
	case pr.kind.res.Custom == nil:
		decoded, _, err := decodeAs(pr.kind.res, encoding.JSON, patched, "")
		if err != nil {
			return nil, err
		}
		obj, unknown = decoded.Object, append(dropped, decoded.FieldErrors...)
	}
	errs := append(duplicates, unknown...)
	switch {
	case len(errs) == 0 || pr.fieldValidation == "Ignore":
	case pr.fieldValidation == "Strict":
		return nil, apierrors.NewInvalid(schema.GroupKind{}, "", field.ErrorList{
			field.Invalid(field.NewPath("patch"), shown(), "strict decoding error: "+strings.Join(errs, ", "))})
	default:
		warn(ctx, errs...)
	}
	return obj, nil
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
// and strategies of the type's OpenAPI schema, and returns the patched
// object, the patch as decoded, and the unknown fields it had: they are
// taken out before it is applied (the schema has no strategy for them, and
// the type would drop them from the result), to be reported.
func strategicMergePatch(pr *patchRequest, current []byte) (patched []byte, patch map[string]any, dropped []string, err error) {
	if err := json.Unmarshal(pr.body, &patch); err != nil {
		return nil, nil, nil, encoding.BadRequest("%v", err)
	}
	applied := patch
	if decoded, _, err := decodeAs(pr.kind.res, encoding.JSON, pr.body, ""); err == nil {
		for _, path := range decoded.Unknown {
			if strings.Contains(path, "$") {
				continue // a directive ($patch, $setElementOrder/...), not a field
			}
			if len(dropped) == 0 {
				applied = runtime.DeepCopyJSON(patch)
			}
			deletePath(applied, path)
			dropped = append(dropped, fmt.Sprintf("unknown field %q", path))
		}
	}
	schemas, err := fieldmanager.Schemas()
	if err != nil {
		return nil, nil, nil, apierrors.NewInternalError(err)
	}
	defs, err := fieldmanager.Definitions()
	if err != nil {
		return nil, nil, nil, apierrors.NewInternalError(err)
	}
	def, ok := defs[pr.kind.res.GroupVersionKind()]
	if !ok {
		return nil, nil, nil, errCustomMediaType() // custom resources have no patch strategies
	}
	var base map[string]any
	if err := json.Unmarshal(current, &base); err != nil {
		return nil, nil, nil, apierrors.NewInternalError(err)
	}
	meta := strategicpatch.PatchMetaFromOpenAPIV3{SchemaList: schemas, Schema: schemas[def]}
	out, err := strategicpatch.StrategicMergeMapPatchUsingLookupPatchMeta(base, applied, meta)
	if err != nil {
		return nil, nil, nil, strategicPatchError(err)
	}
	if patched, err = json.Marshal(out); err != nil {
		return nil, nil, nil, apierrors.NewInternalError(err)
	}
	return patched, patch, dropped, nil
}

// deletePath removes the field at path ("spec.containers[0].foo", as
// typed.Result.Unknown spells them) from obj, if it is there.
func deletePath(obj map[string]any, path string) {
	var v any = obj
	segments := strings.Split(path, ".")
	for i, seg := range segments {
		name, rest, _ := strings.Cut(seg, "[")
		m, _ := v.(map[string]any)
		if m == nil {
			return
		}
		if i == len(segments)-1 && rest == "" {
			delete(m, name)
			return
		}
		v = m[name]
		for rest != "" {
			idx, after, _ := strings.Cut(rest, "]")
			n, err := strconv.Atoi(idx)
			l, _ := v.([]any)
			if err != nil || n < 0 || n >= len(l) {
				return
			}
			v, rest = l[n], strings.TrimPrefix(after, "[")
		}
	}
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
