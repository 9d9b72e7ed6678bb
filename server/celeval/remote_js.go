//go:build js && wasm

package celeval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"syscall/js"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/server/celtypes"
	"kubeplay/server/structural"
)

// hostGlobal is the function the host (static/cel.mjs, installed by
// static/worker.js and wasm/node/run.mjs) provides to reach the CEL module:
//
//	__kubeplayCEL(op, request, authorize) -> Promise<string>
//
// It loads wasm/cel the first time it is called (again after a failure),
// calls the module's operation op (celtypes.Op*) with request (JSON) and
// resolves to its celtypes.Response (JSON); it rejects, with why, when the
// module cannot be loaded. authorize, given to OpEvaluate, is called by the
// module synchronously: authorize(check JSON) -> celtypes.Decision JSON.
const hostGlobal = "__kubeplayCEL"

// remote is what the module compiled: its handle, released once the engine
// drops it.
type remote struct{ handle int }

type (
	rulesHandle  = *remote
	policyHandle = *remote
)

// newRemote holds handle, nil for 0 (nothing compiled).
func newRemote(handle int) *remote {
	if handle == 0 {
		return nil
	}
	r := &remote{handle: handle}
	runtime.AddCleanup(r, func(h int) {
		// Cleanups run one at a time: the release must not hold up the others.
		go func() {
			_, _ = call(context.Background(), celtypes.OpRelease, celtypes.ReleaseRequest{Handle: h}, nil) // nothing to do if it fails
		}()
	}, handle)
	return r
}

func compileRules(ctx context.Context, s *structural.Schema, path *field.Path) (rulesHandle, field.ErrorList, error) {
	resp, err := call(ctx, celtypes.OpCompileRules, celtypes.CompileRulesRequest{Schema: s, Path: path.String()}, nil)
	if err != nil {
		return nil, nil, err
	}
	return newRemote(resp.Handle), celtypes.ErrorList(resp.FieldErrors), nil
}

func validate(ctx context.Context, h rulesHandle, obj, old map[string]any) (field.ErrorList, error) {
	req := celtypes.ValidateRequest{Handle: h.handle}
	var err error
	if req.Object, err = json.Marshal(obj); err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if old != nil {
		if req.Old, err = json.Marshal(old); err != nil {
			return nil, apierrors.NewInternalError(err)
		}
	}
	resp, err := call(ctx, celtypes.OpValidate, req, nil)
	runtime.KeepAlive(h) // not released while in use
	if err != nil {
		return nil, err
	}
	return celtypes.ErrorList(resp.FieldErrors), nil
}

func compilePolicy(ctx context.Context, p celtypes.Policy) (policyHandle, celtypes.PolicyErrors, error) {
	resp, err := call(ctx, celtypes.OpCompilePolicy, celtypes.CompilePolicyRequest{Policy: p}, nil)
	if err != nil {
		return nil, celtypes.PolicyErrors{}, err
	}
	if resp.PolicyErrors == nil {
		return nil, celtypes.PolicyErrors{}, apierrors.NewInternalError(errors.New("the CEL module compiled a policy but said nothing of its errors"))
	}
	return newRemote(resp.Handle), *resp.PolicyErrors, nil
}

func evaluate(ctx context.Context, h policyHandle, in celtypes.PolicyInput, a celtypes.Authorizer) (celtypes.PolicyResult, error) {
	resp, err := call(ctx, celtypes.OpEvaluate, celtypes.EvaluateRequest{Handle: h.handle, Input: in}, a)
	runtime.KeepAlive(h)
	if err != nil {
		return celtypes.PolicyResult{}, err
	}
	if resp.PolicyResult == nil {
		return celtypes.PolicyResult{}, nil
	}
	return *resp.PolicyResult, nil
}

func typeCheck(ctx context.Context, objects []celtypes.CheckedType, params *celtypes.CheckedType, exprs celtypes.PolicyExpressions) ([]celtypes.ExpressionWarning, error) {
	resp, err := call(ctx, celtypes.OpTypeCheck, celtypes.TypeCheckRequest{Objects: objects, Params: params, Expressions: exprs}, nil)
	if err != nil {
		return nil, err
	}
	return resp.Warnings, nil
}

func deviceSelectorErrors(ctx context.Context, selectors []celtypes.DeviceSelector) (field.ErrorList, error) {
	resp, err := call(ctx, celtypes.OpCompileDeviceSelectors, celtypes.DeviceSelectorsRequest{Selectors: selectors}, nil)
	if err != nil {
		return nil, err
	}
	return celtypes.ErrorList(resp.FieldErrors), nil
}

// call runs operation op of the module on req and returns its answer,
// authorizer answering the checks of the authorizer variable. It waits
// for the module without blocking JavaScript's event loop: the module
// runs, and calls authorizer, on the event loop, while this goroutine
// waits; so its caller must hold no lock the authorizer needs.
func call(ctx context.Context, op string, req any, authorizer celtypes.Authorizer) (celtypes.Response, error) {
	var resp celtypes.Response
	body, err := json.Marshal(req)
	if err != nil {
		return resp, apierrors.NewInternalError(err)
	}
	host := js.Global().Get(hostGlobal)
	if host.Type() != js.TypeFunction {
		return resp, notLoaded("the host provides no globalThis." + hostGlobal)
	}
	type settled struct {
		json string
		err  string
	}
	done := make(chan settled, 1)
	funcs := []js.Func{
		js.FuncOf(func(_ js.Value, args []js.Value) any {
			done <- settled{json: args[0].String()}
			return nil
		}),
		js.FuncOf(func(_ js.Value, args []js.Value) any {
			done <- settled{err: message(args[0])}
			return nil
		}),
	}
	args := []any{op, string(body)}
	if authorizer != nil {
		authorize := js.FuncOf(func(_ js.Value, args []js.Value) any { return authorizeJSON(authorizer, args) })
		funcs = append(funcs, authorize)
		args = append(args, authorize)
	}
	release := func() {
		for _, f := range funcs {
			f.Release()
		}
	}
	if err := start(host, args, funcs[0], funcs[1]); err != nil {
		release()
		return resp, notLoaded(err.Error())
	}
	var s settled
	select {
	case s = <-done:
		release()
	case <-ctx.Done():
		// The module may still call back until it settles.
		go func() {
			<-done
			release()
		}()
		return resp, ctx.Err()
	}
	if s.err != "" {
		return resp, notLoaded(s.err)
	}
	if err := json.Unmarshal([]byte(s.json), &resp); err != nil {
		return resp, apierrors.NewInternalError(fmt.Errorf("the CEL module answered %s with %w", op, err))
	}
	if resp.Error != "" {
		return resp, apierrors.NewInternalError(fmt.Errorf("the CEL module could not %s: %s", op, resp.Error))
	}
	return resp, nil
}

// start calls host with args and has its Promise settle through then and
// catch. A host that throws, or returns no Promise, is an error, not a panic.
func start(host js.Value, args []any, then, catch js.Func) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%s: %v", hostGlobal, p)
		}
	}()
	host.Invoke(args...).Call("then", then, catch)
	return nil
}

// notLoaded is the error of a request that needs CEL when the module
// cannot be loaded (offline and not cached, not found).
func notLoaded(why string) error {
	return apierrors.NewInternalError(fmt.Errorf("the CEL module could not be loaded: %s", why))
}

// authorizeJSON answers the module's authorize(check JSON) call.
func authorizeJSON(a celtypes.Authorizer, args []js.Value) any {
	var d celtypes.Decision
	var check celtypes.AuthzCheck
	if len(args) != 1 || args[0].Type() != js.TypeString {
		d.Error = "authorize takes one string"
	} else if err := json.Unmarshal([]byte(args[0].String()), &check); err != nil {
		d.Error = err.Error()
	} else {
		allowed, reason, err := a.Authorize(check)
		d.Allowed, d.Reason = allowed, reason
		if err != nil {
			d.Error = err.Error()
		}
	}
	b, _ := json.Marshal(d) // a Decision always marshals
	return string(b)
}

// message is what a rejection says: an Error's message, or the value.
func message(v js.Value) string {
	if v.Type() == js.TypeObject && v.Get("message").Type() == js.TypeString {
		return v.Get("message").String()
	}
	return js.Global().Call("String", v).String()
}
