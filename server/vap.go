package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ktypes "k8s.io/apimachinery/pkg/types"

	"kubeplay/server/audit"
	"kubeplay/server/authn"
	"kubeplay/server/authz"
	"kubeplay/server/catalog"
	"kubeplay/server/celeval"
	"kubeplay/server/celtypes"
	"kubeplay/server/fieldmanager"
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
			MatchConstraints *matchResources            `json:"matchConstraints"`
			MatchConditions  []celtypes.NamedExpression `json:"matchConditions"`
			Variables        []celtypes.NamedExpression `json:"variables"`
			Validations      []celtypes.Validation      `json:"validations"`
			AuditAnnotations []celtypes.AuditAnnotation `json:"auditAnnotations"`
		} `json:"spec"`
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
		MatchPolicy          string                `json:"matchPolicy"`
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
// stays the same.
type compiledPolicy struct {
	resourceVersion string
	policy          policy
	program         *celeval.Policy
}

func compilePolicy(ctx context.Context, p policy) (*compiledPolicy, error) {
	spec := celtypes.Policy{MatchConditions: p.Spec.MatchConditions, Variables: p.Spec.Variables,
		Validations: p.Spec.Validations, AuditAnnotations: p.Spec.AuditAnnotations, Fail: p.fails()}
	program, err := celeval.CompilePolicy(ctx, spec)
	if err != nil {
		return nil, err
	}
	return &compiledPolicy{resourceVersion: p.Metadata.ResourceVersion, policy: p, program: program}, nil
}

// policyFor is the compiled policy stored as raw, compiled again only when
// its resourceVersion changed.
func (s *admission) policyFor(ctx context.Context, p policy) (*compiledPolicy, error) {
	if c, ok := s.policies.Load(p.Metadata.Name); ok && c.(*compiledPolicy).resourceVersion == p.Metadata.ResourceVersion {
		return c.(*compiledPolicy), nil
	}
	c, err := compilePolicy(ctx, p)
	if err != nil {
		return nil, err
	}
	s.policies.Store(p.Metadata.Name, c)
	return c, nil
}

// listDecoded decodes every stored object of a cluster-scoped resource into
// a T, with its revision (resourceVersion).
func listDecoded[T any](ctx context.Context, s *admission, gvr schema.GroupVersionResource) ([]T, []int64, error) {
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
func (s *admission) admitPolicies(ctx context.Context, req *request, obj, old object, dryRun bool) error {
	if req.res.Group == "admissionregistration.k8s.io" {
		return nil
	}
	rec := audit.FromContext(ctx)
	stage := audit.Stage{Phase: audit.Validating, Plugin: "ValidatingAdmissionPolicy"}
	bindings, _, err := listDecoded[policyBinding](ctx, s, bindingsGVR)
	if err != nil || len(bindings) == 0 {
		return rec.Ran(stage, err)
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
	var audited []auditedFailure
	defer func() { auditFailures(rec, audited) }()
	evaluated := false
	for _, b := range bindings {
		i := slices.IndexFunc(policies, func(p policy) bool { return p.Metadata.Name == b.Spec.PolicyName })
		if i < 0 {
			continue
		}
		matched := a.match(policies[i].Spec.MatchConstraints, false)
		if matched == nil || b.Spec.MatchResources != nil && a.match(b.Spec.MatchResources, true) == nil {
			continue
		}
		evaluated = true
		c, err := s.policyFor(ctx, policies[i])
		if err != nil {
			return err
		}
		deny, failure, err := s.evaluateBinding(ctx, req, a.as(matched), c, b)
		if err != nil {
			return err
		}
		if failure != nil {
			audited = append(audited, *failure)
		}
		// The journal names the binding whose denial is returned.
		var returned error
		if denied == nil {
			denied, returned = deny, deny
		}
		rec.Ran(audit.Stage{Phase: audit.Validating, Plugin: stage.Plugin, Policy: c.policy.Metadata.Name, Binding: b.Metadata.Name}, returned)
	}
	if !evaluated {
		rec.Ran(stage, nil)
	}
	return denied
}

// evaluateBinding evaluates policy c as bound by b on a request: the
// denial it returns, if its binding denies, the failure for the audit log,
// if it audits, and its warnings added to req.
func (s *admission) evaluateBinding(ctx context.Context, req *request, a *attributes, c *compiledPolicy, b policyBinding) (deny error, audited *auditedFailure, err error) {
	msg, reason, err := s.decide(ctx, a, c, b)
	var unconfigured errUnconfigured
	if errors.As(err, &unconfigured) {
		// A policy that cannot run fails as its failurePolicy says,
		// whatever its binding's actions.
		if c.policy.fails() {
			return a.denial(fmt.Sprintf("ValidatingAdmissionPolicy '%s' denied request: failed to configure policy: %s", c.policy.Metadata.Name, err), metav1.StatusReasonInvalid), nil, nil
		}
		return nil, nil, nil
	}
	if err != nil || msg == "" {
		return nil, nil, err
	}
	for _, action := range b.Spec.ValidationActions {
		switch action {
		case "Deny":
			deny = a.denial(fmt.Sprintf("ValidatingAdmissionPolicy '%s' with binding '%s' denied request: %s", c.policy.Metadata.Name, b.Metadata.Name, msg), reason)
		case "Warn":
			warn(ctx, fmt.Sprintf("Validation failed for ValidatingAdmissionPolicy '%s' with binding '%s': %s", c.policy.Metadata.Name, b.Metadata.Name, msg))
		case "Audit":
			audited = &auditedFailure{Message: msg, Policy: c.policy.Metadata.Name, Binding: b.Metadata.Name, ValidationActions: b.Spec.ValidationActions}
		}
	}
	return deny, audited, nil
}

// decide evaluates policy c, as bound by b, on a request: on each of its
// params (see params) if it has a paramKind, the first failure.
func (s *admission) decide(ctx context.Context, a *attributes, c *compiledPolicy, b policyBinding) (string, metav1.StatusReason, error) {
	// Without a paramRef, params is null.
	if c.policy.Spec.ParamKind == nil || b.Spec.ParamRef == nil {
		return c.evaluate(ctx, a, nil)
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
		if msg, reason, err := c.evaluate(ctx, a, p); msg != "" || err != nil {
			return msg, reason, err
		}
	}
	return "", "", nil
}

// params are the objects of the policy's paramKind the binding's paramRef
// names or selects: in the paramRef's namespace or, for a namespaced kind,
// else in the request's.
func (s *admission) params(ctx context.Context, a *attributes, c *compiledPolicy, b policyBinding) ([]object, error) {
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
func (p policy) fails() bool {
	return p.Spec.FailurePolicy == nil || *p.Spec.FailurePolicy == "Fail"
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
	// equivalents are the other group versions of the request's resource
	// (the same objects), which a policy's rules match under matchPolicy
	// Equivalent.
	equivalents []*catalog.Resource
	vars        map[string]any
	// authorizer answers the authorizer variable, requestResource its
	// requestResource.
	authorizer      celtypes.Authorizer
	requestResource celtypes.AuthzCheck
	// res is the resource the policy matched, as whose version it sees
	// the objects.
	res *catalog.Resource
}

func (s *admission) newAttributes(ctx context.Context, req *request, obj, old object, dryRun bool) (*attributes, error) {
	a := &attributes{req: req, operation: "CREATE", obj: obj, old: old, subject: obj, res: req.res}
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
	storage := catalog.StorageOf(req.res).Prefix
	for _, r := range s.catalog.All() {
		if r != req.res && catalog.StorageOf(r).Prefix == storage {
			a.equivalents = append(a.equivalents, r)
		}
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
	name := str(metadata(a.subject), "name")
	request := map[string]any{
		"name":            name,
		"operation":       a.operation,
		"userInfo":        userInfo,
		"dryRun":          dryRun,
		"options":         a.options(),
		"requestKind":     a.kind(req.res),
		"requestResource": resourceOf(req.res),
	}
	if req.subresource != "" {
		request["subResource"] = req.subresource
		request["requestSubResource"] = req.subresource
	}
	switch {
	case req.namespace != "":
		request["namespace"] = req.namespace
	case req.store.strategy.isNamespace:
		request["namespace"] = name // a namespace is in itself
	}
	a.vars = map[string]any{"object": nil, "oldObject": nil, "request": request, "params": nil, "namespaceObject": nil}
	a.authorizer = policyAuthorizer{ctx: ctx, s: s, user: authn.UserFrom(ctx)}
	a.requestResource = celtypes.AuthzCheck{Group: req.res.Group, Resource: req.res.Resource, Subresource: req.subresource, Namespace: req.namespace, Name: name}
	if obj != nil {
		a.vars["object"] = celNumbers(obj)
	}
	if old != nil {
		a.vars["oldObject"] = celNumbers(old)
	}
	if a.namespace != nil {
		a.vars["namespaceObject"] = map[string]any(a.namespace)
	}
	return a.as(req.res), nil
}

// celNumbers is a copy of obj with its JSON numbers (a body decoded as it
// came) as the integers and doubles CEL compares.
func celNumbers(obj object) any {
	return fieldmanager.PlainNumbers(deepCopyObject(obj))
}

// policyAuthorizer answers a policy's authorizer checks by RBAC, for the
// request's user.
type policyAuthorizer struct {
	ctx  context.Context
	s    *admission
	user *authn.User
}

func (p policyAuthorizer) Authorize(c celtypes.AuthzCheck) (bool, string, error) {
	user := p.user
	if c.ServiceAccountNamespace != "" || c.ServiceAccountName != "" {
		user = &authn.User{Name: authn.ServiceAccountPrefix + c.ServiceAccountNamespace + ":" + c.ServiceAccountName,
			Groups: authn.ServiceAccountGroups(c.ServiceAccountNamespace)}
	}
	if user == nil {
		return false, "", errors.New("no user to authorize")
	}
	attrs := authz.Attributes{User: user, Verb: c.Verb, Path: c.Path}
	if c.Path == "" {
		attrs = authz.Attributes{User: user, Verb: c.Verb, ResourceRequest: true, APIGroup: c.Group, APIVersion: "*",
			Resource: c.Resource, Subresource: c.Subresource, Namespace: c.Namespace, Name: c.Name}
	}
	return p.s.authz.Authorize(p.ctx, attrs)
}

// as is a seen as a policy that matched res sees it: with res's kind and
// resource, and the objects converted to res's version.
func (a *attributes) as(res *catalog.Resource) *attributes {
	out := *a
	out.res = res
	out.vars = maps.Clone(a.vars)
	request := maps.Clone(a.vars["request"].(map[string]any))
	request["kind"], request["resource"] = a.kind(res), resourceOf(res)
	out.vars["request"] = request
	if res != a.req.res {
		for k, o := range map[string]object{"object": a.obj, "oldObject": a.old} {
			if o != nil {
				converted := toStorage(a.req.res, deepCopyObject(o))
				fromStorage(res, converted)
				out.vars[k] = celNumbers(converted)
			}
		}
	}
	return &out
}

// kind is the kind of the objects a request to res (and the request's
// subresource) carries: a subresource's own (autoscaling/v1 Scale).
func (a *attributes) kind(res *catalog.Resource) map[string]any {
	gvk := res.GroupVersionKind()
	for _, sub := range res.Subresources {
		if sub.Name == a.req.subresource && sub.Kind != "" {
			gvk = schema.GroupVersionKind{Group: sub.Group, Version: sub.Version, Kind: sub.Kind}
		}
	}
	return map[string]any{"group": gvk.Group, "version": gvk.Version, "kind": gvk.Kind}
}

func resourceOf(res *catalog.Resource) map[string]any {
	return map[string]any{"group": res.Group, "version": res.Version, "resource": res.Resource}
}

// options are the request's options as kube-apiserver hands them to
// admission: CreateOptions or UpdateOptions (a patch's too) with the
// query's dryRun, fieldManager and fieldValidation, or the DeleteOptions.
func (a *attributes) options() map[string]any {
	if a.operation == "DELETE" {
		opts := metav1.DeleteOptions{}
		if a.req.deleteOptions != nil {
			opts = *a.req.deleteOptions
		}
		if opts.Preconditions == nil && a.req.store.strategy.isNamespace {
			// kube-apiserver deletes a namespace on condition of its uid.
			uid := ktypes.UID(str(metadata(a.old), "uid"))
			opts.Preconditions = &metav1.Preconditions{UID: &uid}
		}
		out := map[string]any{}
		if b, err := json.Marshal(opts); err == nil {
			_ = json.Unmarshal(b, &out) // a struct's JSON is an object
		}
		out["kind"], out["apiVersion"] = "DeleteOptions", "meta.k8s.io/v1"
		return out
	}
	kind := "CreateOptions"
	if a.operation == "UPDATE" {
		kind = "UpdateOptions"
	}
	out := map[string]any{"kind": kind, "apiVersion": "meta.k8s.io/v1"}
	q := a.req.query
	if dryRun := q["dryRun"]; len(dryRun) > 0 {
		list := make([]any, len(dryRun))
		for i, d := range dryRun {
			list[i] = d
		}
		out["dryRun"] = list
	}
	for _, k := range []string{"fieldManager", "fieldValidation"} {
		if v := q.Get(k); v != "" {
			out[k] = v
		}
	}
	return out
}

// match says which resource a request is to as m selects it, m being a
// policy's matchConstraints or (binding) a binding's matchResources: the
// request's own, or under matchPolicy Equivalent (the default) another
// version of it; nil if m does not select the request.
func (a *attributes) match(m *matchResources, binding bool) *catalog.Resource {
	if m == nil {
		return nil
	}
	// The object selector matches the object or, on an update or a
	// delete, the old one.
	if m.ObjectSelector != nil && !slices.ContainsFunc([]object{a.obj, a.old}, func(o object) bool { return o != nil && selects(m.ObjectSelector, metadata(o)) }) {
		return nil
	}
	// A namespace matches namespaceSelector itself; a cluster-scoped
	// object other than a namespace always does.
	switch {
	case a.req.store.strategy.isNamespace:
		if !selects(m.NamespaceSelector, metadata(a.subject)) {
			return nil
		}
	case a.namespace != nil:
		if !selects(m.NamespaceSelector, metadata(a.namespace)) {
			return nil
		}
	}
	in := func(res *catalog.Resource) func(resourceRule) bool {
		return func(r resourceRule) bool { return a.ruleMatches(r, res) }
	}
	if slices.ContainsFunc(m.ExcludeResourceRules, in(a.req.res)) {
		return nil
	}
	// A binding's rules only narrow its policy's: without any, it has all.
	if binding && len(m.ResourceRules) == 0 || slices.ContainsFunc(m.ResourceRules, in(a.req.res)) {
		return a.req.res
	}
	if m.MatchPolicy == "Exact" {
		return nil
	}
	for _, eq := range a.equivalents {
		if slices.ContainsFunc(m.ResourceRules, in(eq)) {
			return eq
		}
	}
	return nil
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

func (a *attributes) ruleMatches(r resourceRule, res *catalog.Resource) bool {
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
// does not apply); its audit annotations go to the audit record.
func (c *compiledPolicy) evaluate(ctx context.Context, a *attributes, params object) (msg string, reason metav1.StatusReason, err error) {
	in := celtypes.PolicyInput{Object: a.vars["object"], OldObject: a.vars["oldObject"], Request: a.vars["request"],
		NamespaceObject: a.vars["namespaceObject"], RequestResource: a.requestResource}
	if params != nil {
		in.Params = celNumbers(params)
	}
	out, err := c.program.Evaluate(ctx, in, a.authorizer)
	if err != nil {
		return "", "", err
	}
	for _, an := range out.Annotations {
		audit.FromContext(ctx).Annotate(c.policy.Metadata.Name+"/"+an.Key, an.Value)
	}
	return out.Message, metav1.StatusReason(out.Reason), nil
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
