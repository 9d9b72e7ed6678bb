package authn

import (
	"context"
	"slices"
	"strings"
)

// Well-known user and group names.
const (
	Anonymous       = "system:anonymous"
	Authenticated   = "system:authenticated"
	Unauthenticated = "system:unauthenticated"
	// Masters is the group whose members every request is allowed to,
	// whatever RBAC says (kube-apiserver's privileged group).
	Masters = "system:masters"
	// ServiceAccountPrefix starts the user name of a ServiceAccount:
	// system:serviceaccount:<namespace>:<name>.
	ServiceAccountPrefix = "system:serviceaccount:"
	// ServiceAccounts is the group of every ServiceAccount; a
	// ServiceAccount is also in ServiceAccounts + ":" + its namespace.
	ServiceAccounts = "system:serviceaccounts"
)

// User is who a request runs as.
type User struct {
	Name   string
	UID    string
	Groups []string
	Extra  map[string][]string
}

// InGroup reports whether u is a member of group.
func (u *User) InGroup(group string) bool { return slices.Contains(u.Groups, group) }

// ServiceAccountGroups are the groups of a ServiceAccount of namespace.
func ServiceAccountGroups(namespace string) []string {
	return []string{ServiceAccounts, ServiceAccounts + ":" + namespace}
}

// ServiceAccount splits a ServiceAccount user name into its namespace and
// name; ok is false for any other user name.
func ServiceAccount(user string) (namespace, name string, ok bool) {
	rest, ok := strings.CutPrefix(user, ServiceAccountPrefix)
	if !ok {
		return "", "", false
	}
	parts := strings.Split(rest, ":")
	if len(parts) != 2 || parts[0] == "" || parts[1] == "" {
		return "", "", false
	}
	return parts[0], parts[1], true
}

type userKey struct{}

// WithUser returns a context carrying u. In-process callers (the
// playground's controllers) use it to act as a user of their own: a request
// whose context already carries a user is not authenticated again.
func WithUser(ctx context.Context, u *User) context.Context {
	return context.WithValue(ctx, userKey{}, u)
}

// UserFrom returns the user a context carries, or nil.
func UserFrom(ctx context.Context) *User {
	u, _ := ctx.Value(userKey{}).(*User)
	return u
}
