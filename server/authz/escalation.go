package authz

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"kubeplay/server/authn"
)

// Escalation is the check kube-apiserver makes on writes of roles and
// bindings: a user may only grant permissions it holds itself. It returns
// nil when user holds every permission of rules in namespace (cluster-wide
// when ""), and otherwise a Forbidden error on the object gr/name listing
// what user does not hold. Members of system:masters hold everything.
func (a *Authorizer) Escalation(ctx context.Context, user *authn.User, namespace string, gr schema.GroupResource, name string, rules []Rule) error {
	if user.InGroup(authn.Masters) {
		return nil
	}
	owned, resolution, err := a.RulesFor(ctx, user, namespace)
	if err != nil {
		return err
	}
	var missing []Rule
	for _, want := range rules {
		for _, atom := range breakdown(want) {
			if !slices.ContainsFunc(owned, func(r Rule) bool { return covers(r, atom) }) {
				missing = append(missing, atom)
			}
		}
	}
	if len(missing) == 0 {
		return nil
	}
	lines := make([]string, 0, len(missing))
	for _, r := range compact(missing) {
		lines = append(lines, r.String())
	}
	slices.Sort(lines)
	msg := fmt.Sprintf("user %q (groups=%q) is attempting to grant RBAC permissions not currently held:\n%s", user.Name, user.Groups, strings.Join(lines, "\n"))
	if len(resolution) > 0 {
		msg += fmt.Sprintf("; resolution errors: [%s]", strings.Join(pluralize(resolution), " "))
	}
	return apierrors.NewForbidden(gr, name, errors.New(msg))
}

// pluralize rewrites the authorizer's resolution errors as the escalation
// check words them: it reads roles through their REST storage, whose
// NotFound errors name the resource ("roles.rbac...") rather than the kind.
func pluralize(resolution []string) []string {
	out := make([]string, len(resolution))
	for i, msg := range resolution {
		kind, rest, _ := strings.Cut(msg, ".")
		out[i] = kind + "s." + rest
	}
	return out
}

// breakdown splits a rule into rules of one verb, one group, one resource
// and at most one resource name (or one verb and one path).
func breakdown(r Rule) []Rule {
	var out []Rule
	for _, verb := range r.Verbs {
		for _, url := range r.NonResourceURLs {
			out = append(out, Rule{Verbs: []string{verb}, NonResourceURLs: []string{url}})
		}
		for _, group := range r.APIGroups {
			for _, res := range r.Resources {
				atom := Rule{Verbs: []string{verb}, APIGroups: []string{group}, Resources: []string{res}}
				if len(r.ResourceNames) == 0 {
					out = append(out, atom)
				}
				for _, name := range r.ResourceNames {
					atom.ResourceNames = []string{name}
					out = append(out, atom)
				}
			}
		}
	}
	return out
}

// covers reports whether owner grants everything atom (a broken-down rule)
// does. A wildcard in atom is only covered by the same wildcard.
func covers(owner, atom Rule) bool {
	if !slices.Contains(owner.Verbs, "*") && !slices.Contains(owner.Verbs, atom.Verbs[0]) {
		return false
	}
	if len(atom.NonResourceURLs) > 0 {
		return matchesPath(owner, atom.NonResourceURLs[0])
	}
	if !slices.Contains(owner.APIGroups, "*") && !slices.Contains(owner.APIGroups, atom.APIGroups[0]) {
		return false
	}
	res, sub, _ := strings.Cut(atom.Resources[0], "/")
	if !matchesResource(owner, res, sub) {
		return false
	}
	if len(owner.ResourceNames) == 0 {
		return true
	}
	return len(atom.ResourceNames) > 0 && slices.Contains(owner.ResourceNames, atom.ResourceNames[0])
}

// compact merges broken-down rules that differ only in their verb, so the
// message lists one line per resource.
func compact(atoms []Rule) []Rule {
	var out []Rule
	index := map[string]int{}
	for _, a := range atoms {
		if len(a.NonResourceURLs) > 0 {
			out = append(out, a)
			continue
		}
		key := strings.Join([]string{a.APIGroups[0], a.Resources[0], strings.Join(a.ResourceNames, ",")}, "\x00")
		if i, ok := index[key]; ok {
			if !slices.Contains(out[i].Verbs, a.Verbs[0]) {
				out[i].Verbs = append(out[i].Verbs, a.Verbs[0])
			}
			continue
		}
		index[key] = len(out)
		out = append(out, a)
	}
	return out
}

// String formats a rule as kube-apiserver's messages do:
// {APIGroups:["apps"], Resources:["deployments"], Verbs:["get"]}.
func (r Rule) String() string {
	var parts []string
	for _, f := range []struct {
		name   string
		values []string
	}{{"APIGroups", r.APIGroups}, {"Resources", r.Resources}, {"ResourceNames", r.ResourceNames}, {"NonResourceURLs", r.NonResourceURLs}, {"Verbs", r.Verbs}} {
		if len(f.values) > 0 {
			parts = append(parts, fmt.Sprintf("%s:%q", f.name, f.values))
		}
	}
	return "{" + strings.Join(parts, ", ") + "}"
}
