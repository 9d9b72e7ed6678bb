package server

import (
	"context"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"kubeplay/internal/jsonmap"
	"kubeplay/server/catalog"
	"kubeplay/server/encoding"
	"kubeplay/server/fieldmanager"
)

// serveSubresource handles a request to a served subresource.
func (s *Server) serveSubresource(w http.ResponseWriter, r *http.Request, req *request) {
	switch {
	case req.subresource == "finalize" && req.verb != "update":
		encoding.WriteError(w, r, errMethodNotAllowed())
	case req.subresource == "scale" && req.res.Custom != nil:
		s.customScale(w, r, req)
	case req.subresource == "scale" && req.verb == "get":
		s.getScale(w, r, req)
	case req.subresource == "scale" && req.verb == "update":
		s.updateScale(w, r, req)
	case req.verb == "get":
		s.get(w, r, req)
	case req.verb == "update":
		s.update(w, r, req)
	case req.verb == "patch":
		s.patch(w, r, req)
	default:
		encoding.WriteError(w, r, errMethodNotAllowed())
	}
}

// A handler answers requests of one kind outside the generic registry.
type handler func(*Server, http.ResponseWriter, *http.Request, *request)

// subresourceHandlers serve the subresources that are not a view of the
// stored object, by subresourceKey.
var subresourceHandlers = map[string]handler{
	"serviceaccounts/token": (*Server).tokenRequest,
	"pods/binding":          (*Server).bind,
	"pods/eviction":         (*Server).evict,
	"pods/log":              (*Server).podLog,
	"pods/exec":             (*Server).podStream,
	"pods/attach":           (*Server).podStream,
	"pods/portforward":      (*Server).podStream,
	"pods/proxy":            (*Server).podProxy,
	"services/proxy":        (*Server).serviceProxy,
	"nodes/proxy":           (*Server).nodeProxy,
}

// unstoredHandlers serve the built-in resources besides the reviews that
// kube-apiserver serves without storing them.
var unstoredHandlers = map[schema.GroupResource]handler{
	{Resource: "bindings"}:          (*Server).bind,
	{Resource: "componentstatuses"}: (*Server).componentStatuses,
}

// subresourceKey names a subresource: "pods/log", "deployments.apps/scale".
func subresourceKey(r *catalog.Resource, sub string) string {
	return r.GroupResource().String() + "/" + sub
}

// routed reports whether kube-apiserver has a route for a path to res: an
// object's path only for a type with verbs on objects, a watch path only
// for a type that can be watched (else 404, not 405).
func routed(res *catalog.Resource, name, sub string, watchPath bool) bool {
	switch {
	case watchPath:
		return res.HasVerb("watch")
	case name != "" && sub == "":
		return res.HasVerb("get") || res.HasVerb("update") || res.HasVerb("patch") || res.HasVerb("delete")
	}
	return true
}

// subresourceVerb reports whether a subresource of r supports verb.
func subresourceVerb(r *catalog.Resource, sub, verb string) bool {
	for _, sr := range r.Subresources {
		if sr.Name == sub {
			for _, v := range sr.Verbs {
				if v == verb {
					return true
				}
			}
		}
	}
	return false
}

// scaleKind describes the autoscaling/v1 Scale objects of /scale.
var scaleKind = &catalog.Resource{Group: "autoscaling", Version: "v1", Kind: "Scale", Resource: "scale", Namespaced: true}

// replicasPath is where the types with a scale subresource keep their
// desired replicas.
var replicasPath = fieldpath.MakePathOrDie("spec", "replicas")

// scaleOf is the Scale view of obj: its desired and current replicas and
// its selector as a string.
func scaleOf(rs *resourceStore, obj object) object {
	md := metadata(obj)
	scaleMD := map[string]any{}
	for _, k := range []string{"name", "namespace", "uid", "resourceVersion", "creationTimestamp"} {
		if v, ok := md[k]; ok {
			scaleMD[k] = v
		}
	}
	spec, _ := obj["spec"].(map[string]any)
	status, _ := obj["status"].(map[string]any)
	scaleSpec := map[string]any{}
	if n, ok := spec["replicas"]; ok && n != nil {
		scaleSpec["replicas"] = n
	}
	scaleStatus := map[string]any{"replicas": int64(0)}
	if n, ok := status["replicas"]; ok && n != nil {
		scaleStatus["replicas"] = n
	}
	if sel := selectorString(rs.strategy.mapSelector, spec["selector"]); sel != "" {
		scaleStatus["selector"] = sel
	}
	return object{"kind": "Scale", "apiVersion": "autoscaling/v1", "metadata": scaleMD, "spec": scaleSpec, "status": scaleStatus}
}

// selectorString renders a selector as Scale's status.selector does: a
// label selector, or, when mapSelector, a map of labels (see
// strategy.mapSelector).
func selectorString(mapSelector bool, v any) string {
	m, _ := v.(map[string]any)
	if m == nil {
		return ""
	}
	if mapSelector {
		set := labels.Set{}
		for k, v := range m {
			set[k], _ = v.(string)
		}
		return labels.SelectorFromSet(set).String()
	}
	var sel metav1.LabelSelector
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &sel); err != nil {
		return ""
	}
	s, err := metav1.LabelSelectorAsSelector(&sel)
	if err != nil {
		return ""
	}
	return s.String()
}

func (s *Server) getScale(w http.ResponseWriter, r *http.Request, req *request) {
	obj, _, err := s.reg.getObject(r.Context(), req.res, req.namespace, req.name)
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	encoding.Write(w, r, http.StatusOK, scaleOf(req.store, obj))
}

func (s *Server) updateScale(w http.ResponseWriter, r *http.Request, req *request) {
	out, err := s.writeScale(r, req)
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	encoding.Write(w, r, http.StatusOK, out)
}

// writeScale is a PUT of a Scale: its replicas replace the object's.
func (s *Server) writeScale(r *http.Request, req *request) (object, error) {
	opts, err := writeOptionsOf(r, "UpdateOptions", "")
	if err != nil {
		return nil, err
	}
	body, err := readBody(r, scaleKind)
	if err != nil {
		return nil, err
	}
	if name := str(metadata(body), "name"); name != req.name {
		return nil, encoding.BadRequest("the name of the object (%s) does not match the name on the URL (%s)", name, req.name)
	}
	wr := scaleWrite(req, opts.manager, opts.dryRun)
	out, _, err := s.reg.updateWith(r.Context(), wr, func(live object, rev int64) (object, error) {
		return s.scaled(wr, live, rev, func(f *fieldmanager.FieldManager, old object) (object, error) {
			return fieldmanager.Update(f, old, runtime.DeepCopyJSON(body), wr.manager), nil
		})
	})
	if err != nil {
		return nil, err
	}
	return scaleOf(req.store, out), nil
}

// patchScale patches the Scale view of an object.
func (s *Server) patchScale(ctx context.Context, pr *patchRequest) (object, int, error) {
	wr := scaleWrite(pr.request, pr.manager, pr.dryRun)
	out, _, err := s.reg.updateWith(ctx, wr, func(live object, rev int64) (object, error) {
		return s.scaled(wr, live, rev, func(f *fieldmanager.FieldManager, old object) (object, error) {
			if pr.patchType == applyPatchType {
				return s.applyConfiguration(ctx, pr, old)
			}
			patched, err := mergePatch(ctx, pr, old)
			if err != nil {
				return nil, err
			}
			return fieldmanager.Update(f, old, patched, pr.manager), nil
		})
	})
	if err != nil {
		return nil, 0, err
	}
	return scaleOf(pr.store, out), http.StatusOK, nil
}

// scaleWrite is the write of an object through its Scale: scaled records
// its managedFields, and admission policies see the Scales, as in
// kube-apiserver.
func scaleWrite(req *request, manager string, dryRun bool) *write {
	return &write{request: req, manager: manager, dryRun: dryRun, applied: true,
		view: func(obj object) object { return scaleOf(req.store, obj) },
		fromView: func(obj, scale object) {
			spec := jsonmap.Ensure(obj, "spec")
			if n, ok := jsonmap.Child(scale, "spec")["replicas"]; ok {
				spec["replicas"] = n
			} else {
				delete(spec, "replicas")
			}
		}}
}

// scaled is live with the replicas of a new Scale, which write computes
// from the current one (with its managedFields). The managedFields of the
// Scale translate to and from the object's as kube-apiserver's
// ScaleHandler does: whoever sets replicas through /scale owns the
// object's spec.replicas.
func (s *Server) scaled(wr *write, live object, rev int64, write func(*fieldmanager.FieldManager, object) (object, error)) (object, error) {
	res := wr.res
	liveU := &unstructured.Unstructured{Object: live}
	handler := managedfields.NewScaleHandler(liveU.GetManagedFields(), res.GroupVersionKind().GroupVersion(),
		managedfields.ResourcePathMappings{res.APIVersion(): replicasPath})
	entries, err := handler.ToSubresource()
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	old := scaleOf(wr.store, live)
	(&unstructured.Unstructured{Object: old}).SetManagedFields(entries)
	f, err := s.reg.fieldManager(newResourceStore(scaleKind), "scale")
	if err != nil {
		return nil, err
	}
	scale, err := write(f, old)
	if err != nil {
		return nil, err
	}
	if err := checkResourceVersion(wr, scale, rev); err != nil {
		return nil, err
	}
	parent, err := handler.ToParent((&unstructured.Unstructured{Object: scale}).GetManagedFields())
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	obj := runtime.DeepCopyJSON(live)
	spec := jsonmap.Ensure(obj, "spec")
	scaleSpec, _ := scale["spec"].(map[string]any)
	if n, ok := scaleSpec["replicas"]; ok {
		spec["replicas"] = n
	} else {
		delete(spec, "replicas")
	}
	(&unstructured.Unstructured{Object: obj}).SetManagedFields(parent)
	return obj, nil
}
