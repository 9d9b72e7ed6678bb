package celrules

import (
	"fmt"
	"strings"

	"github.com/google/cel-go/cel"

	"kubeplay/server/structural"
)

// CheckedType is a kind a policy's expressions are type-checked against.
type CheckedType struct {
	// Group, Version and Kind name it in warnings: "apps/v1, Kind=Deployment".
	Group, Version, Kind string
	// Schema is its objects' schema, metadata included.
	Schema *structural.Schema
}

// String is how a warning names the type, as Kubernetes prints a
// GroupVersionKind.
func (t CheckedType) String() string {
	return fmt.Sprintf("%s/%s, Kind=%s", t.Group, t.Version, t.Kind)
}

// typeName names the CEL object type of the kind's objects.
func (t CheckedType) typeName() string { return t.Kind }

// PolicyExpressions are the expressions of a ValidatingAdmissionPolicy that
// a type check reads.
type PolicyExpressions struct {
	// VariableNames and VariableExpressions are spec.variables, in order.
	VariableNames, VariableExpressions []string
	Validations                        []ValidationExpressions
}

// ValidationExpressions are one entry of spec.validations.
type ValidationExpressions struct {
	Expression, MessageExpression string
}

// ExpressionWarning is an entry of a policy's
// status.typeChecking.expressionWarnings.
type ExpressionWarning struct {
	FieldRef string `json:"fieldRef"`
	Warning  string `json:"warning"`
}

// TypeCheck checks a policy's validations (expression and
// messageExpression) against each of objects in turn, with params typed by
// params (nil: dynamically typed) and the variables typed by their
// expressions, as kube-controller-manager's ValidatingAdmissionPolicy
// status controller does. An expression with type errors gets one warning,
// a line group per type it fails on: "<type>: <the compiler's issues>"
// (the documentation's layout). The documentation does not say which
// expressions are checked; kube-controller-manager reads only
// spec.validations, so variables, matchConditions and auditAnnotations only
// serve to type the variables.
func TypeCheck(objects []CheckedType, params *CheckedType, p PolicyExpressions) ([]ExpressionWarning, error) {
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
		// As in admission, messageExpression has no authorizer.
		envs := [2]*cel.Env{}
		for i, authorizer := range []bool{true, false} {
			env, err := TypedAdmissionEnv(authorizer, &object, params)
			if err != nil {
				return nil, err
			}
			envs[i] = env
		}
		_, _, decls := Variables(envs[0], p.VariableNames, p.VariableExpressions)
		for i := range envs {
			env, err := envs[i].Extend(decls...)
			if err != nil {
				return nil, err
			}
			envs[i] = env
		}
		for i, e := range exprs {
			env := envs[0]
			if strings.HasSuffix(e.fieldRef, ".messageExpression") {
				env = envs[1]
			}
			if _, issues := env.Compile(e.source); issues != nil && issues.Err() != nil {
				lines[i] = append(lines[i], object.String()+": "+issues.String())
			}
		}
	}
	var warnings []ExpressionWarning
	for i, e := range exprs {
		if len(lines[i]) > 0 {
			warnings = append(warnings, ExpressionWarning{FieldRef: e.fieldRef, Warning: strings.Join(lines[i], "\n")})
		}
	}
	return warnings, nil
}
