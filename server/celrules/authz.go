package celrules

import (
	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"

	"kubeplay/server/celtypes"
)

// Authorizer and AuthzCheck are the engine's: see package celtypes.
type (
	Authorizer = celtypes.Authorizer
	AuthzCheck = celtypes.AuthzCheck
)

// The types of the Kubernetes CEL authz library.
var (
	authorizerType    = cel.OpaqueType("kubernetes.authorization.Authorizer")
	pathCheckType     = cel.OpaqueType("kubernetes.authorization.PathCheck")
	groupCheckType    = cel.OpaqueType("kubernetes.authorization.GroupCheck")
	resourceCheckType = cel.OpaqueType("kubernetes.authorization.ResourceCheck")
	decisionType      = cel.OpaqueType("kubernetes.authorization.Decision")
)

// authzCheckCost is what one check costs, as kube-apiserver counts it: an
// expression affords two.
const authzCheckCost = 350000

type (
	// checkVal is an Authorizer, a PathCheck, a GroupCheck or a
	// ResourceCheck: the check it builds, with what answers it.
	checkVal    = opaque[authzState]
	decisionVal = opaque[decision]
)

type authzState struct {
	authorizer Authorizer
	check      AuthzCheck
}

type decision struct {
	allowed bool
	reason  string
	err     error
}

// Checks and decisions are not compared.
func never[T any](T, T) bool { return false }

func checkOf(typ *types.Type, s authzState) checkVal {
	return checkVal{typ: typ, v: s, eq: never[authzState]}
}

// AuthorizerVars are the values of the variables authorizer (checks for
// the request's user) and authorizer.requestResource (the resource of the
// request: group, resource, subresource, namespace, name).
func AuthorizerVars(a Authorizer, request AuthzCheck) map[string]any {
	return map[string]any{
		"authorizer":                 checkOf(authorizerType, authzState{authorizer: a}),
		"authorizer.requestResource": checkOf(resourceCheckType, authzState{authorizer: a, check: request}),
	}
}

// authorizerVariables declares the variables AuthorizerVars gives values.
func authorizerVariables() []cel.EnvOption {
	return []cel.EnvOption{
		cel.Variable("authorizer", authorizerType),
		cel.Variable("authorizer.requestResource", resourceCheckType),
	}
}

// authzLibrary declares the functions of the Kubernetes CEL authz
// library. fieldSelector and labelSelector are accepted and ignored, as
// RBAC ignores them.
func authzLibrary() []cel.EnvOption {
	with := func(name string, from, to *types.Type, set func(*AuthzCheck, string)) cel.EnvOption {
		return cel.Function(name, cel.MemberOverload(from.TypeName()+"_"+name, []*cel.Type{from, cel.StringType}, to,
			binary(func(c checkVal, s types.String) ref.Val {
				next := c.v
				set(&next.check, string(s))
				return checkOf(to, next)
			})))
	}
	check := func(c checkVal, verb types.String) ref.Val {
		ask := c.v.check
		ask.Verb = string(verb)
		allowed, reason, err := c.v.authorizer.Authorize(ask)
		return decisionVal{typ: decisionType, v: decision{allowed: allowed, reason: reason, err: err}, eq: never[decision]}
	}
	decided := func(name string, out *types.Type, f func(decision) ref.Val) cel.EnvOption {
		return cel.Function(name, cel.MemberOverload("decision_"+name, []*cel.Type{decisionType}, out,
			unary(func(d decisionVal) ref.Val { return f(d.v) })))
	}
	return []cel.EnvOption{
		with("path", authorizerType, pathCheckType, func(c *AuthzCheck, s string) { c.Path = s }),
		with("group", authorizerType, groupCheckType, func(c *AuthzCheck, s string) { c.Group = s }),
		with("resource", groupCheckType, resourceCheckType, func(c *AuthzCheck, s string) { c.Resource = s }),
		with("subresource", resourceCheckType, resourceCheckType, func(c *AuthzCheck, s string) { c.Subresource = s }),
		with("namespace", resourceCheckType, resourceCheckType, func(c *AuthzCheck, s string) { c.Namespace = s }),
		with("name", resourceCheckType, resourceCheckType, func(c *AuthzCheck, s string) { c.Name = s }),
		with("fieldSelector", resourceCheckType, resourceCheckType, func(*AuthzCheck, string) {}),
		with("labelSelector", resourceCheckType, resourceCheckType, func(*AuthzCheck, string) {}),
		cel.Function("serviceAccount", cel.MemberOverload("authorizer_serviceaccount",
			[]*cel.Type{authorizerType, cel.StringType, cel.StringType}, authorizerType,
			cel.FunctionBinding(func(args ...ref.Val) ref.Val {
				c, ok := args[0].(checkVal)
				ns, ok2 := args[1].(types.String)
				name, ok3 := args[2].(types.String)
				if !ok || !ok2 || !ok3 {
					return types.NoSuchOverloadErr()
				}
				next := c.v
				next.check.ServiceAccountNamespace, next.check.ServiceAccountName = string(ns), string(name)
				return checkOf(authorizerType, next)
			}))),
		cel.Function("check",
			cel.MemberOverload("pathcheck_check", []*cel.Type{pathCheckType, cel.StringType}, decisionType, binary(check)),
			cel.MemberOverload("resourcecheck_check", []*cel.Type{resourceCheckType, cel.StringType}, decisionType, binary(check))),
		decided("allowed", cel.BoolType, func(d decision) ref.Val { return types.Bool(d.allowed) }),
		decided("reason", cel.StringType, func(d decision) ref.Val { return types.String(d.reason) }),
		decided("errored", cel.BoolType, func(d decision) ref.Val { return types.Bool(d.err != nil) }),
		decided("error", cel.StringType, func(d decision) ref.Val {
			if d.err == nil {
				return types.String("")
			}
			return types.String(d.err.Error())
		}),
	}
}

// authzCosts counts each check at kube-apiserver's cost.
type authzCosts struct{}

func (authzCosts) CallCost(function, _ string, _ []ref.Val, _ ref.Val) *uint64 {
	if function != "check" {
		return nil
	}
	cost := uint64(authzCheckCost)
	return &cost
}
