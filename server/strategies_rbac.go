package server

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"kubeplay/server/audit"
	"kubeplay/server/authn"
	"kubeplay/server/authz"
	"kubeplay/server/validation"
)

// rbacStrategies returns the strategies of rbac.authorization.k8s.io's
// resources: a PUT of a missing role or binding creates it, and a user
// writes one only if it does not escalate its privileges.
func rbacStrategies() map[schema.GroupResource]strategy {
	return map[schema.GroupResource]strategy{
		{Group: "rbac.authorization.k8s.io", Resource: "roles"}: {
			createOnUpdate: true, validate: validation.Role, validateUpdate: validation.RoleUpdate,
			authorizeWrite: (*admission).confirmNoEscalation,
		},
		{Group: "rbac.authorization.k8s.io", Resource: "rolebindings"}: {
			createOnUpdate: true, validate: validation.RoleBinding, validateUpdate: validation.RoleBindingUpdate,
			authorizeWrite: (*admission).confirmNoEscalation,
		},
		{Group: "rbac.authorization.k8s.io", Resource: "clusterroles"}: {
			createOnUpdate: true, validate: validation.ClusterRole, validateUpdate: validation.ClusterRoleUpdate,
			authorizeWrite: (*admission).confirmNoEscalation,
		},
		{Group: "rbac.authorization.k8s.io", Resource: "clusterrolebindings"}: {
			createOnUpdate: true, validate: validation.ClusterRoleBinding, validateUpdate: validation.ClusterRoleBindingUpdate,
			authorizeWrite: (*admission).confirmNoEscalation,
		},
	}
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
