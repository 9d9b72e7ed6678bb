package server

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/server/audit"
	"kubeplay/server/authn"
	"kubeplay/server/authz"
)

// admitCreate runs, on an object a request is about to create (dry runs
// included), what kube-apiserver runs between decoding and storing it, in
// its order:
//
//  1. Mutating admission (after NamespaceLifecycle, which the callers run
//     first): the plugins of the resource's strategy (admitNew): on a new
//     Pod, a new claim; then the mutating webhooks.
//  2. The resource's own policy: for roles and bindings, the RBAC
//     escalation check (kube-apiserver's RBAC storage makes it after
//     mutating admission).
//  3. The type's validation, on the object with its server-set metadata,
//     with metaErrs, the errors of its name and finalizers found before
//     (kube-apiserver reports them in the same 422).
//  4. For a create by PUT or by apply, the authorization of the create
//     verb besides the request's own.
//  5. Validating admission (the validating phase of those plugins, then
//     admitValidating's), which may only reject or warn.
func (s *admission) admitCreate(ctx context.Context, req *request, obj object, metaErrs field.ErrorList, dryRun bool) error {
	res := req.res
	var validate func() error
	if admitNew := strategyOf(res).admitNew; admitNew != nil {
		var err error
		if validate, err = admitNew(s, ctx, res, req.namespace, obj); err != nil {
			return err
		}
	}
	if _, err := s.admitMutatingWebhooks(ctx, req, obj, nil, dryRun, nil); err != nil {
		return err
	}
	if err := s.confirmNoEscalation(ctx, req, obj, nil); err != nil {
		return err
	}
	s.prepareForCreate(res, obj)
	if prepare := strategyOf(res).prepareForCreateBy; prepare != nil {
		prepare(ctx, obj)
	}
	if errs, err := validateCreate(ctx, res, obj); err != nil {
		return err
	} else if errs = append(metaErrs, errs...); len(errs) > 0 {
		return errInvalid(res, str(metadata(obj), "name"), errs)
	}
	if req.verb != "create" {
		if err := s.authorizeCreate(ctx, req); err != nil {
			return err
		}
	}
	if validate != nil {
		if err := validate(); err != nil {
			return err
		}
	}
	return s.admitValidating(ctx, req, obj, nil, dryRun)
}

// admitValidating is the validating admission of kube-apiserver's default
// plugins that applies to every resource, in their order, on a create (old
// nil), an update or a delete (obj nil): ValidatingAdmissionPolicy, the
// validating webhooks, then ResourceQuota.
func (s *admission) admitValidating(ctx context.Context, req *request, obj, old object, dryRun bool) error {
	if err := s.admitPolicies(ctx, req, obj, old, dryRun); err != nil {
		return err
	}
	if err := s.admitValidatingWebhooks(ctx, req, obj, old, dryRun); err != nil {
		return err
	}
	return s.admitQuota(ctx, req, obj, old, dryRun)
}

// admitDeletion is the admission of a delete of obj: the mutating webhooks
// (which may not change it), then admitValidating.
func (s *admission) admitDeletion(ctx context.Context, req *request, obj object, dryRun bool) error {
	if _, err := s.admitMutatingWebhooks(ctx, req, nil, obj, dryRun, nil); err != nil {
		return err
	}
	return s.admitValidating(ctx, req, nil, obj, dryRun)
}

// authorizeCreate is kube-apiserver's second authorization of a PUT or an
// apply that creates its object: its user must also be allowed to create.
func (s *admission) authorizeCreate(ctx context.Context, req *request) error {
	attrs := authz.Attributes{User: authn.UserFrom(ctx), Verb: "create", ResourceRequest: true,
		APIGroup: req.group, APIVersion: req.version, Resource: req.resource, Namespace: req.namespace, Name: req.name}
	allowed, reason, err := s.authz.Authorize(ctx, attrs)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	if !allowed {
		if rec := audit.FromContext(ctx); rec != nil {
			rec.Decision, rec.Reason = "forbid", reason
		}
		return authz.Forbidden(attrs, reason)
	}
	return nil
}

// rbacObject is the part of a role or binding the escalation check reads.
type rbacObject struct {
	Rules           []authz.Rule   `json:"rules"`
	AggregationRule map[string]any `json:"aggregationRule"`
	RoleRef         authz.RoleRef  `json:"roleRef"`
}

func decodeRBAC(obj object) (rbacObject, error) {
	var o rbacObject
	b, err := json.Marshal(obj)
	if err == nil {
		err = json.Unmarshal(b, &o)
	}
	return o, err
}

// fullAuthority is what a user must hold to write a ClusterRole's
// aggregationRule, which can gather any permission.
var fullAuthority = []authz.Rule{
	{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}},
	{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}},
}

// confirmNoEscalation is kube-apiserver's RBAC escalation check, made on
// every create, update, patch and apply of a role or binding, before the
// type's validation: a user can write a role only with rules it holds (or
// the escalate verb on it), and a binding only to a role whose rules it
// holds (or the bind verb on it). An update (old set) is checked like a
// create, even one that changes only labels, unless it changes nothing but
// the fields the garbage collector writes.
func (s *admission) confirmNoEscalation(ctx context.Context, req *request, obj, old object) error {
	if req.res.Group != "rbac.authorization.k8s.io" {
		return nil
	}
	err := s.escalation(ctx, req, obj, old)
	if rec := audit.FromContext(ctx); rec != nil && apierrors.IsForbidden(err) {
		rec.RefusedBy = "RBAC escalation check"
	}
	return err
}

func (s *admission) escalation(ctx context.Context, req *request, obj, old object) error {
	user := authn.UserFrom(ctx)
	if user.InGroup(authn.Masters) || old != nil && onlyGCFieldsChange(obj, old) {
		return nil
	}
	gr := req.res.GroupResource()
	name := str(metadata(obj), "name")
	o, err := decodeRBAC(obj)
	if err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	allowedTo := func(verb, resource, resourceName string) (bool, error) {
		ok, _, err := s.authz.Authorize(ctx, authz.Attributes{User: user, Verb: verb, ResourceRequest: true,
			APIGroup: gr.Group, Resource: resource, Namespace: req.namespace, Name: resourceName})
		return ok, err
	}
	switch gr.Resource {
	case "roles", "clusterroles":
		// The escalate verb is asked for the name on the URL: none on a
		// POST, so a rule naming roles never allows escalating by create.
		if ok, err := allowedTo("escalate", gr.Resource, req.name); err != nil || ok {
			return err
		}
		if err := s.authz.Escalation(ctx, user, req.namespace, gr, name, o.Rules); err != nil {
			return err
		}
		if o.AggregationRule != nil && s.authz.Escalation(ctx, user, req.namespace, gr, name, fullAuthority) != nil {
			return apierrors.NewForbidden(gr, name, errors.New("must have cluster-admin privileges to use the aggregationRule"))
		}
		return nil
	case "rolebindings", "clusterrolebindings":
		roleNS, roleResource := req.namespace, "roles"
		if o.RoleRef.Kind == "ClusterRole" {
			roleNS, roleResource = "", "clusterroles"
		}
		if ok, err := allowedTo("bind", roleResource, o.RoleRef.Name); err != nil || ok {
			return err
		}
		rules, err := s.authz.Rules.RoleRules(ctx, roleNS, o.RoleRef.Name)
		if errors.Is(err, authz.ErrRoleNotFound) {
			return apierrors.NewNotFound(gr, o.RoleRef.Name)
		}
		if err != nil {
			return apierrors.NewInternalError(err)
		}
		return s.authz.Escalation(ctx, user, req.namespace, gr, name, rules)
	}
	return nil
}

// onlyGCFieldsChange reports whether obj differs from old at most in the
// fields the garbage collector writes (ownerReferences, finalizers) and
// those the server rewrites anyway (managedFields, selfLink), comparing
// as kube-apiserver compares typed objects: an empty value is no value.
func onlyGCFieldsChange(obj, old object) bool {
	strip := func(o object) any {
		c := deepCopyObject(o)
		md := metadata(c)
		for _, k := range []string{"ownerReferences", "finalizers", "managedFields", "selfLink"} {
			delete(md, k)
		}
		return dropEmpty(map[string]any(c))
	}
	return reflect.DeepEqual(strip(obj), strip(old))
}

// dropEmpty returns v without the map entries whose value is empty (null,
// "", false, an empty list or map), recursively.
func dropEmpty(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, x := range v {
			if x = dropEmpty(x); !isEmptyValue(x) {
				out[k] = x
			}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = dropEmpty(x)
		}
		return out
	}
	return v
}

func isEmptyValue(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case string:
		return v == ""
	case bool:
		return !v
	case map[string]any:
		return len(v) == 0
	case []any:
		return len(v) == 0
	}
	return false
}
