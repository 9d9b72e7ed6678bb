package authz

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"kubeplay/server/authn"
)

// Attributes describe a request as the authorizer sees it.
type Attributes struct {
	User *authn.User
	// Verb is get, list, watch, create, update, patch, delete,
	// deletecollection (or impersonate, bind, escalate...) for a resource
	// request; the lower-case HTTP method for a non-resource request.
	Verb string
	// ResourceRequest tells a request for an API resource from one for a
	// non-resource path (/healthz, /version, /api, /apis/apps).
	ResourceRequest bool
	APIGroup        string
	APIVersion      string
	Resource        string
	Subresource     string
	Namespace       string
	Name            string
	// Path is the URL path of a non-resource request.
	Path string
}

// Rule is one PolicyRule of a Role or ClusterRole.
type Rule struct {
	Verbs           []string `json:"verbs"`
	APIGroups       []string `json:"apiGroups,omitempty"`
	Resources       []string `json:"resources,omitempty"`
	ResourceNames   []string `json:"resourceNames,omitempty"`
	NonResourceURLs []string `json:"nonResourceURLs,omitempty"`
}

// Subject is a user, group or ServiceAccount a binding grants a role to.
type Subject struct {
	Kind      string `json:"kind"`
	APIGroup  string `json:"apiGroup,omitempty"`
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
}

// RoleRef names the Role or ClusterRole a binding grants.
type RoleRef struct {
	APIGroup string `json:"apiGroup"`
	Kind     string `json:"kind"`
	Name     string `json:"name"`
}

// Binding is a RoleBinding (Namespace set) or a ClusterRoleBinding.
type Binding struct {
	Namespace string
	Name      string
	Subjects  []Subject
	RoleRef   RoleRef
}

// Rules is where the authorizer reads roles and bindings from.
type Rules interface {
	// ClusterRoleBindings returns every ClusterRoleBinding, by name.
	ClusterRoleBindings(ctx context.Context) ([]Binding, error)
	// RoleBindings returns the RoleBindings of a namespace, by name.
	RoleBindings(ctx context.Context, namespace string) ([]Binding, error)
	// RoleRules returns the rules of the ClusterRole name (namespace "") or
	// of the Role namespace/name; ErrRoleNotFound if it does not exist.
	RoleRules(ctx context.Context, namespace, name string) ([]Rule, error)
}

// ErrRoleNotFound is returned by Rules.RoleRules for a missing role.
var ErrRoleNotFound = errors.New("role not found")

// Authorizer decides requests by RBAC. Members of system:masters are
// allowed everything, whatever the roles say.
type Authorizer struct {
	Rules Rules
	// AlwaysAllow allows what RBAC does not, as kube-apiserver's
	// AlwaysAllow authorizer after RBAC in --authorization-mode: every
	// request is allowed, escalations included (the escalate and bind
	// verbs are allowed).
	AlwaysAllow bool
}

// Authorize reports whether attrs are allowed, and why: on an allow, the
// binding that allows it ("RBAC: allowed by RoleBinding ..."); on a
// denial, what went wrong while reading the user's roles (a binding to a
// missing role), which kube-apiserver appends to its Forbidden message. err
// is an error reading the rules themselves.
func (a *Authorizer) Authorize(ctx context.Context, attrs Attributes) (allowed bool, reason string, err error) {
	if attrs.User.InGroup(authn.Masters) {
		return true, "", nil
	}
	var resolution []string
	by, err := a.visit(ctx, attrs.User, attrs.Namespace, func(rule Rule) bool { return allows(rule, attrs) }, &resolution)
	switch {
	case err != nil:
		return false, "", err
	case by != "":
		return true, "RBAC: allowed by " + by, nil
	case a.AlwaysAllow:
		return true, "", nil
	case len(resolution) > 0:
		return false, "RBAC: " + aggregate(resolution), nil
	}
	return false, "", nil
}

// aggregate joins errors as apimachinery's error aggregates print them.
func aggregate(msgs []string) string {
	if len(msgs) == 1 {
		return msgs[0]
	}
	return "[" + strings.Join(msgs, ", ") + "]"
}

// visit calls fn with every rule that applies to user in namespace (its
// cluster-wide rules, then those of the namespace's RoleBindings) until fn
// returns true, and then describes the binding that held the rule
// (`RoleBinding "b/ns" of Role "r" to User "alice"`); "" if fn never
// returned true. Bindings to missing roles are recorded in resolution.
func (a *Authorizer) visit(ctx context.Context, user *authn.User, namespace string, fn func(Rule) bool, resolution *[]string) (string, error) {
	crbs, err := a.Rules.ClusterRoleBindings(ctx)
	if err != nil {
		return "", err
	}
	bindings := crbs
	if namespace != "" {
		rbs, err := a.Rules.RoleBindings(ctx, namespace)
		if err != nil {
			return "", err
		}
		bindings = append(slices.Clip(crbs), rbs...)
	}
	for _, b := range bindings {
		i := slices.IndexFunc(b.Subjects, func(s Subject) bool { return appliesTo(s, user, b.Namespace) })
		if i < 0 {
			continue
		}
		roleNS := b.Namespace
		if b.RoleRef.Kind == "ClusterRole" {
			roleNS = ""
		}
		rules, err := a.Rules.RoleRules(ctx, roleNS, b.RoleRef.Name)
		if errors.Is(err, ErrRoleNotFound) {
			kind := "clusterrole"
			if roleNS != "" {
				kind = "role"
			}
			*resolution = append(*resolution, kind+`.rbac.authorization.k8s.io "`+b.RoleRef.Name+`" not found`)
			continue
		}
		if err != nil {
			return "", err
		}
		if slices.ContainsFunc(rules, fn) {
			return describe(b, b.Subjects[i]), nil
		}
	}
	return "", nil
}

func describe(b Binding, s Subject) string {
	binding := fmt.Sprintf("ClusterRoleBinding %q", b.Name)
	if b.Namespace != "" {
		binding = fmt.Sprintf("RoleBinding %q", b.Name+"/"+b.Namespace)
	}
	subject := s.Name
	if s.Kind == "ServiceAccount" {
		ns := s.Namespace
		if ns == "" {
			ns = b.Namespace
		}
		subject = s.Name + "/" + ns
	}
	return fmt.Sprintf("%s of %s %q to %s %q", binding, b.RoleRef.Kind, b.RoleRef.Name, s.Kind, subject)
}

// appliesTo reports whether a binding's subject is user. A ServiceAccount
// subject without a namespace means one in the binding's namespace.
func appliesTo(s Subject, user *authn.User, bindingNS string) bool {
	switch s.Kind {
	case "User":
		return user.Name == s.Name
	case "Group":
		return user.InGroup(s.Name)
	case "ServiceAccount":
		ns := s.Namespace
		if ns == "" {
			ns = bindingNS
		}
		return ns != "" && user.Name == authn.ServiceAccountPrefix+ns+":"+s.Name
	}
	return false
}

// allows reports whether rule grants the request attrs describe.
func allows(rule Rule, attrs Attributes) bool {
	if !matchesVerb(rule, attrs.Verb) {
		return false
	}
	if !attrs.ResourceRequest {
		return matchesPath(rule, attrs.Path)
	}
	return matchesGroup(rule, attrs.APIGroup) &&
		matchesResource(rule, attrs.Resource, attrs.Subresource) &&
		matchesName(rule, attrs.Name)
}

func matchesVerb(rule Rule, verb string) bool {
	return slices.Contains(rule.Verbs, "*") || slices.Contains(rule.Verbs, verb)
}

func matchesGroup(rule Rule, group string) bool {
	return slices.Contains(rule.APIGroups, "*") || slices.Contains(rule.APIGroups, group)
}

// matchesResource: "*" matches every resource and subresource, "pods/log"
// one subresource, "*/scale" that subresource of every resource.
func matchesResource(rule Rule, resource, sub string) bool {
	want := resource
	if sub != "" {
		want += "/" + sub
	}
	for _, r := range rule.Resources {
		if r == "*" || r == want || (sub != "" && r == "*/"+sub) {
			return true
		}
	}
	return false
}

// matchesName: a rule without resourceNames matches any name (and none); a
// rule with some matches only requests for one of those names.
func matchesName(rule Rule, name string) bool {
	return len(rule.ResourceNames) == 0 || (name != "" && slices.Contains(rule.ResourceNames, name))
}

// matchesPath: "*" matches every path, "/apis/*" every path under /apis/.
func matchesPath(rule Rule, path string) bool {
	for _, u := range rule.NonResourceURLs {
		if u == "*" || u == path || (strings.HasSuffix(u, "*") && strings.HasPrefix(path, strings.TrimSuffix(u, "*"))) {
			return true
		}
	}
	return false
}

// RulesFor returns every rule that applies to user in namespace (its
// cluster-wide rules when namespace is ""), and the errors met resolving
// them (bindings to missing roles), as SelfSubjectRulesReview reports them.
func (a *Authorizer) RulesFor(ctx context.Context, user *authn.User, namespace string) ([]Rule, []string, error) {
	var resolution []string
	var out []Rule
	_, err := a.visit(ctx, user, namespace, func(r Rule) bool { out = append(out, r); return false }, &resolution)
	return out, resolution, err
}
