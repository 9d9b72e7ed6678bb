package celrules

import (
	"fmt"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/ext"
)

// AdmissionEnv is the environment of a ValidatingAdmissionPolicy's
// expressions: its variables (object, oldObject, request, params,
// namespaceObject, variables) with the Kubernetes libraries. Unlike
// kube-apiserver, which types object by the resource's schema, they are
// dynamically typed: expressions are checked when they run.
func AdmissionEnv() (*cel.Env, error) {
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
	return cel.NewEnv(append(opts, library()...)...)
}

// AdmissionProgram compiles an expression of env into a program limited to
// a call's cost; out is the type the expression must have.
func AdmissionProgram(env *cel.Env, expr string, out *types.Type) (cel.Program, error) {
	checked, issues := env.Compile(expr)
	if issues != nil && issues.Err() != nil {
		return nil, issues.Err()
	}
	if t := checked.OutputType(); out != nil && !t.IsAssignableType(out) && t != types.DynType {
		return nil, fmt.Errorf("must evaluate to %s", out)
	}
	return env.Program(checked, cel.CostLimit(perCallLimit))
}
