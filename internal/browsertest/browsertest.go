//go:build !js

// Package browsertest drives headless Chromium (Debian's chromium) from
// tests, with chromedp: the browser-mode test of package static and the UI's
// end-to-end tests. Tests that need the browser fail, rather than skip,
// without it, unless KUBEPLAY_SKIP_BROWSER_TEST is set; KUBEPLAY_CHROMIUM
// overrides the browser's path.
package browsertest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

const (
	// SkipEnv, when set, skips the browser tests.
	SkipEnv         = "KUBEPLAY_SKIP_BROWSER_TEST"
	chromiumEnv     = "KUBEPLAY_CHROMIUM"
	defaultChromium = "/usr/bin/chromium"
)

// SkipIfAsked skips the test when SkipEnv is set.
func SkipIfAsked(t testing.TB) {
	t.Helper()
	if os.Getenv(SkipEnv) != "" {
		t.Skipf("%s is set", SkipEnv)
	}
}

// Chromium returns the browser's path, failing the test if it is missing.
func Chromium(t testing.TB) string {
	t.Helper()
	SkipIfAsked(t)
	chromium := os.Getenv(chromiumEnv)
	if chromium == "" {
		chromium = defaultChromium
	}
	if _, err := os.Stat(chromium); err != nil {
		t.Fatalf("Chromium not found (%v): install it (apt-get install -y chromium), point %s at it, or set %s=1 to skip this test", err, chromiumEnv, SkipEnv)
	}
	return chromium
}

// New starts a headless browser for the test (at most limit long), logs
// the page's console, and fails the test on an uncaught exception in it.
func New(t testing.TB, limit time.Duration, flags ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	chromium := Chromium(t)
	ctx, cancel := context.WithTimeout(t.Context(), limit)
	t.Cleanup(cancel)
	ctx, cancel = chromedp.NewExecAllocator(ctx, append([]chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	}, flags...)...)
	t.Cleanup(cancel)
	ctx, cancel = chromedp.NewContext(ctx)
	console := chromedp.Events(ctx, runtime.ConsoleAPICalled)
	exceptions := chromedp.Events(ctx, runtime.ExceptionThrown)
	var wg sync.WaitGroup
	t.Cleanup(func() {
		cancel()
		wg.Wait() // no logging after the test
	})
	wg.Go(func() {
		for ev, err := range console {
			if err != nil {
				return
			}
			var args []string
			for _, a := range ev.Args {
				if a.Value != nil {
					args = append(args, string(a.Value))
				} else {
					args = append(args, a.Description)
				}
			}
			t.Logf("console.%s: %s", ev.Type, strings.Join(args, " "))
		}
	})
	wg.Go(func() {
		for ev, err := range exceptions {
			if err != nil {
				return
			}
			d := ev.ExceptionDetails
			msg := d.Text
			if d.Exception != nil {
				msg += " " + d.Exception.Description
			}
			t.Errorf("uncaught exception in the page: %s", msg)
		}
	})
	return ctx
}

// Poll waits until the JavaScript expression is true. It polls on a timer:
// the default, on animation frames, never fires in a background tab.
func Poll(expr string) chromedp.Action[bool] {
	return chromedp.Poll[bool](expr, chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(2*time.Minute)) // only ends a broken run
}

// Click waits until an element matches the CSS selector and clicks it, in
// one turn of the page's JavaScript: a page that replaces its body as it
// renders cannot swap the node between finding and clicking it (as it can
// between chromedp.Click's query and click, on a loaded machine).
func Click(selector string) chromedp.Action[chromedp.Void] {
	return Until(fmt.Sprintf(`(() => { const e = document.querySelector(%s); if (!e) return false; e.click(); return true })()`, jsString(selector)))
}

// Until is Poll as a step of chromedp.Do: it waits until the JavaScript
// expression is true.
func Until(expr string) chromedp.Action[chromedp.Void] {
	poll := Poll(expr)
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		_, err := poll(ctx, t)
		return chromedp.Void{}, err
	}
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// Eval evaluates expr (a Promise of a JSON-able value) into out.
func Eval(t testing.TB, ctx context.Context, expr string, out any) {
	t.Helper()
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[[]byte](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("evaluating: %v", err)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		t.Fatalf("decoding %s: %v", raw, err)
	}
}

// Screenshot saves a PNG of the page at path, for people to look at.
func Screenshot(t *testing.T, ctx context.Context, path string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Errorf("screenshot: %v", err)
		return
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Errorf("screenshot: %v", err)
		return
	}
	t.Logf("screenshot: %s", path)
}
