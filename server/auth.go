package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"kubeplay/server/audit"
	"kubeplay/server/authn"
	"kubeplay/server/authz"
	"kubeplay/server/catalog"
	"kubeplay/server/encoding"
	"kubeplay/store"
)

// Anonymous says what a request without credentials may do.
type Anonymous int

const (
	// AnonymousAdmin runs such requests as system:anonymous in
	// system:masters: the local sandbox's default, so kubectl works with no
	// kubeconfig, while RBAC still decides for every other user.
	AnonymousAdmin Anonymous = iota
	// AnonymousRBAC runs them as system:anonymous, whom RBAC grants only
	// what the default roles grant system:unauthenticated (kube-apiserver's
	// default).
	AnonymousRBAC
	// AnonymousDenied answers them 401 Unauthorized.
	AnonymousDenied
)

func newAuthenticator(opts Options, serviceAccounts *serviceAccountTokens) *authn.Authenticator {
	a := authn.Options{Tokens: opts.Tokens, DenyAnonymous: opts.Anonymous == AnonymousDenied, Verifier: serviceAccounts, ClientCAs: opts.ClientCAs,
		Audiences: serviceAccounts.audiences}
	if opts.Anonymous == AnonymousAdmin {
		a.AnonymousGroups = []string{authn.Masters}
	}
	return authn.New(a)
}

// authenticate establishes who r comes from (its context's user for an
// in-process caller, else its bearer token), applies its impersonation
// headers, authorizes the request, and returns r with the user it runs as
// in its context. On failure it has written the error.
func (s *Server) authenticate(w http.ResponseWriter, r *http.Request) (*http.Request, bool) {
	user := authn.UserFrom(r.Context())
	if user == nil {
		u, err := s.authn.Authenticate(r)
		if errors.Is(err, authn.ErrUnauthorized) {
			encoding.WriteError(w, r, apierrors.NewUnauthorized("Unauthorized"))
			return nil, false
		}
		if err != nil {
			encoding.WriteError(w, r, apierrors.NewInternalError(err))
			return nil, false
		}
		user = u
	}
	rec := audit.FromContext(r.Context())
	if rec != nil {
		rec.User = auditUser(user)
	}
	sender := user
	user, err := s.impersonate(r, user)
	if err != nil {
		if rec != nil {
			rec.Decision = "forbid"
		}
		encoding.WriteError(w, r, err)
		return nil, false
	}
	if rec != nil && user != sender {
		rec.User, rec.ImpersonatedBy = auditUser(user), auditUser(sender)
	}
	attrs := requestAttributes(r, user)
	allowed, reason, err := s.authz.Authorize(r.Context(), attrs)
	if err != nil {
		encoding.WriteError(w, r, apierrors.NewInternalError(err))
		return nil, false
	}
	if rec != nil {
		rec.Decision, rec.Reason = "allow", reason
		if !allowed {
			rec.Decision = "forbid"
		}
	}
	if !allowed {
		encoding.WriteError(w, r, authz.Forbidden(attrs, reason))
		return nil, false
	}
	return r.WithContext(authn.WithUser(r.Context(), user)), true
}

func auditUser(u *authn.User) *audit.User {
	return &audit.User{Name: u.Name, Groups: slices.Clone(u.Groups)}
}

// requestAttributes describes r for the authorizer as kube-apiserver does:
// paths under /api/v1 and /apis/<group>/<version> are resource requests,
// every other path (discovery, /healthz, /version) a non-resource one.
func requestAttributes(r *http.Request, user *authn.User) authz.Attributes {
	attrs := authz.Attributes{User: user, Path: r.URL.Path, Verb: strings.ToLower(r.Method)}
	parts := splitPath(r.URL.Path)
	var rest []string
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		attrs.APIVersion, rest = parts[1], parts[2:]
	case len(parts) >= 4 && parts[0] == "apis":
		attrs.APIGroup, attrs.APIVersion, rest = parts[1], parts[2], parts[3:]
	default:
		return attrs
	}
	attrs.ResourceRequest = true
	watchPath := rest[0] == "watch"
	if watchPath {
		rest = rest[1:]
	}
	ns, resource, name, sub, ok := parsePath(rest)
	for !ok && len(rest) > 0 {
		// Segments after the subresource do not change what is authorized.
		rest = rest[:len(rest)-1]
		ns, resource, name, sub, ok = parsePath(rest)
	}
	if resource == "namespaces" && attrs.APIGroup == "" {
		// A namespace is authorized as an object in itself, so a
		// RoleBinding in a namespace can grant reading it.
		ns = name
	}
	attrs.Namespace, attrs.Resource, attrs.Name, attrs.Subresource = ns, resource, name, sub
	// The verb follows from the method alone (unlike the methods a route
	// allows): a PUT to a collection is authorized as an update.
	switch r.Method {
	case http.MethodPost:
		attrs.Verb = "create"
	case http.MethodGet, http.MethodHead:
		attrs.Verb = "get"
	case http.MethodPut:
		attrs.Verb = "update"
	case http.MethodPatch:
		attrs.Verb = "patch"
	case http.MethodDelete:
		attrs.Verb = "delete"
	}
	q := r.URL.Query()
	switch {
	case watchPath:
		attrs.Verb = "watch"
	case name == "" && attrs.Verb == "get":
		attrs.Verb = "list"
		if QueryBool(q, "watch") {
			attrs.Verb = "watch"
		}
		// A list or watch of one object by field selector is authorized as
		// a request for that object, so resourceNames rules apply to it.
		if sel, err := fields.ParseSelector(q.Get("fieldSelector")); err == nil {
			attrs.Name, _ = sel.RequiresExactMatch("metadata.name")
		}
	case name == "" && attrs.Verb == "delete":
		attrs.Verb = "deletecollection"
	}
	return attrs
}

// impersonate applies the Impersonate-* headers: each identity asked for
// must be allowed to user by the impersonate verb, and the request then
// runs as the impersonated user.
func (s *Server) impersonate(r *http.Request, user *authn.User) (*authn.User, error) {
	name := r.Header.Get("Impersonate-User")
	groups := r.Header.Values("Impersonate-Group")
	uid := r.Header.Get("Impersonate-Uid")
	extra := map[string][]string{}
	var extraKeys []string
	for key, values := range r.Header {
		k, ok := strings.CutPrefix(key, "Impersonate-Extra-")
		if !ok {
			continue
		}
		k, err := url.PathUnescape(strings.ToLower(k))
		if err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid impersonation extra key %q", key))
		}
		extra[k] = values
		extraKeys = append(extraKeys, k)
	}
	slices.Sort(extraKeys) // checked in a fixed order, so a denial always names the same one
	if name == "" {
		if len(groups) == 0 && len(extra) == 0 && uid == "" {
			return user, nil
		}
		return nil, errImpersonationWithoutUser(groups, extraKeys, extra, uid)
	}
	var checks []authz.Attributes
	check := func(a authz.Attributes) {
		a.User, a.Verb, a.ResourceRequest = user, "impersonate", true
		checks = append(checks, a)
	}
	if ns, sa, ok := authn.ServiceAccount(name); ok {
		check(authz.Attributes{Resource: "serviceaccounts", Namespace: ns, Name: sa})
	} else {
		check(authz.Attributes{Resource: "users", Name: name})
	}
	for _, g := range groups {
		check(authz.Attributes{Resource: "groups", Name: g})
	}
	for _, k := range extraKeys {
		for _, v := range extra[k] {
			check(authz.Attributes{APIGroup: "authentication.k8s.io", Resource: "userextras", Subresource: k, Name: v})
		}
	}
	if uid != "" {
		check(authz.Attributes{APIGroup: "authentication.k8s.io", Resource: "uids", Name: uid})
	}
	for _, a := range checks {
		allowed, reason, err := s.authz.Authorize(r.Context(), a)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		if !allowed {
			return nil, authz.Forbidden(a, reason)
		}
	}
	return impersonatedUser(name, uid, groups, extra), nil
}

// impersonatedUser is who a request impersonating name runs as: a
// ServiceAccount impersonated without groups gets its ServiceAccount
// groups, and every user but system:anonymous is in system:authenticated.
func impersonatedUser(name, uid string, groups []string, extra map[string][]string) *authn.User {
	u := &authn.User{Name: name, UID: uid, Groups: append([]string(nil), groups...)}
	if len(extra) > 0 {
		u.Extra = extra
	}
	if ns, _, ok := authn.ServiceAccount(name); ok && len(groups) == 0 {
		u.Groups = authn.ServiceAccountGroups(ns)
	}
	if name == authn.Anonymous {
		if !u.InGroup(authn.Unauthenticated) {
			u.Groups = append(u.Groups, authn.Unauthenticated)
		}
		return u
	}
	return authn.WithAuthenticatedGroup(u)
}

// errImpersonationWithoutUser lists the identities asked for, formatted
// as kube-apiserver formats them (object references printed with %v).
func errImpersonationWithoutUser(groups, extraKeys []string, extra map[string][]string, uid string) error {
	ref := func(kind, name, apiVersion, fieldPath string) string {
		return fmt.Sprintf("{%s  %s  %s  %s}", kind, name, apiVersion, fieldPath)
	}
	var refs []string
	for _, g := range groups {
		refs = append(refs, ref("Group", g, "", ""))
	}
	for _, k := range extraKeys {
		for _, v := range extra[k] {
			refs = append(refs, ref("UserExtra", v, "authentication.k8s.io/v1", k))
		}
	}
	if uid != "" {
		refs = append(refs, ref("UID", uid, "authentication.k8s.io/v1", ""))
	}
	return apierrors.NewBadRequest(fmt.Sprintf("requested [%s] without impersonating a user", strings.Join(refs, " ")))
}

// rbacRules reads roles and bindings from the store for the authorizer.
// What it decoded is kept until a write to an object of its resource (as
// kube-apiserver's authorizer reads informers' caches), so that the
// controllers' requests, each authorized, do not list and decode the
// bindings again after every write of theirs.
type rbacRules struct {
	s *registry

	mu       sync.Mutex
	bindings map[string]readAt[[]authz.Binding] // by collection prefix
	rules    map[string]readAt[[]authz.Rule]    // by object key; nil for a missing role
}

// readAt is what was decoded from the store at revision rev.
type readAt[T any] struct {
	rev   int64
	value T
}

var _ authz.Rules = (*rbacRules)(nil)

var (
	clusterRoleBindingsGVR = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"}
	roleBindingsGVR        = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"}
	clusterRolesGVR        = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}
	rolesGVR               = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"}
)

type storedBinding struct {
	Metadata struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
	Subjects []authz.Subject `json:"subjects"`
	RoleRef  authz.RoleRef   `json:"roleRef"`
}

// current reports whether what was read of res at rev is current: no
// object of res was written since.
func (b *rbacRules) current(res *catalog.Resource, rev int64) bool {
	return b.s.store.LastWriteUnder(collectionPrefix(res, "")) <= rev
}

func (b *rbacRules) list(ctx context.Context, gvr schema.GroupVersionResource, ns string) ([]authz.Binding, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	res := catalog.LookupBuiltin(gvr)
	prefix := collectionPrefix(res, ns)
	if cached, ok := b.bindings[prefix]; ok && b.current(res, cached.rev) {
		return cached.value, nil
	}
	list, err := b.s.store.List(ctx, prefix, "", 0, 0)
	if err != nil {
		return nil, err
	}
	out := make([]authz.Binding, 0, len(list.Items))
	for _, kv := range list.Items {
		var sb storedBinding
		if err := json.Unmarshal(kv.Value, &sb); err != nil {
			return nil, fmt.Errorf("stored object %s is corrupt: %w", kv.Key, err)
		}
		out = append(out, authz.Binding{Namespace: sb.Metadata.Namespace, Name: sb.Metadata.Name, Subjects: sb.Subjects, RoleRef: sb.RoleRef})
	}
	if b.bindings == nil {
		b.bindings = map[string]readAt[[]authz.Binding]{}
	}
	b.bindings[prefix] = readAt[[]authz.Binding]{list.Revision, out}
	return out, nil
}

func (b *rbacRules) ClusterRoleBindings(ctx context.Context) ([]authz.Binding, error) {
	return b.list(ctx, clusterRoleBindingsGVR, "")
}

func (b *rbacRules) RoleBindings(ctx context.Context, ns string) ([]authz.Binding, error) {
	return b.list(ctx, roleBindingsGVR, ns)
}

func (b *rbacRules) RoleRules(ctx context.Context, ns, name string) ([]authz.Rule, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	gvr := clusterRolesGVR
	if ns != "" {
		gvr = rolesGVR
	}
	res := catalog.LookupBuiltin(gvr)
	key := objectKey(res, ns, name)
	if cached, ok := b.rules[key]; ok && b.current(res, cached.rev) {
		if cached.value == nil {
			return nil, authz.ErrRoleNotFound
		}
		return cached.value, nil
	}
	// Read at a revision, so that a write after it is seen as one.
	rev, err := b.s.store.CurrentRevision(ctx)
	if err != nil {
		return nil, err
	}
	if b.rules == nil {
		b.rules = map[string]readAt[[]authz.Rule]{}
	}
	kv, err := b.s.store.Get(ctx, key, rev)
	if errors.Is(err, store.ErrNotFound) {
		b.rules[key] = readAt[[]authz.Rule]{rev, nil}
		return nil, authz.ErrRoleNotFound
	}
	if err != nil {
		return nil, err
	}
	var role struct {
		Rules []authz.Rule `json:"rules"`
	}
	if err := json.Unmarshal(kv.Value, &role); err != nil {
		return nil, fmt.Errorf("stored object %s is corrupt: %w", kv.Key, err)
	}
	if role.Rules == nil {
		role.Rules = []authz.Rule{} // cached as found
	}
	b.rules[key] = readAt[[]authz.Rule]{rev, role.Rules}
	return role.Rules, nil
}
