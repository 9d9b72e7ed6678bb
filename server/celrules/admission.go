package celrules

import (
	"fmt"
	"slices"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/ext"
)

// AdmissionEnv is the environment of a ValidatingAdmissionPolicy's
// expressions: its variables (object, oldObject, request, params,
// namespaceObject, variables) with the Kubernetes libraries (authz's
// too), and with authorizer the authorizer variables (kube-apiserver
// gives them to every expression but messageExpression). Unlike kube-apiserver, which types
// object by the resource's schema, they are dynamically typed:
// expressions are checked when they run.
func AdmissionEnv(authorizer bool) (*cel.Env, error) {
	opts := []cel.EnvOption{
		cel.Variable("object", cel.DynType),
		cel.Variable("oldObject", cel.DynType),
		cel.Variable("request", cel.DynType),
		cel.Variable("params", cel.DynType),
		cel.Variable("namespaceObject", cel.DynType),
		cel.Variable("variables", cel.MapType(cel.StringType, cel.DynType)),
		cel.EagerlyValidateDeclarations(true),
		cel.DefaultUTCTimeZone(true),
		cel.CrossTypeNumericComparisons(true),
		cel.OptionalTypes(),
		ext.Strings(ext.StringsVersion(2)),
		ext.Sets(),
		ext.TwoVarComprehensions(),
	}
	opts = append(opts, authzLibrary()...)
	if authorizer {
		opts = append(opts, authorizerVariables()...)
	}
	return cel.NewEnv(append(opts, library()...)...)
}

// AdmissionProgram compiles an expression of env into a program limited to
// a call's cost; outs, if any, are the types the expression may have. Its
// errors are worded as kube-apiserver's for a policy's expressions. As
// variables are all dynamically typed here, an expression that uses them
// may have any type.
func AdmissionProgram(env *cel.Env, expr string, outs ...*types.Type) (cel.Program, error) {
	checked, issues := env.Compile(expr)
	if issues != nil && issues.Err() != nil {
		return nil, fmt.Errorf("compilation failed: %w", issues.Err())
	}
	t := checked.OutputType()
	fits := len(outs) == 0 || t == types.DynType && refersTo(checked.NativeRep(), "variables") ||
		slices.ContainsFunc(outs, func(out *types.Type) bool { return t.IsExactType(out) })
	switch {
	case fits:
	case len(outs) == 1:
		return nil, fmt.Errorf("must evaluate to %s but got %s", outs[0], t)
	default:
		names := make([]string, len(outs))
		for i, out := range outs {
			names[i] = out.String()
		}
		return nil, fmt.Errorf("must evaluate to one of [%s] but got %s", strings.Join(names, " "), t)
	}
	return env.Program(checked, cel.CostLimit(perCallLimit), cel.CostTracking(authzCosts{}))
}
