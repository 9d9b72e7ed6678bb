package playground

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"kubeplay/server/catalog"
	"kubeplay/server/celeval"
	"kubeplay/server/celtypes"
	"kubeplay/server/inproc"
	"kubeplay/server/openapi"
	"kubeplay/server/structural"
	"kubeplay/store"
)

// The ValidatingAdmissionPolicy status controller is kube-controller-manager's:
// it type-checks each policy's expressions against the kinds its
// matchConstraints name and applies the result as the policy's
// status.typeChecking, with status.observedGeneration. What it checks
// follows the "Type checking" section of the Validating Admission Policy
// documentation and, where that is silent or loose, what
// kube-controller-manager does (see celeval.TypeCheck and policyTypes).

var validatingAdmissionPolicyStatusDef = controllerDef{name: "validatingAdmissionPolicyStatus", title: "validatingadmissionpolicy status controller",
	serviceAccount: "validatingadmissionpolicy-status-controller",
	start:          func(sb *Sandbox) reconciler { return newPolicyStatusController(sb.handler, sb.api.Catalog()) }}

// policyStatusFieldManager is the field manager of the status the
// controller applies.
const policyStatusFieldManager = "validatingadmissionpolicy-status"

// maxCheckedTypes is how many kinds of one resource rule are checked.
const maxCheckedTypes = 10

const policiesPath = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies"

// policiesResource is the resource the controller looks after. An
// emulated release before v1.30 does not serve it: its
// kube-controller-manager has no such controller to run, and the
// controller sends no request.
var policiesResource = schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingadmissionpolicies"}

// policyKeyPrefix is where the store keeps policies.
var policyKeyPrefix = builtinKeyPrefix(policiesResource)

// policyStatusController is a reconciler whose keys are policy names.
type policyStatusController struct {
	api     *inproc.Client
	catalog *catalog.Catalog
}

var _ reconciler = (*policyStatusController)(nil)

func newPolicyStatusController(api http.Handler, cat *catalog.Catalog) *policyStatusController {
	return &policyStatusController{api: inproc.New(api, controllerAgent("validatingadmissionpolicy-status-controller")), catalog: cat}
}

// statusPolicy is what the controller reads of a policy.
type statusPolicy struct {
	Metadata struct {
		Name       string `json:"name"`
		Generation int64  `json:"generation"`
	} `json:"metadata"`
	Spec struct {
		ParamKind *struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		} `json:"paramKind"`
		MatchConstraints *struct {
			ResourceRules []struct {
				APIGroups   []string `json:"apiGroups"`
				APIVersions []string `json:"apiVersions"`
				Resources   []string `json:"resources"`
			} `json:"resourceRules"`
		} `json:"matchConstraints"`
		Variables []struct {
			Name       string `json:"name"`
			Expression string `json:"expression"`
		} `json:"variables"`
		Validations []celtypes.ValidationExpressions `json:"validations"`
	} `json:"spec"`
	Status struct {
		ObservedGeneration int64 `json:"observedGeneration"`
	} `json:"status"`
}

// stale reports whether the status has not observed the current
// generation: the controller checks such a policy, whatever its
// typeChecking, as kube-controller-manager does.
func (p statusPolicy) stale() bool { return p.Metadata.Generation > p.Status.ObservedGeneration }

// served reports whether the emulated release serves v1 policies.
func (c *policyStatusController) served() bool { return c.catalog.Lookup(policiesResource) != nil }

// resync returns the policies whose status is stale.
func (c *policyStatusController) resync(ctx context.Context, _ int64) ([]string, error) {
	if !c.served() {
		return nil, nil
	}
	var list struct {
		Items []statusPolicy `json:"items"`
	}
	if err := c.api.Get(ctx, policiesPath, &list); err != nil {
		if apierrors.IsNotFound(err) { // no longer served
			return nil, nil
		}
		return nil, err
	}
	var keys []string
	for _, p := range list.Items {
		if p.stale() {
			keys = append(keys, p.Metadata.Name)
		}
	}
	return keys, nil
}

// keysOf names a policy written with a stale status. The controller's own
// status writes leave it up to date, so they name nothing: without that
// each of them would cost one more look. A deleted policy needs nothing.
func (c *policyStatusController) keysOf(ev store.Event, q queue) {
	name, ok := strings.CutPrefix(ev.KV.Key, policyKeyPrefix)
	if !ok || ev.Type == store.Deleted {
		return
	}
	var p statusPolicy
	if err := json.Unmarshal(ev.KV.Value, &p); err == nil && !p.stale() {
		return
	}
	q.Add(name)
}

// reconcile checks the policy name if its status has not observed its
// current generation.
func (c *policyStatusController) reconcile(ctx context.Context, name string) (time.Duration, error) {
	if !c.served() {
		return 0, nil
	}
	var p statusPolicy
	if err := c.api.Get(ctx, policiesPath+"/"+url.PathEscape(name), &p); err != nil {
		if apierrors.IsNotFound(err) { // gone, or no longer served
			return 0, nil
		}
		return 0, err
	}
	if !p.stale() {
		return 0, nil
	}
	return 0, c.update(ctx, p)
}

// update applies the type check of p as its status.
func (c *policyStatusController) update(ctx context.Context, p statusPolicy) error {
	objects, err := c.policyTypes(p)
	if err != nil {
		return err
	}
	var params *celtypes.CheckedType
	if pk := p.Spec.ParamKind; pk != nil {
		if gv, err := schema.ParseGroupVersion(pk.APIVersion); err == nil {
			if params, err = c.paramsKind(gv.WithKind(pk.Kind)); err != nil {
				return err
			}
		}
	}
	exprs := celtypes.PolicyExpressions{Validations: p.Spec.Validations}
	for _, v := range p.Spec.Variables {
		exprs.VariableNames = append(exprs.VariableNames, v.Name)
		exprs.VariableExpressions = append(exprs.VariableExpressions, v.Expression)
	}
	warnings, err := celeval.TypeCheck(ctx, objects, params, exprs)
	if err != nil {
		return err
	}
	type typeChecking struct {
		ExpressionWarnings []celtypes.ExpressionWarning `json:"expressionWarnings,omitempty"`
	}
	body, err := json.Marshal(map[string]any{
		"apiVersion": "admissionregistration.k8s.io/v1",
		"kind":       "ValidatingAdmissionPolicy",
		"metadata":   map[string]any{"name": p.Metadata.Name},
		"status": map[string]any{
			"observedGeneration": p.Metadata.Generation,
			"typeChecking":       typeChecking{ExpressionWarnings: warnings},
		},
	})
	if err != nil {
		return err
	}
	path := policiesPath + "/" + url.PathEscape(p.Metadata.Name) + "/status?fieldManager=" + policyStatusFieldManager + "&force=true"
	header := http.Header{"Content-Type": {"application/apply-patch+yaml"}, "Accept": {"application/json"}}
	resp, err := c.api.Raw(ctx, http.MethodPatch, path, header, body)
	if err != nil {
		return err
	}
	return resp.Err(http.MethodPatch, path)
}

// policyTypes are the kinds p's expressions are checked against, by
// group, version and kind: those of the group/version/resource
// combinations its matchConstraints' resourceRules name. The documentation
// says a "*" is not expanded and that only the first ten combinations by
// group, version and resource are checked; kube-controller-manager skips a
// rule with a "*" in its apiGroups or apiVersions, a "*" or a subresource
// in its resources, and stops at the tenth kind one rule resolves to
// (combinations naming no resource do not count). Custom resources are
// checked against the schema their CRD publishes, as
// kube-controller-manager resolves them from the OpenAPI documents.
func (c *policyStatusController) policyTypes(p statusPolicy) ([]celtypes.CheckedType, error) {
	if p.Spec.MatchConstraints == nil {
		return nil, nil
	}
	var out []celtypes.CheckedType
	sorted := func(list []string) []string { return slices.Sorted(slices.Values(list)) }
	wild := func(s string) bool { return strings.Contains(s, "*") }
	for _, r := range p.Spec.MatchConstraints.ResourceRules {
		if slices.ContainsFunc(r.APIGroups, wild) || slices.ContainsFunc(r.APIVersions, wild) {
			continue
		}
		count := 0
		for _, g := range sorted(r.APIGroups) {
			for _, v := range sorted(r.APIVersions) {
				for _, res := range sorted(r.Resources) {
					if strings.ContainsAny(res, "*/") {
						continue
					}
					r := c.catalog.Lookup(schema.GroupVersionResource{Group: g, Version: v, Resource: res})
					if r == nil {
						continue
					}
					t, err := kindOf(r)
					if err != nil {
						return nil, err
					}
					if t != nil && !slices.Contains(out, *t) {
						out = append(out, *t)
					}
					if count++; count == maxCheckedTypes {
						return sortTypes(out), nil
					}
				}
			}
		}
	}
	return sortTypes(out), nil
}

func sortTypes(list []celtypes.CheckedType) []celtypes.CheckedType {
	slices.SortFunc(list, func(a, b celtypes.CheckedType) int {
		return cmp.Or(cmp.Compare(a.Group, b.Group), cmp.Compare(a.Version, b.Version), cmp.Compare(a.Kind, b.Kind))
	})
	return list
}

// kindOf is the kind of r's objects with its schema, or nil for a kind
// kubeplay has no schema of: a built-in kind's from the OpenAPI documents,
// a custom kind's as its CRD publishes it, with apiVersion, kind and the
// whole of the object metadata.
func kindOf(r *catalog.Resource) (*celtypes.CheckedType, error) {
	gvk := r.GroupVersionKind()
	t := &celtypes.CheckedType{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind}
	if r.Custom != nil {
		meta, err := objectMetaSchema()
		if err != nil || r.Custom.Schema == nil {
			return nil, err
		}
		s := *r.Custom.Schema
		s.Properties = maps.Clone(s.Properties)
		if s.Properties == nil {
			s.Properties = map[string]*structural.Schema{}
		}
		s.Properties["apiVersion"], s.Properties["kind"] = &structural.Schema{Type: "string"}, &structural.Schema{Type: "string"}
		s.Properties["metadata"] = meta
		t.Schema = &s
		return t, nil
	}
	s, ok, err := openapi.Structural(gvk)
	if err != nil {
		return nil, fmt.Errorf("schema of %v: %w", gvk, err)
	}
	if !ok {
		return nil, nil
	}
	t.Schema = s
	return t, nil
}

// paramsKind is the kind gvk of a policy's params with its schema (see
// kindOf), or nil.
func (c *policyStatusController) paramsKind(gvk schema.GroupVersionKind) (*celtypes.CheckedType, error) {
	for _, r := range c.catalog.Resources(gvk.GroupVersion()) {
		if r.Kind == gvk.Kind {
			return kindOf(r)
		}
	}
	return kindOf(&catalog.Resource{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind})
}

// objectMetaSchema is the schema of an object's metadata (ObjectMeta), as
// the OpenAPI documents give it for every kind.
func objectMetaSchema() (*structural.Schema, error) {
	gvk := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	s, _, err := openapi.Structural(gvk)
	if err != nil {
		return nil, fmt.Errorf("schema of %v: %w", gvk, err)
	}
	return s.Properties["metadata"], nil
}
