package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"mime"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/internal/jsonmap"
	"kubeplay/server/encoding"
)

// customScale serves the scale subresource of a custom resource: an
// autoscaling/v1 Scale read from and written to the paths its CRD names.
// A write goes through the registry's one update, as the built-in /scale.
func (s *Server) customScale(w http.ResponseWriter, r *http.Request, req *request) {
	res := req.res
	paths := res.Custom.Scale
	view := func(obj object) object {
		return customScaleOf(obj, paths.SpecReplicasPath, paths.StatusReplicasPath, paths.LabelSelectorPath)
	}
	if req.verb == "get" {
		obj, _, err := s.reg.getObject(r.Context(), res, req.namespace, req.name)
		if err != nil {
			encoding.WriteError(w, r, err)
			return
		}
		encoding.Write(w, r, http.StatusOK, view(obj))
		return
	}
	body, err := readBytes(r)
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	opts, err := writeOptionsOf(r, "UpdateOptions", "")
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	// Webhooks and policies see the Scales, old and new; the compute
	// records the managedFields.
	wr := &write{request: req, manager: opts.manager, dryRun: opts.dryRun, applied: true, view: view,
		fromView: func(obj, scale object) {
			if n, ok := jsonmap.Child(scale, "spec")["replicas"]; ok {
				setPath(obj, paths.SpecReplicasPath, int64Of(n))
			}
		}}
	out, _, err := s.reg.updateWith(r.Context(), wr, func(live object, rev int64) (object, error) {
		scale, err := s.newScale(r, req, live, body)
		if err != nil {
			return nil, err
		}
		if err := checkResourceVersion(wr, scale, rev); err != nil {
			return nil, err
		}
		spec, _ := scale["spec"].(map[string]any)
		replicas, ok := spec["replicas"]
		if n := int64Of(replicas); !ok || n < 0 {
			return nil, errInvalid(res, req.name, field.ErrorList{
				field.Invalid(field.NewPath(paths.SpecReplicasPath), n, "should be a non-negative integer")})
		}
		updated := deepCopyObject(live)
		setPath(updated, paths.SpecReplicasPath, int64Of(replicas))
		req.store.prepareForUpdate("scale", updated, live)
		if updated, err = s.reg.trackWrite(wr, live, updated); err != nil {
			return nil, err
		}
		// kube-apiserver records writes through /scale without a time.
		for _, e := range jsonmap.List(metadata(updated), "managedFields") {
			if m, ok := e.(map[string]any); ok && m["subresource"] == "scale" {
				delete(m, "time")
			}
		}
		return updated, nil
	})
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	encoding.Write(w, r, http.StatusOK, view(out))
}

// newScale is the Scale a PUT or a JSON or merge PATCH asks for.
func (s *Server) newScale(r *http.Request, req *request, obj object, body []byte) (object, error) {
	if req.verb == "update" {
		scale, err := encoding.DecodeObject(encoding.JSON, body)
		if err != nil {
			return nil, encoding.BadRequest("%v", err)
		}
		// Unknown and duplicate fields: kube-apiserver's strict decoder
		// fails to find the Scale type.
		if decoded, _, err := decodeAs(scaleKind, encoding.JSON, body, ""); err == nil && len(decoded.FieldErrors) > 0 {
			switch req.fieldValidation {
			case "Strict":
				return nil, encoding.BadRequest(`no kind is registered for the type v1.Scale in scheme "pkg/runtime/scheme.go:111"`)
			case "Ignore":
			default:
				warn(r.Context(), decoded.FieldErrors...)
			}
		}
		return scale, nil
	}
	paths := req.res.Custom.Scale
	current, err := json.Marshal(customScaleOf(obj, paths.SpecReplicasPath, paths.StatusReplicasPath, paths.LabelSelectorPath))
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt == applyPatchType {
		return nil, s.applyCustomScale(r, req, obj, body)
	}
	patched, err := jsonOrMergePatch(mt, current, body)
	if err != nil {
		return nil, err
	}
	return encoding.DecodeObject(encoding.JSON, patched)
}

// applyCustomScale is Server-Side Apply of a custom object's Scale, which
// kube-apiserver 1.35 cannot complete: its field manager converts the Scale
// to the custom resource's version and fails. What it answers depends on
// how far it gets: a wrong kind is a 400; with no manager of the replicas
// field, it fails on the live object; then come the field manager's own
// errors (a field not in the Scale's schema) and conflicts with the
// managers of the replicas field; else it fails on the new object. Its
// conversion failures are 500s; kubeplay answers them as 400s with the
// same text (see errBare), since the request, not the server, is at fault
// as far as the client can tell.
func (s *Server) applyCustomScale(r *http.Request, req *request, obj object, body []byte) error {
	opts, err := writeOptionsOf(r, "PatchOptions", applyPatchType)
	if err != nil {
		return err
	}
	pr := &patchRequest{write: &write{request: req, manager: opts.manager}, kind: newResourceStore(scaleKind), patchType: applyPatchType, body: body, force: opts.force}
	applied, err := decodeApplied(r.Context(), pr, true)
	if err != nil {
		return err
	}
	paths := req.res.Custom.Scale
	live := customScaleOf(obj, paths.SpecReplicasPath, paths.StatusReplicasPath, paths.LabelSelectorPath)
	owners := replicasOwners(jsonmap.List(metadata(obj), "managedFields"), paths.SpecReplicasPath)
	if len(owners) == 0 {
		return errBare(errors.New("failed to create manager for existing fields: failed to convert live object (/; autoscaling/v1, Kind=Scale) to proper version: " + errScaleVersion))
	}
	metadata(live)["managedFields"] = owners
	if _, err := s.applyDecoded(pr, live, applied); err != nil {
		return err
	}
	md, _ := applied["metadata"].(map[string]any)
	return errBare(fmt.Errorf("failed to convert new object (%s/%s; autoscaling/v1, Kind=Scale) to proper version: %s", str(md, "namespace"), str(md, "name"), errScaleVersion))
}

const errScaleVersion = "request to convert CR to an invalid group/version: autoscaling/v1"

// replicasOwners are the managedFields entries of a custom object that own
// its replicas field (at specPath), as entries of its Scale: owning
// .spec.replicas, in autoscaling/v1.
func replicasOwners(entries []any, specPath string) []any {
	var out []any
	for _, e := range entries {
		m, _ := e.(map[string]any)
		var fields any = m["fieldsV1"]
		for _, p := range strings.Split(strings.TrimPrefix(specPath, "."), ".") {
			f, _ := fields.(map[string]any)
			fields = f["f:"+p]
		}
		if fields == nil {
			continue
		}
		owner := maps.Clone(m)
		owner["apiVersion"] = "autoscaling/v1"
		owner["fieldsV1"] = map[string]any{"f:spec": map[string]any{"f:replicas": map[string]any{}}}
		out = append(out, owner)
	}
	return out
}

// scaleOf is the autoscaling/v1 Scale of a custom object.
func customScaleOf(obj object, specPath, statusPath, selectorPath string) object {
	md := metadata(obj)
	scaleMD := map[string]any{}
	for _, k := range []string{"name", "namespace", "uid", "resourceVersion", "creationTimestamp"} {
		if v, ok := md[k]; ok {
			scaleMD[k] = v
		}
	}
	status := map[string]any{"replicas": int64Of(valueAt(obj, statusPath))}
	if sel, ok := valueAt(obj, selectorPath).(string); ok && sel != "" {
		status["selector"] = sel
	}
	return object{
		"kind": "Scale", "apiVersion": "autoscaling/v1", "metadata": scaleMD,
		"spec": map[string]any{"replicas": int64Of(valueAt(obj, specPath))}, "status": status,
	}
}

// valueAt reads a simple JSONPath (".spec.replicas").
func valueAt(obj object, path string) any {
	var cur any = obj
	for _, p := range strings.Split(strings.TrimPrefix(path, "."), ".") {
		m, ok := cur.(map[string]any)
		if !ok || p == "" {
			return nil
		}
		cur = m[p]
	}
	return cur
}

// setPath writes a value at a simple JSONPath, creating the objects on the way.
func setPath(obj object, path string, v any) {
	parts := strings.Split(strings.TrimPrefix(path, "."), ".")
	cur := obj
	for _, p := range parts[:len(parts)-1] {
		cur = jsonmap.Ensure(cur, p)
	}
	cur[parts[len(parts)-1]] = v
}
