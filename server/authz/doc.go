// Package authz decides whether a user may make a request, as
// kube-apiserver's RBAC authorizer does: the request's attributes (verb,
// API group, resource, subresource, namespace, name, or a non-resource
// path) are checked against the rules of the Roles and ClusterRoles bound to
// the user by RoleBindings and ClusterRoleBindings. It also holds what
// builds on those rules: the Forbidden errors with kube-apiserver's
// messages, the escalation check on writes of roles and bindings, the rules
// a user has in a namespace (SelfSubjectRulesReview), and the default roles
// and bindings every cluster starts with.
package authz
