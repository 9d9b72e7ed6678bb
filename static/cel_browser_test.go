//go:build !js

package static_test

import (
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/chromedp/chromedp"

	"kubeplay/internal/browsertest"
	"kubeplay/static"
)

const (
	celCRDs    = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
	celWidgets = "/apis/cel.example.com/v1/namespaces/default/widgets"
	celCRD     = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"widgets.cel.example.com"},
"spec":{"group":"cel.example.com","scope":"Namespaced","names":{"plural":"widgets","singular":"widget","kind":"Widget","listKind":"WidgetList"},
"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","properties":{"spec":{"type":"object",
"properties":{"replicas":{"type":"integer"},"name":{"type":"string"}},
"x-kubernetes-validations":[{"rule":"self.replicas <= 3","message":"at most 3 replicas"},{"rule":"self.name.startsWith('w')","messageExpression":"'name ' + self.name + ' must start with w'"}]}}}}}]}}`
	celWidget = `{"apiVersion":"cel.example.com/v1","kind":"Widget","metadata":{"name":"big"},"spec":{"replicas":5,"name":"big"}}`
)

// TestBrowser_CELModule checks that the browser engine loads its CEL module
// (dist/kubeplay-cel.wasm) only when a request needs CEL: a fresh page
// fetches none; a CRD with validation rules, then an object that breaks
// them, get the native engine's answers (which the crd-cel scenarios check
// against kube-apiserver), and only then is the module fetched.
func TestBrowser_CELModule(t *testing.T) {
	browsertest.SkipIfAsked(t)
	if _, err := fs.ReadFile(static.FS(), "dist/kubeplay-cel.wasm"); err != nil {
		t.Fatalf("static/dist is not built (%v): run static/build.sh first, or set %s=1 to skip this test", err, browsertest.SkipEnv)
	}
	var fetches atomic.Int32
	h := static.Handler()
	mux := http.NewServeMux()
	mux.Handle("/browser/", http.StripPrefix("/browser", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Any fetch, the service worker's included: it downloads the module
		// only when the engine asks for it, as the page's download budget
		// counts.
		if r.URL.Path == "/dist/kubeplay-cel.wasm" {
			fetches.Add(1)
		}
		h.ServeHTTP(w, r)
	})))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	type answer struct {
		Status int
		Body   string
		Ms     float64
	}
	ctx := browsertest.New(t, browserTestLimit)
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/browser/")); err != nil {
		t.Fatalf("opening the page: %v", err)
	}
	var created answer
	browsertest.Eval(t, ctx, `kubeplay.ready.then(() => kubeplay.fetch("/api/v1/namespaces/default/configmaps", {method: "POST",
		headers: {"Content-Type": "application/json"}, body: JSON.stringify({metadata: {name: "no-cel"}})})).then((r) => ({Status: r.status}))`, &created)
	if created.Status != http.StatusCreated {
		t.Fatalf("a ConfigMap: %d", created.Status)
	}
	if n := fetches.Load(); n != 0 {
		t.Fatalf("the page fetched kubeplay-cel.wasm %d times before any request needed CEL", n)
	}

	var got struct{ CRD, Widget, Again answer }
	browsertest.Eval(t, ctx, `(async () => {
		const post = async (path, body) => {
			const start = performance.now();
			const res = await kubeplay.fetch(path, {method: "POST", headers: {"Content-Type": "application/json"}, body});
			return {Status: res.status, Body: await res.text(), Ms: performance.now() - start};
		};
		const widget = `+"`"+celWidget+"`"+`;
		return {CRD: await post("`+celCRDs+`", `+"`"+celCRD+"`"+`), Widget: await post("`+celWidgets+`", widget), Again: await post("`+celWidgets+`", widget)};
	})()`, &got)
	t.Logf("first request needing CEL (a CRD with rules: the module fetched, compiled, started): %.0f ms; then an object breaking them: %.0f ms, again: %.0f ms",
		got.CRD.Ms, got.Widget.Ms, got.Again.Ms)
	if got.CRD.Status != http.StatusCreated {
		t.Fatalf("the CRD: %d %s", got.CRD.Status, got.CRD.Body)
	}
	if n := fetches.Load(); n != 1 {
		t.Errorf("kubeplay-cel.wasm fetched %d times, want once", n)
	}
	srvURL := nativeServer(t)
	post := func(path, body string) answer {
		res, err := http.Post(srvURL+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return answer{Status: res.StatusCode, Body: strings.TrimSpace(string(b))}
	}
	if a := post(celCRDs, celCRD); a.Status != http.StatusCreated {
		t.Fatalf("native: the CRD: %d %s", a.Status, a.Body)
	}
	want := post(celWidgets, celWidget)
	if want.Status != http.StatusUnprocessableEntity || !strings.Contains(want.Body, "at most 3 replicas") || !strings.Contains(want.Body, "name big must start with w") {
		t.Fatalf("native: the widget: %d %s", want.Status, want.Body)
	}
	for _, a := range []answer{got.Widget, got.Again} {
		if a.Status != want.Status || strings.TrimSpace(a.Body) != want.Body {
			t.Errorf("the widget: %d %s\nwant (native): %d %s", a.Status, a.Body, want.Status, want.Body)
		}
	}
}
