//go:build js && wasm

package server_test

import (
	"net/http"
	"strings"
	"syscall/js"
	"testing"
)

// TestCELModuleNotLoaded checks what a request that needs CEL gets when the
// CEL module cannot be loaded (offline and not cached, not found): a 500
// InternalError saying why, at once, while the rest of the engine keeps
// working, and CEL works again once the module loads.
func TestCELModuleNotLoaded(t *testing.T) {
	// The host's loader (static/cel.mjs), made to fail as worker.js's does.
	global := js.Global()
	host := global.Get("__kubeplayCEL")
	fail := js.FuncOf(func(js.Value, []js.Value) any {
		return global.Get("Promise").Call("reject", global.Get("Error").New("cannot fetch http://x/dist/kubeplay-cel.wasm: 404 Not Found"))
	})
	t.Cleanup(func() {
		global.Set("__kubeplayCEL", host)
		fail.Release()
	})
	global.Set("__kubeplayCEL", fail)

	h := newTestServer(t)
	crds := "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
	crd := widgetsCRD(t)
	const want = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Internal error occurred: the CEL module could not be loaded: cannot fetch http://x/dist/kubeplay-cel.wasm: 404 Not Found","reason":"InternalError","details":{"causes":[{"message":"the CEL module could not be loaded: cannot fetch http://x/dist/kubeplay-cel.wasm: 404 Not Found"}]},"code":500}`
	if w := serve(h, http.MethodPost, crds, "application/json", crd); w.Code != http.StatusInternalServerError || strings.TrimSpace(w.Body.String()) != want {
		t.Errorf("a CRD with rules: %d %s\nwant 500 %s", w.Code, w.Body, want)
	}
	if w := serve(h, http.MethodPost, "/api/v1/namespaces/default/configmaps", "application/json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}`); w.Code != http.StatusCreated {
		t.Errorf("a ConfigMap: %d %s", w.Code, w.Body)
	}
	// A host that throws rather than rejecting.
	global.Set("__kubeplayCEL", global.Get("Function").New("throw new Error('broken host')"))
	if w := serve(h, http.MethodPost, crds, "application/json", crd); w.Code != http.StatusInternalServerError ||
		!strings.Contains(w.Body.String(), `"message":"Internal error occurred: the CEL module could not be loaded: __kubeplayCEL: JavaScript error: broken host"`) {
		t.Errorf("a CRD with rules, the host throwing: %d %s", w.Code, w.Body)
	}
	global.Set("__kubeplayCEL", host)
	if w := serve(h, http.MethodPost, crds, "application/json", crd); w.Code != http.StatusCreated {
		t.Errorf("a CRD with rules, the module loaded: %d %s", w.Code, w.Body)
	}
}
