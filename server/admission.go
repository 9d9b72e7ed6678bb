package server

import (
	"encoding/json"
	"errors"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"kubeplay/server/authn"
	"kubeplay/server/authz"
)

// admit runs the checks a write passes after decoding and before it is
// stored (dry-run writes included), in kube-apiserver's order. old is nil on
// a create.
//
//  1. The resource's own policy: for roles and bindings, the RBAC
//     escalation check (kube-apiserver's RBAC storage makes it before
//     admission).
//  2. Mutating admission: on a new Pod, the ServiceAccount,
//     DefaultTolerationSeconds and Priority plugins; on a new claim,
//     DefaultStorageClass (see admitNew).
//  3. Validating admission (built-in plugins such as NamespaceLifecycle,
//     then ValidatingAdmissionPolicy), which may only reject or warn: of
//     the built-in plugins none yet; the policies (see admitPolicies).
func (s *Server) admit(r *http.Request, req *request, obj, old object) error {
	if old == nil {
		if err := s.admitNew(r.Context(), req.res, req.namespace, obj); err != nil {
			return err
		}
	}
	if err := s.confirmNoEscalation(r, req, obj, old); err != nil {
		return err
	}
	return s.admitPolicies(r.Context(), req, obj, old, dryRunRequested(r))
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

// confirmNoEscalation is kube-apiserver's RBAC escalation check: a user can
// write a role only with rules it holds (or the escalate verb on it), and
// a binding only to a role whose rules it holds (or the bind verb on it).
// An update is checked like a create, even one that changes only labels.
func (s *Server) confirmNoEscalation(r *http.Request, req *request, obj, old object) error {
	if req.res.Group != "rbac.authorization.k8s.io" {
		return nil
	}
	ctx := r.Context()
	user := authn.UserFrom(ctx)
	if user.InGroup(authn.Masters) {
		return nil
	}
	gr := req.res.GroupResource()
	name := str(metadata(obj), "name")
	o, err := decodeRBAC(obj)
	if err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	allowedTo := func(verb, resource, roleName string) (bool, error) {
		ok, _, err := s.authz.Authorize(ctx, authz.Attributes{User: user, Verb: verb, ResourceRequest: true,
			APIGroup: gr.Group, Resource: resource, Namespace: req.namespace, Name: roleName})
		return ok, err
	}
	switch gr.Resource {
	case "roles", "clusterroles":
		if ok, err := allowedTo("escalate", gr.Resource, name); err != nil || ok {
			return err
		}
		if o.AggregationRule != nil {
			return apierrors.NewForbidden(gr, name, errors.New("must have cluster-admin privileges to use the aggregationRule"))
		}
		return s.authz.Escalation(ctx, user, req.namespace, gr, name, o.Rules)
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
