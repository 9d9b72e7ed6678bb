package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/internal/jsonmap"
	"kubeplay/server/catalog"
	"kubeplay/server/encoding"
	"kubeplay/store"
)

// evictionKind describes the Eviction objects of pods/eviction (policy/v1;
// policy/v1beta1 is accepted too).
var evictionKind = &catalog.Resource{Group: "policy", Version: "v1", Kind: "Eviction", Resource: "evictions", Namespaced: true}

// pdbResource is the resource of the PodDisruptionBudgets an eviction
// honours.
var pdbResource = schema.GroupVersionResource{Group: "policy", Version: "v1", Resource: "poddisruptionbudgets"}

// disruptionBudgetCause is the cause type of a refusal by a budget.
const disruptionBudgetCause metav1.CauseType = "DisruptionBudget"

// evict answers a POST of an Eviction to pods/eviction as kube-apiserver's
// eviction does: a pod that is not running (or already being deleted) is
// deleted at once; a running one only if its PodDisruptionBudget allows a
// disruption, which the eviction then uses up (recording the pod in the
// budget's disruptedPods). The pod gets the DisruptionTarget condition
// before its deletion, with the Eviction's DeleteOptions.
func (s *Server) evict(w http.ResponseWriter, r *http.Request, req *request) {
	code, err := s.reg.evictPod(r, req)
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	if code != http.StatusCreated {
		// kube-apiserver's answer for a pod under several budgets: a failure
		// it returns as the created object.
		encoding.Write(w, r, code, &metav1.Status{
			TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure, Code: int32(code),
			Message: "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.",
		})
		return
	}
	encoding.Write(w, r, http.StatusCreated, successStatus(http.StatusCreated))
}

func (s *registry) evictPod(r *http.Request, req *request) (int, error) {
	ctx := r.Context()
	createOpts, err := writeOptionsOf(r, "CreateOptions", "")
	if err != nil {
		return 0, err
	}
	eviction, err := readEviction(r)
	if err != nil {
		return 0, err
	}
	if str(metadata(eviction), "name") != req.name {
		return 0, encoding.BadRequest("name in URL does not match name in Eviction object")
	}
	opts, err := evictionDeleteOptions(eviction, req.name, r.URL.Query()["dryRun"])
	if err != nil {
		return 0, err
	}
	dryRun := createOpts.dryRun || len(opts.DryRun) > 0
	pods := s.catalog.Lookup(podsResource)
	pod, _, err := s.getObject(ctx, pods, req.namespace, req.name)
	if err != nil {
		return 0, err
	}
	phase := jsonmap.String(pod, "status", "phase")
	if phase == "Succeeded" || phase == "Failed" || phase == "Pending" || deleting(pod) {
		// Nothing a budget protects: deleted as it is, a running pod only
		// if it did not change meanwhile.
		if phase != "Succeeded" && phase != "Failed" && !deleting(pod) && !namesResourceVersion(opts) {
			opts = withResourceVersion(opts, str(metadata(pod), "resourceVersion"))
		}
		return http.StatusCreated, s.markAndDeletePod(ctx, pods, req, opts, dryRun)
	}
	pdbs, err := s.podBudgets(ctx, req.namespace, pod)
	if err != nil {
		return 0, err
	}
	if len(pdbs) > 1 {
		return http.StatusInternalServerError, nil
	}
	unhealthyAllowed := false
	if len(pdbs) == 1 {
		pdb := pdbs[0]
		if !podReady(pod) {
			current, _ := jsonmap.Int(pdb, "status", "currentHealthy")
			desired, _ := jsonmap.Int(pdb, "status", "desiredHealthy")
			unhealthyAllowed = jsonmap.String(pdb, "spec", "unhealthyPodEvictionPolicy") == "AlwaysAllow" || current >= desired && desired > 0
		}
		if !unhealthyAllowed {
			if err := s.useDisruption(ctx, req.namespace, str(metadata(pdb), "name"), req.name, dryRun); err != nil {
				return 0, err
			}
		}
	}
	if unhealthyAllowed {
		opts = withResourceVersion(opts, str(metadata(pod), "resourceVersion"))
	}
	err = s.markAndDeletePod(ctx, pods, req, opts, dryRun)
	if apierrors.IsConflict(err) && unhealthyAllowed && !namesResourceVersion(opts) {
		return 0, errBudgetProcessing(str(metadata(pdbs[0]), "name"))
	}
	return http.StatusCreated, err
}

// readEviction reads the Eviction of a request in the version it names.
func readEviction(r *http.Request) (object, error) {
	body, err := readBytes(r)
	if err != nil {
		return nil, err
	}
	var head struct {
		APIVersion string `json:"apiVersion"`
	}
	json.Unmarshal(body, &head) // a body that is not JSON is reported by readBody
	if head.APIVersion == "policy/v1beta1" {
		// The same fields as policy/v1's, which kubeplay's schemas describe.
		body = bytes.Replace(body, []byte(`"policy/v1beta1"`), []byte(`"policy/v1"`), 1)
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return readBody(r, evictionKind)
}

// evictionDeleteOptions returns the Eviction's DeleteOptions, with the
// request's dryRun when they name none.
func evictionDeleteOptions(eviction object, name string, dryRun []string) (*metav1.DeleteOptions, error) {
	opts := &metav1.DeleteOptions{}
	if m, ok := eviction["deleteOptions"].(map[string]any); ok {
		// Typed by the schema already: this cannot fail.
		b, _ := json.Marshal(m)
		json.Unmarshal(b, opts)
	}
	if opts.IgnoreStoreReadErrorWithClusterBreakingPotential != nil && *opts.IgnoreStoreReadErrorWithClusterBreakingPotential {
		return nil, apierrors.NewInvalid(schema.GroupKind{Group: "policy", Kind: "Eviction"}, name, field.ErrorList{
			field.Invalid(field.NewPath("deleteOptions", "ignoreStoreReadErrorWithClusterBreakingPotential"), true, "can not be set for pod eviction, try after removing the option"),
		})
	}
	switch {
	case len(opts.DryRun) == 0:
		opts.DryRun = dryRun
	case len(dryRun) > 0 && !slices.Equal(opts.DryRun, dryRun):
		return nil, encoding.BadRequest("Non-matching dry-run options in request and content: %v and %v", dryRun, opts.DryRun)
	}
	return opts, nil
}

func namesResourceVersion(opts *metav1.DeleteOptions) bool {
	return opts.Preconditions != nil && opts.Preconditions.ResourceVersion != nil
}

// withResourceVersion returns a copy of opts whose preconditions name rv.
func withResourceVersion(opts *metav1.DeleteOptions, rv string) *metav1.DeleteOptions {
	opts = opts.DeepCopy()
	if opts.Preconditions == nil {
		opts.Preconditions = &metav1.Preconditions{}
	}
	opts.Preconditions.ResourceVersion = &rv
	return opts
}

// podReady reports whether a pod's Ready condition is True.
func podReady(pod object) bool {
	for _, c := range jsonmap.List(pod, "status", "conditions") {
		if m, _ := c.(map[string]any); m["type"] == "Ready" {
			return m["status"] == "True"
		}
	}
	return false
}

// podBudgets returns the PodDisruptionBudgets of the pod's namespace whose
// selector matches it (an invalid or missing selector matches nothing).
func (s *registry) podBudgets(ctx context.Context, ns string, pod object) ([]object, error) {
	res := s.catalog.Lookup(pdbResource)
	if res == nil {
		return nil, nil // policy/v1 switched off: no budget applies
	}
	list, err := s.listObjects(ctx, res, ns, selectors{label: labels.Everything(), field: fields.Everything()}, listOptions{}, false)
	if err != nil {
		return nil, err
	}
	podLabels := labels.Set{}
	for k, v := range jsonmap.Child(pod, "metadata", "labels") {
		podLabels[k], _ = v.(string)
	}
	var out []object
	for _, pdb := range list.items {
		var sel metav1.LabelSelector
		m, ok := jsonmap.Child(pdb, "spec")["selector"].(map[string]any)
		if !ok || runtime.DefaultUnstructuredConverter.FromUnstructured(m, &sel) != nil {
			continue
		}
		selector, err := metav1.LabelSelectorAsSelector(&sel)
		if err != nil || !selector.Matches(podLabels) {
			continue
		}
		out = append(out, pdb)
	}
	return out, nil
}

// useDisruption takes one of the disruptions a budget allows for pod, or
// answers 429 with the budget's reason, as kube-apiserver's eviction
// does; the budget's status is written (as kube-apiserver, through its
// status subresource) unless dryRun.
func (s *registry) useDisruption(ctx context.Context, ns, name, pod string, dryRun bool) error {
	res := s.catalog.Lookup(pdbResource)
	wr := &write{request: &request{group: res.Group, version: res.Version, namespace: ns, resource: res.Resource, name: name,
		subresource: "status", verb: "update", res: res, store: newResourceStore(res)}, manager: "kube-apiserver", dryRun: dryRun}
	_, _, err := s.updateWith(ctx, wr, func(live object, _ int64) (object, error) {
		pdb := runtime.DeepCopyJSON(live)
		if err := allowsDisruption(pdb); err != nil {
			return nil, err
		}
		status := jsonmap.Child(pdb, "status")
		allowed, _ := jsonmap.Int(pdb, "status", "disruptionsAllowed")
		status["disruptionsAllowed"] = allowed - 1
		now := formatTime(s.now())
		if allowed == 1 {
			generation, _ := jsonmap.Int(pdb, "status", "observedGeneration")
			status["conditions"] = setCondition(asSlice(status["conditions"]), map[string]any{
				"type": "DisruptionAllowed", "status": "False", "reason": "InsufficientPods", "message": "", "observedGeneration": generation,
			}, now)
		}
		disrupted, _ := status["disruptedPods"].(map[string]any)
		if disrupted == nil {
			disrupted = map[string]any{}
			status["disruptedPods"] = disrupted
		}
		disrupted[pod] = now
		return pdb, nil
	})
	return err
}

// maxDisruptedPods is how many evictions a budget records before its
// controller confirms them; more are refused.
const maxDisruptedPods = 2000

// allowsDisruption answers why a budget refuses a disruption, if it does.
func allowsDisruption(pdb object) error {
	name := str(metadata(pdb), "name")
	observed, _ := jsonmap.Int(pdb, "status", "observedGeneration")
	generation, _ := jsonmap.Int(pdb, "metadata", "generation")
	allowed, _ := jsonmap.Int(pdb, "status", "disruptionsAllowed")
	switch {
	case observed < generation:
		return errBudgetProcessing(name)
	case allowed < 0:
		return apierrors.NewForbidden(schema.GroupResource{Group: "policy", Resource: "poddisruptionbudget"}, name, errors.New("pdb disruptions allowed is negative"))
	case len(jsonmap.Child(pdb, "status", "disruptedPods")) > maxDisruptedPods:
		return apierrors.NewForbidden(schema.GroupResource{Group: "policy", Resource: "poddisruptionbudget"}, name, errors.New("DisruptedPods map too big - too many evictions not confirmed by PDB controller"))
	case allowed > 0:
		return nil
	}
	current, _ := jsonmap.Int(pdb, "status", "currentHealthy")
	desired, _ := jsonmap.Int(pdb, "status", "desiredHealthy")
	var cond map[string]any
	for _, c := range jsonmap.List(pdb, "status", "conditions") {
		if m, _ := c.(map[string]any); m["type"] == "DisruptionAllowed" {
			cond = m
		}
	}
	reason, message := str(cond, "reason"), str(cond, "message")
	failed := cond != nil && cond["status"] == "False" && message != ""
	var msg string
	switch {
	case failed && reason == "SyncFailed":
		msg = fmt.Sprintf("The disruption budget %s does not allow evicting pods currently because it failed sync: %s", name, message)
	case current <= desired:
		msg = fmt.Sprintf("The disruption budget %s needs %d healthy pods and has %d currently", name, desired, current)
	case failed:
		msg = fmt.Sprintf("The disruption budget %s does not allow evicting pods currently (%s): %s", name, reason, message)
	default:
		msg = fmt.Sprintf("The disruption budget %s does not allow evicting pods currently", name)
	}
	return errTooManyEvictions(0, msg)
}

// errBudgetProcessing is the 429 for a budget its controller has not
// caught up with.
func errBudgetProcessing(name string) error {
	return errTooManyEvictions(10, fmt.Sprintf("The disruption budget %s is still being processed by the server.", name))
}

func errTooManyEvictions(retryAfter int, cause string) error {
	err := apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", retryAfter)
	err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{Type: disruptionBudgetCause, Message: cause})
	return err
}

// setCondition sets a metav1.Condition in conds as apimachinery's
// SetStatusCondition does: lastTransitionTime changes with the status only.
func setCondition(conds []any, cond map[string]any, now string) []any {
	for i, c := range conds {
		old, _ := c.(map[string]any)
		if old["type"] != cond["type"] {
			continue
		}
		merged := runtime.DeepCopyJSONValue(old).(map[string]any)
		for k, v := range cond {
			merged[k] = v
		}
		if old["status"] != cond["status"] {
			merged["lastTransitionTime"] = now
		}
		conds[i] = merged
		return conds
	}
	added := map[string]any{"lastTransitionTime": now}
	for k, v := range cond {
		added[k] = v
	}
	return append(conds, added)
}

// markAndDeletePod gives the pod the DisruptionTarget condition (unless
// dryRun) and deletes it with opts, as the eviction does.
func (s *registry) markAndDeletePod(ctx context.Context, pods *catalog.Resource, req *request, opts *metav1.DeleteOptions, dryRun bool) error {
	if !dryRun {
		for attempt := 1; ; attempt++ {
			pod, kv, err := s.getObject(ctx, pods, req.namespace, req.name)
			if err != nil {
				return err
			}
			if err := checkPreconditions(pods, req.name, metadata(pod), opts.Preconditions); err != nil {
				return err
			}
			setPodCondition(pod, map[string]any{"type": "DisruptionTarget", "status": "True", "reason": "EvictionByEvictionAPI", "message": "Eviction API: evicting"}, formatTime(s.now()))
			out, err := s.commitUpdate(ctx, newResourceStore(pods), req.namespace, req.name, pod, kv, false)
			if errors.Is(err, store.ErrConflict) && attempt < maxUpdateAttempts {
				continue
			}
			if err != nil {
				return err
			}
			if namesResourceVersion(opts) {
				opts = withResourceVersion(opts, str(metadata(out), "resourceVersion"))
			}
			break
		}
	}
	// Checked by the delete, after the condition is set, as kube-apiserver
	// does: an invalid option leaves the pod marked.
	if err := s.validateDeleteOptions(opts, false); err != nil {
		return err
	}
	_, _, err := s.deleteObject(ctx, newResourceStore(pods), req.namespace, req.name, opts)
	return err
}
