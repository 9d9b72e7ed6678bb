package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"kubeplay/server/authn"
	"kubeplay/server/catalog"
	"kubeplay/server/celrules"
)

var (
	policiesGVR = schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingadmissionpolicies"}
	bindingsGVR = schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingadmissionpolicybindings"}
)

// The part of a ValidatingAdmissionPolicy and of its binding admission reads.
type (
	policy struct {
		Metadata struct {
			Name            string `json:"name"`
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
		Spec struct {
			FailurePolicy *string `json:"failurePolicy"`
			ParamKind     *struct {
				APIVersion string `json:"apiVersion"`
				Kind       string `json:"kind"`
			} `json:"paramKind"`
			MatchConstraints *matchResources   `json:"matchConstraints"`
			MatchConditions  []namedExpression `json:"matchConditions"`
			Variables        []namedExpression `json:"variables"`
			Validations      []struct {
				Expression        string `json:"expression"`
				Message           string `json:"message"`
				MessageExpression string `json:"messageExpression"`
				Reason            string `json:"reason"`
			} `json:"validations"`
		} `json:"spec"`
	}
	namedExpression struct {
		Name       string `json:"name"`
		Expression string `json:"expression"`
	}
	policyBinding struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Spec struct {
			PolicyName        string          `json:"policyName"`
			ValidationActions []string        `json:"validationActions"`
			MatchResources    *matchResources `json:"matchResources"`
			ParamRef          *struct {
				Name                    string                `json:"name"`
				Namespace               string                `json:"namespace"`
				Selector                *metav1.LabelSelector `json:"selector"`
				ParameterNotFoundAction string                `json:"parameterNotFoundAction"`
			} `json:"paramRef"`
		} `json:"spec"`
	}
	matchResources struct {
		NamespaceSelector    *metav1.LabelSelector `json:"namespaceSelector"`
		ObjectSelector       *metav1.LabelSelector `json:"objectSelector"`
		ResourceRules        []resourceRule        `json:"resourceRules"`
		ExcludeResourceRules []resourceRule        `json:"excludeResourceRules"`
	}
	resourceRule struct {
		APIGroups     []string `json:"apiGroups"`
		APIVersions   []string `json:"apiVersions"`
		Operations    []string `json:"operations"`
		Resources     []string `json:"resources"`
		ResourceNames []string `json:"resourceNames"`
		Scope         string   `json:"scope"`
	}
)

// compiledPolicy is a policy's programs, kept while its resourceVersion
// stays the same. A nil program is an expression that did not compile
// (err): it fails as the policy's failurePolicy says.
type compiledPolicy struct {
	resourceVersion string
	policy          policy
	conditions      []compiledExpression
	variables       []compiledExpression
	validations     []compiledValidation
}

type compiledExpression struct {
	name, expression string
	program          cel.Program
	err              error
}

type compiledValidation struct {
	compiledExpression
	message *compiledExpression
}

var admissionEnv = sync.OnceValues(celrules.AdmissionEnv)

func compileExpression(name, expr string, out *types.Type) compiledExpression {
	c := compiledExpression{name: name, expression: expr}
	env, err := admissionEnv()
	if err == nil {
		c.program, c.err = celrules.AdmissionProgram(env, expr, out)
	} else {
		c.err = err
	}
	return c
}

func compilePolicy(p policy) *compiledPolicy {
	c := &compiledPolicy{resourceVersion: p.Metadata.ResourceVersion, policy: p}
	for _, m := range p.Spec.MatchConditions {
		c.conditions = append(c.conditions, compileExpression(m.Name, m.Expression, types.BoolType))
	}
	for _, v := range p.Spec.Variables {
		c.variables = append(c.variables, compileExpression(v.Name, v.Expression, nil))
	}
	for _, v := range p.Spec.Validations {
		cv := compiledValidation{compiledExpression: compileExpression("", v.Expression, types.BoolType)}
		if v.MessageExpression != "" {
			m := compileExpression("", v.MessageExpression, types.StringType)
			cv.message = &m
		}
		c.validations = append(c.validations, cv)
	}
	return c
}

// policyFor is the compiled policy stored as raw, compiled again only when
// its resourceVersion changed.
func (s *Server) policyFor(p policy) *compiledPolicy {
	if c, ok := s.policies.Load(p.Metadata.Name); ok && c.(*compiledPolicy).resourceVersion == p.Metadata.ResourceVersion {
		return c.(*compiledPolicy)
	}
	c := compilePolicy(p)
	s.policies.Store(p.Metadata.Name, c)
	return c
}

// listDecoded decodes every stored object of a cluster-scoped resource into
// a T, with its revision (resourceVersion).
func listDecoded[T any](ctx context.Context, s *Server, gvr schema.GroupVersionResource) ([]T, []int64, error) {
	res := catalog.LookupBuiltin(gvr)
	list, err := s.store.List(ctx, collectionPrefix(res, ""), "", 0, 0)
	if err != nil {
		return nil, nil, storeError(res, "", err)
	}
	out := make([]T, len(list.Items))
	revs := make([]int64, len(list.Items))
	for i, kv := range list.Items {
		if err := json.Unmarshal(kv.Value, &out[i]); err != nil {
			return nil, nil, apierrors.NewInternalError(fmt.Errorf("stored object %s is corrupt: %w", kv.Key, err))
		}
		revs[i] = kv.ModRevision
	}
	return out, revs, nil
}

// admitPolicies is the ValidatingAdmissionPolicy plugin, on a create (old
// nil), an update or a delete (obj nil): each binding's
// policy that matches the request evaluates its validations, and the first
// that fails denies the request (Deny) or adds a warning (Warn). As in
// kube-apiserver, the admission configuration resources themselves are
// exempt.
func (s *Server) admitPolicies(ctx context.Context, req *request, obj, old object, dryRun bool) error {
	if req.res.Group == "admissionregistration.k8s.io" {
		return nil
	}
	bindings, _, err := listDecoded[policyBinding](ctx, s, bindingsGVR)
	if err != nil || len(bindings) == 0 {
		return err
	}
	policies, revs, err := listDecoded[policy](ctx, s, policiesGVR)
	if err != nil {
		return err
	}
	for i := range policies {
		policies[i].Metadata.ResourceVersion = strconv.FormatInt(revs[i], 10)
	}
	a, err := s.newAttributes(ctx, req, obj, old, dryRun)
	if err != nil {
		return err
	}
	// Every binding is evaluated, for its warnings, before the first denial
	// is returned.
	var denied error
	for _, b := range bindings {
		i := slices.IndexFunc(policies, func(p policy) bool { return p.Metadata.Name == b.Spec.PolicyName })
		if i < 0 || !a.matches(policies[i].Spec.MatchConstraints, false) || b.Spec.MatchResources != nil && !a.matches(b.Spec.MatchResources, true) {
			continue
		}
		c := s.policyFor(policies[i])
		msg, reason, err := s.decide(ctx, a, c, b)
		var unconfigured errUnconfigured
		if errors.As(err, &unconfigured) {
			// A policy that cannot run fails as its failurePolicy says,
			// whatever its binding's actions.
			if c.fails() && denied == nil {
				denied = a.denial(fmt.Sprintf("ValidatingAdmissionPolicy '%s' denied request: failed to configure policy: %s", c.policy.Metadata.Name, err), metav1.StatusReasonInvalid)
			}
			continue
		}
		if err != nil {
			return err
		}
		if msg == "" {
			continue
		}
		for _, action := range b.Spec.ValidationActions {
			switch {
			case action == "Deny" && denied == nil:
				denied = a.denial(fmt.Sprintf("ValidatingAdmissionPolicy '%s' with binding '%s' denied request: %s", c.policy.Metadata.Name, b.Metadata.Name, msg), reason)
			case action == "Warn":
				req.warnings = append(req.warnings, fmt.Sprintf("Validation failed for ValidatingAdmissionPolicy '%s' with binding '%s': %s", c.policy.Metadata.Name, b.Metadata.Name, msg))
			}
		}
	}
	return denied
}

// decide evaluates policy c, as bound by b, on a request: on each of its
// params (see params) if it has a paramKind, the first failure.
func (s *Server) decide(ctx context.Context, a *attributes, c *compiledPolicy, b policyBinding) (string, metav1.StatusReason, error) {
	// Without a paramRef, params is null.
	if c.policy.Spec.ParamKind == nil || b.Spec.ParamRef == nil {
		msg, reason := c.evaluate(a, nil)
		return msg, reason, nil
	}
	params, err := s.params(ctx, a, c, b)
	if err != nil {
		return "", "", err
	}
	if len(params) == 0 {
		if b.Spec.ParamRef.ParameterNotFoundAction == "Allow" {
			return "", "", nil
		}
		return "failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction", metav1.StatusReasonInvalid, nil
	}
	for _, p := range params {
		if msg, reason := c.evaluate(a, p); msg != "" {
			return msg, reason, nil
		}
	}
	return "", "", nil
}

// params are the objects of the policy's paramKind the binding's paramRef
// names or selects: in the paramRef's namespace or, for a namespaced kind,
// else in the request's.
func (s *Server) params(ctx context.Context, a *attributes, c *compiledPolicy, b policyBinding) ([]object, error) {
	ref := b.Spec.ParamRef
	kind := c.policy.Spec.ParamKind
	gv, err := schema.ParseGroupVersion(kind.APIVersion)
	if err != nil {
		return nil, nil
	}
	i := slices.IndexFunc(s.catalog.Resources(gv), func(r *catalog.Resource) bool { return r.Kind == kind.Kind })
	if i < 0 {
		return nil, errUnconfigured(fmt.Sprintf("failed to find resource referenced by paramKind: '%s'", gv.WithKind(kind.Kind)))
	}
	res := s.catalog.Resources(gv)[i]
	ns := ""
	if res.Namespaced {
		ns = ref.Namespace
		if ns == "" {
			ns = a.req.namespace
		}
	}
	if ref.Name != "" {
		obj, _, err := s.getObject(ctx, res, ns, ref.Name)
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		return []object{obj}, nil
	}
	list, err := s.store.List(ctx, collectionPrefix(res, ns), "", 0, 0)
	if err != nil {
		return nil, storeError(res, "", err)
	}
	var out []object
	for _, kv := range list.Items {
		obj, err := decodeStored(res, kv)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		if selects(ref.Selector, metadata(obj)) {
			out = append(out, obj)
		}
	}
	return out, nil
}

// errUnconfigured says why a policy cannot run at all.
type errUnconfigured string

func (e errUnconfigured) Error() string { return string(e) }

// fails says whether the policy fails a request it cannot evaluate.
func (c *compiledPolicy) fails() bool {
	return c.policy.Spec.FailurePolicy == nil || *c.policy.Spec.FailurePolicy == "Fail"
}

// attributes are what a policy sees of a request.
type attributes struct {
	req       *request
	operation string
	obj, old  object
	// subject is the object a delete removes, else the one written: its
	// name and labels are matched.
	subject   object
	namespace object // nil for a cluster-scoped resource
	vars      map[string]any
}

func (s *Server) newAttributes(ctx context.Context, req *request, obj, old object, dryRun bool) (*attributes, error) {
	a := &attributes{req: req, operation: "CREATE", obj: obj, old: old, subject: obj}
	switch {
	case obj == nil:
		a.operation, a.subject = "DELETE", old
	case old != nil:
		a.operation = "UPDATE"
	}
	if req.res.Namespaced {
		ns, _, err := s.getObject(ctx, catalog.LookupBuiltin(namespacesGVR), "", req.namespace)
		if err != nil && !apierrors.IsNotFound(err) {
			return nil, err
		}
		a.namespace = ns
	}
	userInfo := map[string]any{}
	if u := authn.UserFrom(ctx); u != nil {
		userInfo["username"] = u.Name
		if u.UID != "" {
			userInfo["uid"] = u.UID
		}
		groups := make([]any, len(u.Groups))
		for i, g := range u.Groups {
			groups[i] = g
		}
		userInfo["groups"] = groups
	}
	gvk := req.res.GroupVersionKind()
	request := map[string]any{
		"kind":      map[string]any{"group": gvk.Group, "version": gvk.Version, "kind": gvk.Kind},
		"resource":  map[string]any{"group": req.res.Group, "version": req.res.Version, "resource": req.res.Resource},
		"name":      str(metadata(a.subject), "name"),
		"operation": a.operation,
		"userInfo":  userInfo,
		"dryRun":    dryRun,
	}
	if req.subresource != "" {
		request["subResource"] = req.subresource
	}
	if req.namespace != "" {
		request["namespace"] = req.namespace
	}
	a.vars = map[string]any{"object": nil, "request": request, "params": nil}
	if obj != nil {
		a.vars["object"] = obj
	}
	if old != nil {
		a.vars["oldObject"] = old
	} else {
		a.vars["oldObject"] = nil
	}
	if a.namespace != nil {
		a.vars["namespaceObject"] = map[string]any(a.namespace)
	} else {
		a.vars["namespaceObject"] = nil
	}
	return a, nil
}

// matches says whether a request is one m selects, m being a policy's
// matchConstraints or (binding) a binding's matchResources.
func (a *attributes) matches(m *matchResources, binding bool) bool {
	if m == nil {
		return false
	}
	if !selects(m.ObjectSelector, metadata(a.subject)) {
		return false
	}
	// A namespace matches namespaceSelector itself; a cluster-scoped
	// object other than a namespace always does.
	switch {
	case a.req.res.Group == "" && a.req.res.Resource == "namespaces":
		if !selects(m.NamespaceSelector, metadata(a.subject)) {
			return false
		}
	case a.namespace != nil:
		if !selects(m.NamespaceSelector, metadata(a.namespace)) {
			return false
		}
	}
	in := func(r resourceRule) bool { return a.ruleMatches(r) }
	// A binding's rules only narrow its policy's: without any, it has all.
	return (binding && len(m.ResourceRules) == 0 || slices.ContainsFunc(m.ResourceRules, in)) && !slices.ContainsFunc(m.ExcludeResourceRules, in)
}

func selects(sel *metav1.LabelSelector, md map[string]any) bool {
	if sel == nil {
		return true
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return false
	}
	set := labels.Set{}
	if l, ok := md["labels"].(map[string]any); ok {
		for k, v := range l {
			set[k], _ = v.(string)
		}
	}
	return s.Matches(set)
}

func (a *attributes) ruleMatches(r resourceRule) bool {
	res := a.req.res
	has := func(list []string, v string) bool { return slices.Contains(list, "*") || slices.Contains(list, v) }
	if !has(r.APIGroups, res.Group) || !has(r.APIVersions, res.Version) || !has(r.Operations, a.operation) {
		return false
	}
	if len(r.ResourceNames) > 0 && !slices.Contains(r.ResourceNames, str(metadata(a.subject), "name")) {
		return false
	}
	switch r.Scope {
	case "Namespaced":
		if !res.Namespaced {
			return false
		}
	case "Cluster":
		if res.Namespaced {
			return false
		}
	}
	name := res.Resource
	if a.req.subresource != "" {
		name += "/" + a.req.subresource
	}
	for _, want := range r.Resources {
		group, sub, _ := strings.Cut(want, "/")
		if want == name || want == "*/*" || group == "*" && sub == a.req.subresource && a.req.subresource != "" ||
			want == "*" && a.req.subresource == "" || sub == "*" && group == res.Resource {
			return true
		}
	}
	return false
}

// evaluate runs a policy on a request: the message of its first failed
// validation and the reason of the denial, or "" when it admits it (or
// does not apply).
func (c *compiledPolicy) evaluate(a *attributes, params object) (msg string, reason metav1.StatusReason) {
	fail := c.fails()
	vars := make(map[string]any, len(a.vars)+1)
	for k, v := range a.vars {
		vars[k] = v
	}
	if params != nil {
		vars["params"] = params
	}
	variables := map[string]any{}
	vars["variables"] = variables
	for _, v := range c.variables {
		// Evaluated in order, so that a variable may use those before it;
		// one that fails fails the expressions that use it.
		if v.err != nil {
			variables[v.name] = types.NewErr("%v", v.err)
			continue
		}
		out, _, err := v.program.Eval(vars)
		if err != nil {
			out = types.NewErr("%v", err)
		}
		variables[v.name] = out
	}
	for _, m := range c.conditions {
		if m.err != nil {
			continue
		}
		out, _, err := m.program.Eval(vars)
		if err != nil {
			if fail {
				return fmt.Sprintf("expression '%s' resulted in error: %v", m.expression, err), metav1.StatusReasonInvalid
			}
			return "", ""
		}
		if b, ok := out.(types.Bool); ok && !bool(b) {
			return "", ""
		}
	}
	for i, v := range c.validations {
		spec := c.policy.Spec.Validations[i]
		reason = metav1.StatusReason(spec.Reason)
		if reason == "" {
			reason = metav1.StatusReasonInvalid
		}
		var out any
		err := v.err
		if err == nil {
			out, _, err = v.program.Eval(vars)
		}
		if err != nil {
			if !fail {
				continue
			}
			return fmt.Sprintf("expression '%s' resulted in error: %v", v.expression, err), reason
		}
		if b, ok := out.(types.Bool); ok && bool(b) {
			continue
		}
		msg = "failed expression: " + strings.TrimSpace(v.expression)
		if spec.Message != "" {
			msg = spec.Message
		}
		if v.message != nil && v.message.program != nil {
			if m, _, err := v.message.program.Eval(vars); err == nil {
				if s, ok := m.(types.String); ok && strings.TrimSpace(string(s)) != "" {
					msg = string(s)
				}
			}
		}
		return msg, reason
	}
	return "", ""
}

// denial is the error of a denied request: "is forbidden" whatever its
// reason, with the code of the reason.
func (a *attributes) denial(msg string, reason metav1.StatusReason) error {
	code := map[metav1.StatusReason]int32{
		metav1.StatusReasonForbidden:             http.StatusForbidden,
		metav1.StatusReasonUnauthorized:          http.StatusUnauthorized,
		metav1.StatusReasonRequestEntityTooLarge: http.StatusRequestEntityTooLarge,
	}[reason]
	if code == 0 {
		code = http.StatusUnprocessableEntity
	}
	gr := a.req.res.GroupResource()
	name := str(metadata(a.subject), "name")
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    code,
		Reason:  reason,
		Message: fmt.Sprintf("%s %q is forbidden: %s", gr.String(), name, msg),
		Details: &metav1.StatusDetails{Name: name, Group: gr.Group, Kind: gr.Resource, Causes: []metav1.StatusCause{{Message: msg}}},
	}}
}
