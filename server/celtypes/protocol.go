package celtypes

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/server/structural"
)

// The operations of the CEL module (wasm/cel): each takes its request as
// JSON and answers a Response as JSON. A handle names what the module
// compiled until a Release; 0 is "nothing to run" (a schema without rules).
const (
	OpCompileRules           = "compileRules"           // CompileRulesRequest -> Response{Handle, FieldErrors}
	OpValidate               = "validate"               // ValidateRequest -> Response{FieldErrors}
	OpCompilePolicy          = "compilePolicy"          // CompilePolicyRequest -> Response{Handle, PolicyErrors}
	OpEvaluate               = "evaluate"               // EvaluateRequest -> Response{PolicyResult}; calls the authorizer
	OpTypeCheck              = "typeCheck"              // TypeCheckRequest -> Response{Warnings}
	OpCompileDeviceSelectors = "compileDeviceSelectors" // DeviceSelectorsRequest -> Response{FieldErrors}
	OpRelease                = "release"                // ReleaseRequest -> Response{}
)

// CompileRulesRequest compiles the rules of Schema, reported under Path.
type CompileRulesRequest struct {
	Schema *structural.Schema `json:"schema"`
	Path   string             `json:"path"`
}

// ValidateRequest validates Object (replacing Old, nil on create) with the
// rules of Handle. The objects are plain decoded JSON (Values).
type ValidateRequest struct {
	Handle int             `json:"handle"`
	Object json.RawMessage `json:"object"`
	Old    json.RawMessage `json:"old"`
}

type CompilePolicyRequest struct {
	Policy Policy `json:"policy"`
}

// EvaluateRequest evaluates the policy of Handle on Input.
type EvaluateRequest struct {
	Handle int         `json:"handle"`
	Input  PolicyInput `json:"input"`
}

type TypeCheckRequest struct {
	Objects     []CheckedType     `json:"objects"`
	Params      *CheckedType      `json:"params"`
	Expressions PolicyExpressions `json:"expressions"`
}

// DeviceSelectorsRequest checks the expressions of device selectors.
type DeviceSelectorsRequest struct {
	Selectors []DeviceSelector `json:"selectors"`
}

// DeviceSelector is a device selector's CEL expression and the path its
// errors are reported at.
type DeviceSelector struct {
	Path       string `json:"path"`
	Expression string `json:"expression"`
}

type ReleaseRequest struct {
	Handle int `json:"handle"`
}

// Response is the answer to any operation: Error, if set, says why it
// could not be done at all.
type Response struct {
	Error        string              `json:"error,omitempty"`
	Handle       int                 `json:"handle,omitempty"`
	FieldErrors  []FieldError        `json:"fieldErrors,omitempty"`
	PolicyErrors *PolicyErrors       `json:"policyErrors,omitempty"`
	PolicyResult *PolicyResult       `json:"policyResult,omitempty"`
	Warnings     []ExpressionWarning `json:"warnings,omitempty"`
}

// Decision is the authorizer's answer to an AuthzCheck, as the CEL module
// receives it from the engine.
type Decision struct {
	Allowed bool   `json:"allowed,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Error   string `json:"error,omitempty"`
}

// FieldError is a field.Error as JSON. Its value is what the engine's
// message shows of it (field.Error.ErrorBody): simple values are sent as
// themselves, others (shown as their JSON) as their JSON.
type FieldError struct {
	Type   field.ErrorType `json:"type"`
	Field  string          `json:"field"`
	Detail string          `json:"detail,omitempty"`
	// Omit is field.OmitValueType's BadValue: the value is not shown.
	Omit  bool            `json:"omit,omitempty"`
	Value json.RawMessage `json:"value,omitempty"`
}

// FieldErrors is errs as JSON.
func FieldErrors(errs field.ErrorList) []FieldError {
	out := make([]FieldError, len(errs))
	for i, e := range errs {
		out[i] = FieldError{Type: e.Type, Field: e.Field, Detail: e.Detail}
		if _, omit := e.BadValue.(field.OmitValueType); omit {
			out[i].Omit = true
			continue
		}
		if b, err := json.Marshal(e.BadValue); err == nil {
			out[i].Value = b
		}
	}
	return out
}

// ErrorList is the field.ErrorList errs came from, showing the same
// messages.
func ErrorList(errs []FieldError) field.ErrorList {
	out := make(field.ErrorList, len(errs))
	for i, e := range errs {
		out[i] = &field.Error{Type: e.Type, Field: e.Field, Detail: e.Detail}
		switch {
		case e.Omit:
			out[i].BadValue = field.OmitValueType{}
		case len(e.Value) > 0:
			out[i].BadValue = shownValue(e.Value)
		}
	}
	return out
}

// shownValue is a value as field.Error.ErrorBody shows it: a string, a
// bool, a number or null as itself, anything else as its JSON.
func shownValue(raw json.RawMessage) any {
	var v any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return raw
	}
	switch x := v.(type) {
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return n
		}
		f, _ := x.Float64()
		return f
	case map[string]any, []any:
		return raw
	}
	return v
}

// policyInput is PolicyInput without its JSON methods.
type policyInput PolicyInput

// MarshalJSON writes in's values so that UnmarshalJSON reads the same
// int64s and float64s: a whole float64 keeps a ".0", which CEL sees as a
// double.
func (in PolicyInput) MarshalJSON() ([]byte, error) {
	out := policyInput(in)
	for _, v := range []*any{&out.Object, &out.OldObject, &out.Request, &out.Params, &out.NamespaceObject} {
		*v = floatsMarked(*v)
	}
	return json.Marshal(out)
}

func floatsMarked(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = floatsMarked(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = floatsMarked(e)
		}
		return out
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1e15 {
			return json.Number(strconv.FormatFloat(x, 'f', 1, 64))
		}
	}
	return v
}

// UnmarshalJSON reads what MarshalJSON wrote, numbers as int64 (written
// without a fraction or exponent) or float64.
func (in *PolicyInput) UnmarshalJSON(data []byte) error {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var out policyInput
	if err := d.Decode(&out); err != nil {
		return err
	}
	for _, v := range []*any{&out.Object, &out.OldObject, &out.Request, &out.Params, &out.NamespaceObject} {
		*v = plainNumbers(*v)
	}
	*in = PolicyInput(out)
	return nil
}

// plainNumbers turns the json.Numbers in v into int64s and float64s.
func plainNumbers(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = plainNumbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = plainNumbers(e)
		}
	case json.Number:
		if !strings.ContainsAny(string(x), ".eE") {
			if n, err := x.Int64(); err == nil {
				return n
			}
		}
		f, _ := x.Float64()
		return f
	}
	return v
}
