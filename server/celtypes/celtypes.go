package celtypes

import (
	"fmt"
	"slices"

	"kubeplay/server/structural"
)

// ValidationRule is how kube-apiserver shows an x-kubernetes-validations
// rule in its errors: its internal Go type, marshalled to JSON (so without
// JSON tags).
type ValidationRule struct {
	Rule, Message, MessageExpression string
	Reason                           *string
	FieldPath                        string
	OptionalOldSelf                  *bool
}

// Authorizer answers the checks of an admission policy's authorizer
// variable.
type Authorizer interface {
	// Authorize decides check: whether its user may do its verb, why
	// (the authorizer's reason, "" if it gave none), and the error the
	// authorizer met deciding, if any.
	Authorize(check AuthzCheck) (allowed bool, reason string, err error)
}

// AuthzCheck is one check of the authorizer variable.
type AuthzCheck struct {
	// ServiceAccountNamespace and ServiceAccountName name the
	// ServiceAccount authorizer.serviceAccount(namespace, name) checks
	// for; both empty, the check is for the request's user.
	ServiceAccountNamespace string `json:"serviceAccountNamespace,omitempty"`
	ServiceAccountName      string `json:"serviceAccountName,omitempty"`
	// Path is the non-resource path of authorizer.path(path); else the
	// check is for a resource.
	Path        string `json:"path,omitempty"`
	Group       string `json:"group,omitempty"`
	Resource    string `json:"resource,omitempty"`
	Subresource string `json:"subresource,omitempty"`
	Namespace   string `json:"namespace,omitempty"`
	Name        string `json:"name,omitempty"`
	Verb        string `json:"verb,omitempty"`
}

// Policy is what a ValidatingAdmissionPolicy's evaluation reads of its
// spec.
type Policy struct {
	MatchConditions  []NamedExpression `json:"matchConditions,omitempty"`
	Variables        []NamedExpression `json:"variables,omitempty"`
	Validations      []Validation      `json:"validations,omitempty"`
	AuditAnnotations []AuditAnnotation `json:"auditAnnotations,omitempty"`
	// Fail is failurePolicy Fail: an expression that fails to compile or
	// to evaluate denies the request, rather than being skipped.
	Fail bool `json:"fail,omitempty"`
}

// NamedExpression is a matchCondition or a variable.
type NamedExpression struct {
	Name       string `json:"name"`
	Expression string `json:"expression"`
}

// Validation is one entry of spec.validations.
type Validation struct {
	Expression        string `json:"expression"`
	Message           string `json:"message,omitempty"`
	MessageExpression string `json:"messageExpression,omitempty"`
	Reason            string `json:"reason,omitempty"`
}

// AuditAnnotation is one entry of spec.auditAnnotations.
type AuditAnnotation struct {
	Key             string `json:"key"`
	ValueExpression string `json:"valueExpression"`
}

// PolicyErrors are why each expression of a Policy did not compile, in
// kube-apiserver's words, "" for one that did; each list is as long as the
// Policy's. An environment that cannot be made fails every expression.
type PolicyErrors struct {
	MatchConditions    []string `json:"matchConditions,omitempty"`
	Variables          []string `json:"variables,omitempty"`
	Validations        []string `json:"validations,omitempty"`
	MessageExpressions []string `json:"messageExpressions,omitempty"`
	AuditAnnotations   []string `json:"auditAnnotations,omitempty"`
}

// PolicyInput is what a policy's expressions see of a request: the values
// of object, oldObject, request, params and namespaceObject (nil: null),
// decoded JSON with int64 and float64 numbers; RequestResource is
// authorizer.requestResource's check.
type PolicyInput struct {
	Object          any        `json:"object"`
	OldObject       any        `json:"oldObject"`
	Request         any        `json:"request"`
	Params          any        `json:"params"`
	NamespaceObject any        `json:"namespaceObject"`
	RequestResource AuthzCheck `json:"requestResource"`
}

// PolicyResult is a policy's evaluation: the message of its first failed
// validation and the reason of the denial (both "" when it admits the
// request, or does not apply to it), and its audit annotations.
type PolicyResult struct {
	Message     string       `json:"message,omitempty"`
	Reason      string       `json:"reason,omitempty"`
	Annotations []Annotation `json:"annotations,omitempty"`
}

// Annotation is an audit annotation: key is the policy's auditAnnotation's.
type Annotation struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// CheckedType is a kind a policy's expressions are type-checked against.
type CheckedType struct {
	// Group, Version and Kind name it in warnings: "apps/v1, Kind=Deployment".
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
	// Schema is its objects' schema, metadata included.
	Schema *structural.Schema `json:"schema"`
}

// String is how a warning names the type, as Kubernetes prints a
// GroupVersionKind.
func (t CheckedType) String() string {
	return fmt.Sprintf("%s/%s, Kind=%s", t.Group, t.Version, t.Kind)
}

// PolicyExpressions are the expressions of a ValidatingAdmissionPolicy that
// a type check reads.
type PolicyExpressions struct {
	// VariableNames and VariableExpressions are spec.variables, in order.
	VariableNames       []string                `json:"variableNames,omitempty"`
	VariableExpressions []string                `json:"variableExpressions,omitempty"`
	Validations         []ValidationExpressions `json:"validations,omitempty"`
}

// ValidationExpressions are one entry of spec.validations.
type ValidationExpressions struct {
	Expression        string `json:"expression"`
	MessageExpression string `json:"messageExpression"`
}

// ExpressionWarning is an entry of a policy's
// status.typeChecking.expressionWarnings.
type ExpressionWarning struct {
	FieldRef string `json:"fieldRef"`
	Warning  string `json:"warning"`
}

// ReservedWords are the words CEL reserves: no variable or field may be
// named by one.
var ReservedWords = []string{"true", "false", "null", "in", "as", "break", "const", "continue", "else", "for",
	"function", "if", "import", "let", "loop", "package", "namespace", "return", "var", "void", "while"}

// IsIdentifier reports whether name can name a CEL variable: letters,
// digits and underscores, not first a digit, not a reserved word.
func IsIdentifier(name string) bool {
	for i, c := range name {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return name != "" && !slices.Contains(ReservedWords, name)
}
