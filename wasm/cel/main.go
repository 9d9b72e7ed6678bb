//go:build js && wasm

// Command cel is kubeplay's CEL module for the browser: package celrules
// (cel-go and what it needs, a fifth of the engine's code), which the engine
// (../) does not link, built apart into static/dist/kubeplay-cel.wasm and
// loaded only when the engine first needs CEL. See package celeval for the
// engine's side and static/cel.mjs for the host's.
//
// The host must, before starting this program, set globalThis[bootHook] to a
// function(module) that this program calls once, module being an object
// with one method:
//
//	call(op, request, authorize) -> string
//
// which runs operation op (celtypes.Op*) on request (JSON) and returns its
// celtypes.Response (JSON), synchronously. authorize, for OpEvaluate, is the
// engine's function(check JSON) -> celtypes.Decision JSON, which call calls
// synchronously for each check of a policy's authorizer variable.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"syscall/js"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/server/celrules"
	"kubeplay/server/celtypes"
)

const bootHook = "__kubeplayCELBoot"

func main() {
	hook := js.Global().Get(bootHook)
	if hook.Type() != js.TypeFunction {
		fmt.Fprintf(os.Stderr, "kubeplay-cel: globalThis.%s is not a function: start this program with static/cel.mjs\n", bootHook)
		os.Exit(1)
	}
	m := &module{handles: map[int]any{}}
	hook.Invoke(js.ValueOf(map[string]any{"call": js.FuncOf(m.call)}))
	select {} // serve the engine until the page goes away
}

// module holds what it compiled, by handle. Its calls come one at a time,
// from JavaScript's event loop.
type module struct {
	handles map[int]any
	last    int
}

func (m *module) call(_ js.Value, args []js.Value) (out any) {
	var resp celtypes.Response
	defer func() {
		// A bad call must not end the program: it answers an error.
		if p := recover(); p != nil {
			resp = celtypes.Response{Error: fmt.Sprint(p)}
		}
		b, _ := json.Marshal(resp) // a Response always marshals
		out = string(b)
	}()
	if len(args) < 2 || args[0].Type() != js.TypeString || args[1].Type() != js.TypeString {
		resp.Error = "call takes an operation and a request (strings)"
		return nil
	}
	var authorize js.Value
	if len(args) > 2 {
		authorize = args[2]
	}
	var err error
	resp, err = m.do(args[0].String(), []byte(args[1].String()), authorize)
	if err != nil {
		resp = celtypes.Response{Error: err.Error()}
	}
	return nil
}

func (m *module) do(op string, body []byte, authorize js.Value) (celtypes.Response, error) {
	var resp celtypes.Response
	switch op {
	case celtypes.OpCompileRules:
		var req celtypes.CompileRulesRequest
		if err := json.Unmarshal(body, &req); err != nil {
			return resp, err
		}
		v, errs := celrules.Compile(req.Schema, field.NewPath(req.Path))
		if v != nil {
			resp.Handle = m.keep(v)
		}
		resp.FieldErrors = celtypes.FieldErrors(errs)
	case celtypes.OpValidate:
		var req celtypes.ValidateRequest
		if err := json.Unmarshal(body, &req); err != nil {
			return resp, err
		}
		v, err := held[*celrules.Validator](m, req.Handle)
		if err != nil {
			return resp, err
		}
		obj, old := map[string]any{}, map[string]any(nil)
		if err := decode(req.Object, &obj); err != nil {
			return resp, err
		}
		if len(req.Old) > 0 {
			if err := decode(req.Old, &old); err != nil {
				return resp, err
			}
		}
		resp.FieldErrors = celtypes.FieldErrors(v.Validate(obj, old))
	case celtypes.OpCompilePolicy:
		var req celtypes.CompilePolicyRequest
		if err := json.Unmarshal(body, &req); err != nil {
			return resp, err
		}
		p := celrules.CompilePolicy(req.Policy)
		errs := p.Errors()
		resp.Handle, resp.PolicyErrors = m.keep(p), &errs
	case celtypes.OpEvaluate:
		var req celtypes.EvaluateRequest
		if err := json.Unmarshal(body, &req); err != nil {
			return resp, err
		}
		p, err := held[*celrules.Policy](m, req.Handle)
		if err != nil {
			return resp, err
		}
		if authorize.Type() != js.TypeFunction {
			return resp, errors.New("evaluate needs an authorize function")
		}
		result := p.Evaluate(req.Input, jsAuthorizer{authorize})
		resp.PolicyResult = &result
	case celtypes.OpTypeCheck:
		var req celtypes.TypeCheckRequest
		if err := json.Unmarshal(body, &req); err != nil {
			return resp, err
		}
		warnings, err := celrules.TypeCheck(req.Objects, req.Params, req.Expressions)
		if err != nil {
			return resp, err
		}
		resp.Warnings = warnings
	case celtypes.OpCompileDeviceSelectors:
		var req celtypes.DeviceSelectorsRequest
		if err := json.Unmarshal(body, &req); err != nil {
			return resp, err
		}
		errs, err := celrules.DeviceSelectorErrors(req.Selectors)
		if err != nil {
			return resp, err
		}
		resp.FieldErrors = celtypes.FieldErrors(errs)
	case celtypes.OpRelease:
		var req celtypes.ReleaseRequest
		if err := json.Unmarshal(body, &req); err != nil {
			return resp, err
		}
		delete(m.handles, req.Handle)
	default:
		return resp, fmt.Errorf("no operation %q", op)
	}
	return resp, nil
}

func (m *module) keep(v any) int {
	m.last++
	m.handles[m.last] = v
	return m.last
}

// held is what handle names, of type T.
func held[T any](m *module, handle int) (T, error) {
	v, ok := m.handles[handle].(T)
	if !ok {
		return v, fmt.Errorf("no handle %d of type %T", handle, v)
	}
	return v, nil
}

// decode reads a custom object as the engine holds it: numbers as
// json.Number.
func decode(data []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	return d.Decode(v)
}

// jsAuthorizer asks the engine's authorize function.
type jsAuthorizer struct{ authorize js.Value }

func (a jsAuthorizer) Authorize(check celtypes.AuthzCheck) (bool, string, error) {
	b, err := json.Marshal(check)
	if err != nil {
		return false, "", err
	}
	var d celtypes.Decision
	if err := json.Unmarshal([]byte(a.authorize.Invoke(string(b)).String()), &d); err != nil {
		return false, "", fmt.Errorf("the engine's authorizer answered: %w", err)
	}
	if d.Error != "" {
		return d.Allowed, d.Reason, errors.New(d.Error)
	}
	return d.Allowed, d.Reason, nil
}
