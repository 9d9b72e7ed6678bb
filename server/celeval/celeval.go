package celeval

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/server/celtypes"
	"kubeplay/server/structural"
)

// Rules are the x-kubernetes-validations of one schema, compiled the first
// time they validate an object.
type Rules struct {
	schema *structural.Schema

	mu       sync.Mutex // held while compiling
	compiled bool
	handle   rulesHandle // nil if none of the rules compiles
}

// NewRules returns the rules of s, nil if it has none. Their errors are
// not checked: s is a stored CRD's schema, checked by CompileRules when
// the CRD was written.
func NewRules(s *structural.Schema) *Rules {
	if !hasRules(s) {
		return nil
	}
	return &Rules{schema: s}
}

func hasRules(s *structural.Schema) bool {
	if s == nil {
		return false
	}
	if len(s.Rules) > 0 || hasRules(s.Items) || hasRules(s.AdditionalProperties) {
		return true
	}
	for _, p := range s.Properties {
		if hasRules(p) {
			return true
		}
	}
	return false
}

// Validate evaluates the rules on obj, a custom object; old is the object
// it replaces (nil on create). It returns the rules' errors, as
// kube-apiserver words them; a nil r has none.
func (r *Rules) Validate(ctx context.Context, obj, old map[string]any) (field.ErrorList, error) {
	if r == nil {
		return nil, nil
	}
	r.mu.Lock()
	if !r.compiled {
		h, _, err := compileRules(ctx, r.schema, field.NewPath("schema"))
		if err != nil {
			r.mu.Unlock()
			return nil, err
		}
		r.handle, r.compiled = h, true
	}
	h := r.handle
	r.mu.Unlock()
	if h == nil {
		return nil, nil
	}
	return validate(ctx, h, obj, old)
}

// CompileRules compiles the rules of schema s (a CRD version's
// openAPIV3Schema, reported under path) and returns kube-apiserver's errors
// for the rules that do not compile.
func CompileRules(ctx context.Context, s *structural.Schema, path *field.Path) (field.ErrorList, error) {
	if !hasRules(s) {
		return nil, nil
	}
	_, errs, err := compileRules(ctx, s, path)
	return errs, err
}

// Policy is a ValidatingAdmissionPolicy's compiled expressions.
type Policy struct {
	handle policyHandle
	errs   celtypes.PolicyErrors
}

// CompilePolicy compiles the expressions of p.
func CompilePolicy(ctx context.Context, p celtypes.Policy) (*Policy, error) {
	h, errs, err := compilePolicy(ctx, p)
	if err != nil {
		return nil, err
	}
	return &Policy{handle: h, errs: errs}, nil
}

// Errors are why the policy's expressions did not compile.
func (p *Policy) Errors() celtypes.PolicyErrors { return p.errs }

// Evaluate runs the policy on a request; authorizer answers the checks of
// its authorizer variable, and is called on the goroutine of the
// evaluation or, in the browser, on another while that one waits: the
// caller must hold no lock the authorizer takes.
func (p *Policy) Evaluate(ctx context.Context, in celtypes.PolicyInput, authorizer celtypes.Authorizer) (celtypes.PolicyResult, error) {
	return evaluate(ctx, p.handle, in, authorizer)
}

// TypeCheck checks a policy's validations against each of objects, as
// kube-controller-manager's ValidatingAdmissionPolicy status controller does
// (see celrules.TypeCheck).
func TypeCheck(ctx context.Context, objects []celtypes.CheckedType, params *celtypes.CheckedType, exprs celtypes.PolicyExpressions) ([]celtypes.ExpressionWarning, error) {
	return typeCheck(ctx, objects, params, exprs)
}

// DeviceSelectorErrors checks the expressions of device selectors
// (dynamic resource allocation's) as kube-apiserver does and returns its
// errors (see celrules.DeviceSelectorErrors).
func DeviceSelectorErrors(ctx context.Context, selectors []celtypes.DeviceSelector) (field.ErrorList, error) {
	if len(selectors) == 0 {
		return nil, nil
	}
	return deviceSelectorErrors(ctx, selectors)
}
