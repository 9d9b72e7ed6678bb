package e2e_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"kubeplay/e2e"
	"kubeplay/internal/browsertest"
)

// oldIngress is an Ingress of extensions/v1beta1, served up to v1.21.
const oldIngress = "apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata:\n  name: legacy\n  namespace: default\nspec:\n  backend:\n    serviceName: web\n    servicePort: 80\n"

// ingressWarning is the deprecation warning kube-apiserver v1.21 sends with
// it.
const ingressWarning = `extensions/v1beta1 Ingress is deprecated in v1.14+, unavailable in v1.22+; use networking.k8s.io/v1 Ingress`

// TestUI_emulation switches the root cluster to v1.21 from the header in
// headless Chromium, creates an extensions/v1beta1 Ingress from the editor
// and sees the deprecation warning, then switches to v1.25 and sees the
// extensions group gone from the explorer.
func TestUI_emulation(t *testing.T) {
	server := e2e.Start(t, t.TempDir()).URL
	ctx := browsertest.New(t, 2*time.Minute)
	do(t, ctx, chromedp.Navigate(server+"/"), chromedp.WaitVisible(`form.emulation`))
	var version string
	browsertest.Eval(t, ctx, `document.querySelector("form.emulation select").value`, &version)
	if version != "1.35" {
		t.Errorf("the header shows %q, want 1.35", version)
	}
	switchTo := func(ctx context.Context, v string) {
		t.Helper()
		do(t, ctx, chromedp.SetValue(`form.emulation select`, v))
		follow(t, ctx, `form.emulation button`, `document.querySelector("form.emulation select").value === "`+v+`"`)
	}
	hasExtensions := `document.querySelector('details[data-group="extensions"]') !== null`

	switchTo(ctx, "1.21")
	var listed bool
	browsertest.Eval(t, ctx, hasExtensions, &listed)
	if !listed {
		t.Error("the explorer of v1.21 lacks the extensions group")
	}

	do(t, ctx, chromedp.Navigate(server+"/ui/edit"), chromedp.WaitVisible(`.cm-editor`))
	var ok bool
	browsertest.Eval(t, ctx, `(() => { const v = window.kubeplayEditor;
		v.dispatch({changes: {from: 0, to: v.state.doc.length, insert: `+"`"+oldIngress+"`"+`}}); return true; })()`, &ok)
	follow(t, ctx, `button.primary`, `document.querySelector(".result") !== null`)
	var result struct{ Code, Warning string }
	browsertest.Eval(t, ctx, `({Code: document.querySelector(".result .code").textContent,
		Warning: document.querySelector(".result .warning")?.textContent ?? ""})`, &result)
	browsertest.Screenshot(t, ctx, "/tmp/kubeplay-ui-emulation-1.21.png")
	if result.Code != "201 Created" || !strings.Contains(result.Warning, ingressWarning) {
		t.Errorf("applying an extensions/v1beta1 Ingress in v1.21: %+v", result)
	}

	// The editor's own header switches, back to the editor.
	switchTo(ctx, "1.25")
	do(t, ctx, chromedp.Navigate(server+"/"), chromedp.WaitVisible(`form.emulation`))
	browsertest.Eval(t, ctx, hasExtensions, &listed)
	browsertest.Screenshot(t, ctx, "/tmp/kubeplay-ui-emulation-1.25.png")
	if listed {
		t.Error("the explorer of v1.25 lists the extensions group")
	}
}

// TestServe_emulationSwitch: the header's switch, which bypasses the API's
// authorization, is there only when every visitor is an administrator.
func TestServe_emulationSwitch(t *testing.T) {
	for _, tc := range []struct {
		anonymous string
		want      bool
	}{{"admin", true}, {"rbac", false}, {"deny", false}} {
		t.Run(tc.anonymous, func(t *testing.T) {
			server := e2e.Start(t, t.TempDir(), "--anonymous", tc.anonymous).URL
			for _, path := range []string{"/", "/ui/emulation"} {
				resp, err := http.Get(server + path)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if got := strings.Contains(string(body), `action="/ui/emulation"`); got != tc.want {
					t.Errorf("GET %s: %d, switch offered %v, want %v", path, resp.StatusCode, got, tc.want)
				}
			}
		})
	}
}
