package server

import (
	"errors"
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/server/catalog"
	"kubeplay/server/encoding"
	"kubeplay/store"
)

// bindingKind describes the v1 Binding objects of pods/binding and of the
// legacy bindings collection.
var bindingKind = &catalog.Resource{Version: "v1", Kind: "Binding", Resource: "bindings", Namespaced: true}

// podsResource is the core group's pods, which the pod subresources write.
var podsResource = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

// bind answers a POST of a Binding to pods/binding or to the bindings
// collection (which names the pod in the Binding): it assigns the pod to the
// target node, as a scheduler does, with a Status of success.
func (s *Server) bind(w http.ResponseWriter, r *http.Request, req *request) {
	opts, err := writeOptionsOf(r, "CreateOptions", "")
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	binding, err := readBody(r, bindingKind)
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	md := metadata(binding)
	name := str(md, "name")
	if req.subresource == "" {
		req.name = name // the legacy collection names the pod in the Binding
	} else if name != req.name {
		encoding.WriteError(w, r, encoding.BadRequest("name in URL does not match name in Binding object"))
		return
	}
	if errs := validateBinding(binding); len(errs) > 0 {
		// kube-apiserver answers these with a 500 (an aggregate, not a
		// Status); they are the client's mistake.
		encoding.WriteError(w, r, encoding.BadRequest("%s", errs.ToAggregate().Error()))
		return
	}
	target, _ := binding["target"].(map[string]any)
	// PodTopologyLabels labels the Binding, whose labels the pod gets; it
	// looks at no target that does not say it is a Node.
	labelledBy := str(target, "name")
	if str(target, "kind") != "Node" {
		labelledBy = ""
	}
	if err := s.reg.admission.admitPodTopology(r.Context(), labelledBy, md); err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	if err := s.reg.assignPod(r, req, str(target, "name"), md, opts.dryRun); err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	encoding.Write(w, r, http.StatusCreated, successStatus(http.StatusCreated))
}

// successStatus is the Status a subresource's create answers with.
func successStatus(code int32) *metav1.Status {
	return &metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusSuccess, Code: code}
}

// validateBinding checks a Binding's target as kube-apiserver does.
func validateBinding(binding object) field.ErrorList {
	var errs field.ErrorList
	target, _ := binding["target"].(map[string]any)
	path := field.NewPath("target")
	if kind := str(target, "kind"); kind != "" && kind != "Node" {
		errs = append(errs, field.NotSupported(path.Child("kind"), kind, []string{"Node", "<empty>"}))
	}
	if str(target, "name") == "" {
		errs = append(errs, field.Required(path.Child("name"), ""))
	}
	return errs
}

// assignPod sets the pod's node, the Binding's annotations and labels and
// the PodScheduled condition, straight in storage as kube-apiserver's
// binding does (no admission of the pod, no managedFields entry). A pod
// already assigned, being deleted or gated is a conflict.
func (s *registry) assignPod(r *http.Request, req *request, node string, bindingMD map[string]any, dryRun bool) error {
	pods := s.catalog.Lookup(podsResource)
	ctx := r.Context()
	for attempt := 1; ; attempt++ {
		pod, kv, err := s.getObject(ctx, pods, req.namespace, req.name)
		if err != nil {
			return err
		}
		if err := checkBindingPreconditions(pods, req.name, metadata(pod), bindingMD); err != nil {
			return err
		}
		spec, _ := pod["spec"].(map[string]any)
		var refusal string
		switch {
		case deleting(pod):
			refusal = fmt.Sprintf("pod %s is being deleted, cannot be assigned to a host", req.name)
		case str(spec, "nodeName") != "":
			refusal = fmt.Sprintf("pod %v is already assigned to node %q", req.name, str(spec, "nodeName"))
		case len(asSlice(spec["schedulingGates"])) > 0:
			refusal = fmt.Sprintf("pod %v has non-empty .spec.schedulingGates", req.name)
		}
		if refusal != "" {
			return apierrors.NewConflict(schema.GroupResource{Resource: "pods/binding"}, req.name, errors.New(refusal))
		}
		spec["nodeName"] = node
		md := metadata(pod)
		for _, k := range []string{"annotations", "labels"} {
			add, _ := bindingMD[k].(map[string]any)
			if len(add) == 0 {
				continue
			}
			m, _ := md[k].(map[string]any)
			if m == nil {
				m = map[string]any{}
				md[k] = m
			}
			for key, v := range add {
				m[key] = v
			}
		}
		setPodCondition(pod, map[string]any{"type": "PodScheduled", "status": "True"}, formatTime(s.now()))
		_, err = s.commitUpdate(ctx, newResourceStore(pods), req.namespace, req.name, pod, kv, dryRun)
		if errors.Is(err, store.ErrConflict) && attempt < maxUpdateAttempts {
			continue
		}
		return err
	}
}

// checkBindingPreconditions answers 409 when a Binding names a uid or a
// resourceVersion other than the pod's.
func checkBindingPreconditions(pods *catalog.Resource, name string, podMD, bindingMD map[string]any) error {
	pre := &metav1.Preconditions{}
	if uid := str(bindingMD, "uid"); uid != "" {
		u := types.UID(uid)
		pre.UID = &u
	}
	if rv := str(bindingMD, "resourceVersion"); rv != "" {
		pre.ResourceVersion = &rv
	}
	return checkPreconditions(pods, name, podMD, pre)
}

// setPodCondition sets a condition in a pod's status as kube-apiserver's
// pod helpers do: an existing condition of its type keeps its
// lastTransitionTime unless its status changes; a new one gets now.
func setPodCondition(pod object, cond map[string]any, now string) {
	status, _ := pod["status"].(map[string]any)
	if status == nil {
		status = map[string]any{}
		pod["status"] = status
	}
	conds := asSlice(status["conditions"])
	for i, c := range conds {
		old, _ := c.(map[string]any)
		if old["type"] != cond["type"] {
			continue
		}
		merged := map[string]any{"lastProbeTime": old["lastProbeTime"], "lastTransitionTime": old["lastTransitionTime"]}
		for k, v := range cond {
			merged[k] = v
		}
		if old["status"] != cond["status"] {
			merged["lastTransitionTime"] = now
		}
		conds[i] = merged
		status["conditions"] = conds
		return
	}
	added := map[string]any{"lastProbeTime": nil, "lastTransitionTime": now}
	for k, v := range cond {
		added[k] = v
	}
	status["conditions"] = append(conds, added)
}

func asSlice(v any) []any { l, _ := v.([]any); return l }
