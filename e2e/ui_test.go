package e2e_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"kubeplay/e2e"
	"kubeplay/internal/browsertest"
)

// TestUI_requestLog opens the request log in headless Chromium and watches
// kubectl's requests arrive live.
func TestUI_requestLog(t *testing.T) {
	server := e2e.Start(t, t.TempDir()).URL
	kubectl := e2e.Kubectl(t, server)
	ctx := browsertest.New(t, 2*time.Minute)
	if err := chromedp.Do(ctx, chromedp.Navigate(server+"/ui/requests"), chromedp.WaitVisible(chromedp.CSS(`section.requests[data-live="on"]`))); err != nil {
		t.Fatalf("opening the request log: %v", err)
	}

	start := time.Now()
	kubectl.Succeeds("create", "configmap", "live-demo", "--from-literal=greeting=<b>hello</b>")
	if _, err := chromedp.Run(ctx, browsertest.Poll(`[...document.querySelectorAll("li.entry")].some(li =>
		li.querySelector(".method").textContent === "POST" && li.querySelector(".status").textContent.trim() === "201")`)); err != nil {
		t.Fatalf("waiting for kubectl's POST to show: %v", err)
	}
	t.Logf("kubectl create -> entry shown: %v (kubectl's own run included)", time.Since(start).Round(time.Millisecond))

	var got struct {
		Target, Client, Kubectl, Body string
		Injected                      bool
	}
	browsertest.Eval(t, ctx, `(async () => {
		const li = [...document.querySelectorAll("li.entry")].find(li => li.querySelector(".method").textContent === "POST");
		li.querySelector("details").open = true;
		return {
			Target: li.querySelector(".target").textContent,
			Client: li.querySelector(".client").textContent,
			Kubectl: [...li.querySelectorAll(".command")].find(c => c.querySelector(".label").textContent === "kubectl").querySelector("code").textContent,
			Body: li.querySelector("pre.body").textContent,
			Injected: document.querySelector("pre.body b") !== null,
		};
	})()`, &got)
	browsertest.Screenshot(t, ctx, "/tmp/kubeplay-ui-requests.png")
	if !strings.HasPrefix(got.Target, "/api/v1/namespaces/default/configmaps?") || got.Client != "kubectl create configmap" ||
		!strings.HasPrefix(got.Kubectl, "echo '") || !strings.Contains(got.Kubectl, "| kubectl create -f - -n default") {
		t.Errorf("entry %+v", got)
	}
	if !strings.Contains(got.Body, "<b>hello</b>") || got.Injected {
		t.Errorf("request body shown as %q (markup injected: %v), want the text", got.Body, got.Injected)
	}

	// Filters are query parameters and apply to live entries too.
	if err := chromedp.Do(ctx, chromedp.Navigate(server+"/ui/requests?verb=delete"), chromedp.WaitVisible(chromedp.CSS(`section.requests[data-live="on"]`))); err != nil {
		t.Fatal(err)
	}
	kubectl.Succeeds("get", "configmap", "live-demo")
	kubectl.Succeeds("delete", "configmap", "live-demo")
	if _, err := chromedp.Run(ctx, browsertest.Poll(`document.querySelectorAll("li.entry").length === 1 &&
		document.querySelector("li.entry .verb").textContent === "delete"`)); err != nil {
		t.Fatalf("waiting for only the DELETE to show: %v", err)
	}
}
