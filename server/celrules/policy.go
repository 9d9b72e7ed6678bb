package celrules

import (
	"fmt"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"

	"kubeplay/server/celtypes"
)

// Policy is a ValidatingAdmissionPolicy's compiled expressions. A nil
// program is an expression that did not compile (err): it fails as the
// policy's failurePolicy says.
type Policy struct {
	spec        celtypes.Policy
	conditions  []compiledExpression
	variables   []compiledExpression
	validations []compiledValidation
	// auditAnnotations are named by their keys.
	auditAnnotations []compiledExpression
}

type compiledExpression struct {
	name, expression string
	program          cel.Program
	err              error
}

type compiledValidation struct {
	compiledExpression
	message *compiledExpression
}

func compileExpression(env *cel.Env, envErr error, name, expr string, outs ...*types.Type) compiledExpression {
	c := compiledExpression{name: name, expression: expr, err: envErr}
	if envErr == nil {
		c.program, c.err = AdmissionProgram(env, expr, outs...)
	}
	return c
}

// CompilePolicy compiles the expressions of p, each in the environment its
// place gives it: the variables typed by their expressions, in order, and
// message expressions without the authorizer.
func CompilePolicy(p celtypes.Policy) *Policy {
	c := &Policy{spec: p}
	env, err := SharedAdmissionEnv(true)
	for _, m := range p.MatchConditions {
		c.conditions = append(c.conditions, compileExpression(env, err, m.Name, m.Expression, types.BoolType))
	}
	msgEnv, msgErr := SharedAdmissionEnv(false)
	// kube-apiserver declares the variables only for a policy that has
	// some: otherwise "variables" is an undeclared reference.
	if err == nil && len(p.Variables) > 0 {
		// The other expressions see the variables, typed.
		names := make([]string, len(p.Variables))
		exprs := make([]string, len(p.Variables))
		for i, v := range p.Variables {
			names[i], exprs[i] = v.Name, v.Expression
		}
		programs, errs, declared := Variables(env, names, exprs)
		for i, v := range p.Variables {
			c.variables = append(c.variables, compiledExpression{name: v.Name, expression: v.Expression, program: programs[i], err: errs[i]})
		}
		env, err = declared.Declare(env)
		if msgErr == nil {
			msgEnv, msgErr = declared.Declare(msgEnv)
		}
	} else {
		for _, v := range p.Variables {
			c.variables = append(c.variables, compiledExpression{name: v.Name, expression: v.Expression, err: err})
		}
	}
	for _, v := range p.Validations {
		cv := compiledValidation{compiledExpression: compileExpression(env, err, "", v.Expression, types.BoolType)}
		if v.MessageExpression != "" {
			m := compileExpression(msgEnv, msgErr, "", v.MessageExpression, types.StringType)
			cv.message = &m
		}
		c.validations = append(c.validations, cv)
	}
	for _, a := range p.AuditAnnotations {
		c.auditAnnotations = append(c.auditAnnotations, compileExpression(env, err, a.Key, a.ValueExpression, types.StringType, types.NullType))
	}
	return c
}

// Errors are why the policy's expressions did not compile.
func (c *Policy) Errors() celtypes.PolicyErrors {
	msgs := func(list []compiledExpression) []string {
		out := make([]string, len(list))
		for i, e := range list {
			if e.err != nil {
				out[i] = e.err.Error()
			}
		}
		return out
	}
	errs := celtypes.PolicyErrors{
		MatchConditions:    msgs(c.conditions),
		Variables:          msgs(c.variables),
		AuditAnnotations:   msgs(c.auditAnnotations),
		Validations:        make([]string, len(c.validations)),
		MessageExpressions: make([]string, len(c.validations)),
	}
	for i, v := range c.validations {
		if v.err != nil {
			errs.Validations[i] = v.err.Error()
		}
		if v.message != nil && v.message.err != nil {
			errs.MessageExpressions[i] = v.message.err.Error()
		}
	}
	return errs
}

// Evaluate runs the policy on a request, authorizer answering its
// authorizer variable: the message of its first failed validation and the
// reason of the denial, or none when it admits the request (or does not
// apply to it), and its audit annotations.
func (c *Policy) Evaluate(in celtypes.PolicyInput, authorizer Authorizer) celtypes.PolicyResult {
	fail := c.spec.Fail
	vars := AuthorizerVars(authorizer, in.RequestResource)
	vars["object"], vars["oldObject"], vars["request"] = in.Object, in.OldObject, in.Request
	vars["params"], vars["namespaceObject"] = in.Params, in.NamespaceObject
	variables := map[string]any{}
	vars["variables"] = variables
	for _, v := range c.variables {
		// Evaluated in order, so that a variable may use those before it;
		// one that fails fails the expressions that use it.
		if v.program == nil && v.err == nil {
			continue // never declared: validation refuses such a policy
		}
		var out any
		err := v.err
		if err == nil {
			out, _, err = v.program.Eval(vars)
		}
		variables[v.name] = VariableValue(v.name, out, err)
	}
	var result celtypes.PolicyResult
	for _, m := range c.conditions {
		if m.err != nil {
			continue
		}
		out, _, err := m.program.Eval(vars)
		if err != nil {
			if fail {
				result.Message, result.Reason = fmt.Sprintf("expression '%s' resulted in error: %v", m.expression, err), "Invalid"
			}
			return result
		}
		if b, ok := out.(types.Bool); ok && !bool(b) {
			return result
		}
	}
	for _, an := range c.auditAnnotations {
		if an.program == nil {
			continue
		}
		// A null value, or one that fails, annotates nothing.
		if out, _, err := an.program.Eval(vars); err == nil {
			if v, ok := out.(types.String); ok {
				result.Annotations = append(result.Annotations, celtypes.Annotation{Key: an.name, Value: string(v)})
			}
		}
	}
	for i, v := range c.validations {
		spec := c.spec.Validations[i]
		reason := spec.Reason
		if reason == "" {
			reason = "Invalid"
		}
		var out any
		err := v.err
		if err == nil {
			out, _, err = v.program.Eval(vars)
		}
		if err != nil {
			if !fail {
				continue
			}
			result.Message, result.Reason = fmt.Sprintf("expression '%s' resulted in error: %v", v.expression, err), reason
			return result
		}
		if b, ok := out.(types.Bool); ok && bool(b) {
			continue
		}
		msg := "failed expression: " + strings.TrimSpace(v.expression)
		if spec.Message != "" {
			msg = spec.Message
		}
		if v.message != nil && v.message.program != nil {
			if m, _, err := v.message.program.Eval(vars); err == nil {
				if s, ok := m.(types.String); ok && strings.TrimSpace(string(s)) != "" {
					msg = string(s)
				}
			}
		}
		result.Message, result.Reason = msg, reason
		return result
	}
	return result
}
