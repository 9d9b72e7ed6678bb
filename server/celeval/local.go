//go:build !js

package celeval

import (
	"context"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/server/celrules"
	"kubeplay/server/celtypes"
	"kubeplay/server/structural"
)

// Natively, celrules runs in process: a handle is what it compiled, and no
// call fails as a whole.
type (
	rulesHandle  = *celrules.Validator
	policyHandle = *celrules.Policy
)

func compileRules(_ context.Context, s *structural.Schema, path *field.Path) (rulesHandle, field.ErrorList, error) {
	v, errs := celrules.Compile(s, path)
	return v, errs, nil
}

func validate(_ context.Context, h rulesHandle, obj, old map[string]any) (field.ErrorList, error) {
	return h.Validate(obj, old), nil
}

func compilePolicy(_ context.Context, p celtypes.Policy) (policyHandle, celtypes.PolicyErrors, error) {
	c := celrules.CompilePolicy(p)
	return c, c.Errors(), nil
}

func evaluate(_ context.Context, h policyHandle, in celtypes.PolicyInput, a celtypes.Authorizer) (celtypes.PolicyResult, error) {
	return h.Evaluate(in, a), nil
}

func typeCheck(_ context.Context, objects []celtypes.CheckedType, params *celtypes.CheckedType, exprs celtypes.PolicyExpressions) ([]celtypes.ExpressionWarning, error) {
	return celrules.TypeCheck(objects, params, exprs)
}

func deviceSelectorErrors(_ context.Context, selectors []celtypes.DeviceSelector) (field.ErrorList, error) {
	return celrules.DeviceSelectorErrors(selectors)
}
