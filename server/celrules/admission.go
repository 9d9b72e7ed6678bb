package celrules

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/traits"
	"github.com/google/cel-go/ext"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/server/celtypes"
	"kubeplay/server/structural"
)

// AdmissionEnv is the environment of a ValidatingAdmissionPolicy's
// expressions: its variables (object, oldObject, request, params,
// namespaceObject, variables) with the Kubernetes libraries (authz's too),
// and with authorizer the authorizer variables (kube-apiserver gives them
// to every expression but messageExpression). request is typed as
// kube-apiserver types it; unlike kube-apiserver, which types object by
// the resource's schema, the objects are dynamically typed: expressions
// that use them are checked when they run.
func AdmissionEnv(authorizer bool) (*cel.Env, error) {
	return TypedAdmissionEnv(authorizer, nil, nil)
}

// TypedAdmissionEnv is AdmissionEnv with object and oldObject of type
// object and params of type params (nil: dynamically typed), as
// kube-controller-manager types them to check a policy's expressions.
func TypedAdmissionEnv(authorizer bool, object, params *celtypes.CheckedType) (*cel.Env, error) {
	p, err := newProvider()
	if err != nil {
		return nil, err
	}
	request, errs := structural.Parse(requestSchema(), field.NewPath("request"))
	if len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	objectType, paramsType := types.DynType, types.DynType
	if object != nil {
		objectType = p.declare(object.Schema, typeName(object), false)
	}
	if params != nil {
		name := typeName(params)
		if object != nil && name == typeName(object) && params.Schema != object.Schema {
			name = "params." + name // a kind of the same name in another group
		}
		paramsType = p.declare(params.Schema, name, false)
	}
	opts := []cel.EnvOption{
		cel.CustomTypeProvider(p),
		cel.Variable("object", objectType),
		cel.Variable("oldObject", objectType),
		cel.Variable("request", p.declare(request, "kubernetes.AdmissionRequest", false)),
		cel.Variable("params", paramsType),
		cel.Variable("namespaceObject", cel.DynType),
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

// requestSchema is the type of the request variable, as kube-apiserver
// declares it: what it is told of the request (no uid), its options
// untyped.
func requestSchema() map[string]any {
	str := map[string]any{"type": "string"}
	obj := func(props map[string]any) map[string]any {
		return map[string]any{"type": "object", "properties": props}
	}
	gvk := obj(map[string]any{"group": str, "version": str, "kind": str})
	gvr := obj(map[string]any{"group": str, "version": str, "resource": str})
	list := map[string]any{"type": "array", "items": str}
	return obj(map[string]any{
		"kind": gvk, "resource": gvr, "subResource": str,
		"requestKind": gvk, "requestResource": gvr, "requestSubResource": str,
		"name": str, "namespace": str, "operation": str,
		"userInfo": obj(map[string]any{"username": str, "uid": str, "groups": list,
			"extra": map[string]any{"type": "object", "additionalProperties": list}}),
		"dryRun":  map[string]any{"type": "boolean"},
		"options": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true},
	})
}

// The admission environments, made once: they never change.
var admissionEnvs = [2]func() (*cel.Env, error){
	sync.OnceValues(func() (*cel.Env, error) { return AdmissionEnv(false) }),
	sync.OnceValues(func() (*cel.Env, error) { return AdmissionEnv(true) }),
}

// SharedAdmissionEnv is AdmissionEnv(authorizer), made once.
func SharedAdmissionEnv(authorizer bool) (*cel.Env, error) {
	if authorizer {
		return admissionEnvs[1]()
	}
	return admissionEnvs[0]()
}

// AdmissionProgram compiles an expression of env into a program limited to
// a call's cost; outs, if any, are the types the expression may have. Its
// errors are worded as kube-apiserver's for a policy's expressions.
func AdmissionProgram(env *cel.Env, expr string, outs ...*types.Type) (cel.Program, error) {
	prg, _, err := admissionProgram(env, expr, outs...)
	return prg, err
}

// admissionProgram is AdmissionProgram, with the expression's type.
func admissionProgram(env *cel.Env, expr string, outs ...*types.Type) (cel.Program, *types.Type, error) {
	checked, issues := env.Compile(expr)
	if issues != nil && issues.Err() != nil {
		return nil, nil, fmt.Errorf("compilation failed: %w", issues.Err())
	}
	t := checked.OutputType()
	switch {
	case len(outs) == 0 || slices.ContainsFunc(outs, func(out *types.Type) bool { return t.IsExactType(out) }):
	case len(outs) == 1:
		return nil, nil, fmt.Errorf("must evaluate to %s but got %s", outs[0], t)
	default:
		names := make([]string, len(outs))
		for i, out := range outs {
			names[i] = out.String()
		}
		return nil, nil, fmt.Errorf("must evaluate to one of [%s] but got %s", strings.Join(names, " "), t)
	}
	prg, err := env.Program(checked, cel.CostLimit(perCallLimit), cel.CostTracking(authzCosts{}))
	return prg, t, err
}

// Variables compiles a policy's variables in order in env, each seeing
// those before it, as kube-apiserver composes them: variables is an object
// whose fields are the variables, each of the type of its expression (dyn
// if it does not compile), so that an expression naming a variable not
// declared before it fails to compile ("undefined field"). A variable
// without a name or an expression is not declared (its own check reports
// it). It returns their programs (nil for one that does not compile, with
// its error, or that is not declared), and their types, which declare them
// to the policy's other expressions.
func Variables(env *cel.Env, names, exprs []string) (programs []cel.Program, errs []error, declared VariableTypes) {
	declared = VariableTypes{}
	env, envErr := declared.Declare(env)
	for i, expr := range exprs {
		if strings.TrimSpace(names[i]) == "" || strings.TrimSpace(expr) == "" {
			programs, errs = append(programs, nil), append(errs, nil)
			continue
		}
		var prg cel.Program
		t, err := types.DynType, envErr
		if err == nil {
			prg, t, err = admissionProgram(env, expr)
		}
		if err != nil {
			t = types.DynType
		}
		// The checker reads the fields when it compiles: each variable
		// sees those declared before it.
		declared[names[i]] = t
		programs, errs = append(programs, prg), append(errs, err)
	}
	return programs, errs, declared
}

// VariableTypes are the types of a policy's variables, by name.
type VariableTypes map[string]*types.Type

// Declare returns env with the variable variables, an object of v's fields
// (those v has when an expression is compiled).
func (v VariableTypes) Declare(env *cel.Env) (*cel.Env, error) {
	return env.Extend(
		cel.CustomTypeProvider(&variablesProvider{Provider: env.CELTypeProvider(), fields: v}),
		cel.Variable("variables", types.NewObjectType(variablesTypeName, traits.FieldTesterType|traits.IndexerType)))
}

// variablesTypeName is the CEL type of the variables variable.
const variablesTypeName = "kubernetes.variables"

// variablesProvider is a provider that also declares the variables
// variable's type, with the fields declared so far.
type variablesProvider struct {
	types.Provider
	fields VariableTypes
}

func (p *variablesProvider) FindStructType(name string) (*types.Type, bool) {
	if name == variablesTypeName {
		return types.NewTypeTypeWithParam(types.NewObjectType(name, traits.FieldTesterType|traits.IndexerType)), true
	}
	return p.Provider.FindStructType(name)
}

func (p *variablesProvider) FindStructFieldNames(name string) ([]string, bool) {
	if name == variablesTypeName {
		return slices.Sorted(maps.Keys(p.fields)), true
	}
	return p.Provider.FindStructFieldNames(name)
}

func (p *variablesProvider) FindStructFieldType(name, field string) (*types.FieldType, bool) {
	if name == variablesTypeName {
		t, ok := p.fields[field]
		if !ok {
			return nil, false
		}
		return &types.FieldType{Type: t}, true
	}
	return p.Provider.FindStructFieldType(name, field)
}

// VariableValue is the value of a variable for the expressions that use
// it: its value, or an error that says which variable failed.
func VariableValue(name string, v any, err error) any {
	if err != nil {
		return types.NewErr("composited variable %q fails to evaluate: %v", name, err)
	}
	return v
}
