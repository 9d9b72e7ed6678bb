package celrules

import (
	"fmt"
	"strings"

	"kubeplay/server/celtypes"
)

// typeName names the CEL object type of a kind's objects.
func typeName(t *celtypes.CheckedType) string { return t.Kind }

// TypeCheck checks a policy's validations (expression and
// messageExpression) against each of objects in turn, with params typed by
// params (nil: dynamically typed) and the variables typed by their
// expressions, as kube-controller-manager's ValidatingAdmissionPolicy
// status controller does: it reads only spec.validations (variables serve
// to type the variables), and checks a messageExpression in the same
// environment as an expression, authorizer included. An expression with
// type errors gets one warning: for each type it fails on,
// "<type>: <the compiler's issues>" and a newline, the types separated by
// newlines. The documentation shows the warnings without the newlines
// after each type; kube-controller-manager writes them.
func TypeCheck(objects []celtypes.CheckedType, params *celtypes.CheckedType, p celtypes.PolicyExpressions) ([]celtypes.ExpressionWarning, error) {
	type expression struct{ fieldRef, source string }
	var exprs []expression
	for i, v := range p.Validations {
		exprs = append(exprs, expression{fmt.Sprintf("spec.validations[%d].expression", i), v.Expression})
		if v.MessageExpression != "" {
			exprs = append(exprs, expression{fmt.Sprintf("spec.validations[%d].messageExpression", i), v.MessageExpression})
		}
	}
	lines := make([][]string, len(exprs))
	for _, object := range objects {
		env, err := TypedAdmissionEnv(true, &object, params)
		if err != nil {
			return nil, err
		}
		_, _, declared := Variables(env, p.VariableNames, p.VariableExpressions)
		if env, err = declared.Declare(env); err != nil {
			return nil, err
		}
		for i, e := range exprs {
			if _, issues := env.Compile(e.source); issues != nil && issues.Err() != nil {
				lines[i] = append(lines[i], object.String()+": "+issues.String()+"\n")
			}
		}
	}
	var warnings []celtypes.ExpressionWarning
	for i, e := range exprs {
		if len(lines[i]) > 0 {
			warnings = append(warnings, celtypes.ExpressionWarning{FieldRef: e.fieldRef, Warning: strings.Join(lines[i], "\n")})
		}
	}
	return warnings, nil
}
