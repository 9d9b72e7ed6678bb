package authz_test

import (
	"context"
	"testing"

	"kubeplay/server/authn"
	"kubeplay/server/authz"
)

// rules is an in-memory authz.Rules: one ClusterRoleBinding or RoleBinding
// per role, binding it to user alice.
type rules struct {
	clusterRoles map[string][]authz.Rule
	roles        map[string][]authz.Rule // namespace "dev"
}

func (r rules) ClusterRoleBindings(context.Context) ([]authz.Binding, error) {
	var out []authz.Binding
	for name := range r.clusterRoles {
		out = append(out, authz.Binding{Name: name, Subjects: []authz.Subject{{Kind: "User", Name: "alice"}}, RoleRef: authz.RoleRef{Kind: "ClusterRole", Name: name}})
	}
	return out, nil
}

func (r rules) RoleBindings(_ context.Context, ns string) ([]authz.Binding, error) {
	var out []authz.Binding
	if ns != "dev" {
		return nil, nil
	}
	for name := range r.roles {
		out = append(out, authz.Binding{Namespace: ns, Name: name, Subjects: []authz.Subject{{Kind: "Group", Name: "devs"}}, RoleRef: authz.RoleRef{Kind: "Role", Name: name}})
	}
	return out, nil
}

func (r rules) RoleRules(_ context.Context, ns, name string) ([]authz.Rule, error) {
	m := r.clusterRoles
	if ns != "" {
		m = r.roles
	}
	rs, ok := m[name]
	if !ok {
		return nil, authz.ErrRoleNotFound
	}
	return rs, nil
}

func TestAuthorizer_Authorize(t *testing.T) {
	a := &authz.Authorizer{Rules: rules{
		clusterRoles: map[string][]authz.Rule{
			"scale": {{Verbs: []string{"get"}, APIGroups: []string{"*"}, Resources: []string{"*/scale"}}},
			"paths": {{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz", "/logs/*"}}},
		},
		roles: map[string][]authz.Rule{
			"cm":  {{Verbs: []string{"get", "list"}, APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"a"}}},
			"log": {{Verbs: []string{"*"}, APIGroups: []string{""}, Resources: []string{"pods/log"}}},
		},
	}}
	alice := &authn.User{Name: "alice", Groups: []string{"devs"}}
	res := func(verb, group, resource, sub, ns, name string) authz.Attributes {
		return authz.Attributes{User: alice, Verb: verb, ResourceRequest: true, APIGroup: group, Resource: resource, Subresource: sub, Namespace: ns, Name: name}
	}
	path := func(verb, p string) authz.Attributes { return authz.Attributes{User: alice, Verb: verb, Path: p} }
	for _, tc := range []struct {
		name  string
		attrs authz.Attributes
		want  bool
	}{
		{"named object in resourceNames", res("get", "", "configmaps", "", "dev", "a"), true},
		{"other name", res("get", "", "configmaps", "", "dev", "b"), false},
		{"list without a name is not limited to names", res("list", "", "configmaps", "", "dev", ""), false},
		{"verb not granted", res("delete", "", "configmaps", "", "dev", "a"), false},
		{"other namespace", res("get", "", "configmaps", "", "prod", "a"), false},
		{"subresource", res("create", "", "pods", "log", "dev", "p"), true},
		{"a subresource rule does not grant the resource", res("get", "", "pods", "", "dev", "p"), false},
		{"*/scale in any group", res("get", "apps", "deployments", "scale", "prod", "d"), true},
		{"*/scale is not */status", res("get", "apps", "deployments", "status", "prod", "d"), false},
		{"exact path", path("get", "/healthz"), true},
		{"path prefix", path("get", "/logs/a/b"), true},
		{"prefix itself without the slash", path("get", "/logs"), false},
		{"path verb", path("post", "/healthz"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _, err := a.Authorize(t.Context(), tc.attrs)
			if err != nil || got != tc.want {
				t.Errorf("Authorize = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
	masters := &authn.User{Name: "root", Groups: []string{authn.Masters}}
	if ok, _, _ := a.Authorize(t.Context(), authz.Attributes{User: masters, Verb: "delete", ResourceRequest: true, Resource: "nodes"}); !ok {
		t.Error("system:masters denied")
	}
}
