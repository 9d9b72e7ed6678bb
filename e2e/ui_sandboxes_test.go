package e2e_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"kubeplay/e2e"
	"kubeplay/internal/browsertest"
)

// TestUI_sandboxes drives the sandboxes page in headless Chromium: create a
// sandbox set up by a built-in scenario, run another scenario in it and
// watch its steps arrive, run one of one's own, reset it and delete it.
func TestUI_sandboxes(t *testing.T) {
	server := e2e.Start(t, t.TempDir(), "--sandboxes-in-memory").URL
	ctx := browsertest.New(t, 2*time.Minute)
	if err := chromedp.Do(ctx,
		chromedp.Navigate(server+"/"),
		chromedp.Click(`nav a[href="/ui/sandboxes"]`),
		chromedp.WaitVisible(`p.empty`),
		chromedp.SetValue(`form.create select[name="scenario"]`, "deployment-rollout"),
		chromedp.Click(`form.create button`),
		chromedp.WaitVisible(`table.sandbox-list tr[data-id]`),
	); err != nil {
		t.Fatalf("creating a sandbox: %v", err)
	}
	notice, err := chromedp.Run(ctx, chromedp.Text(`p.notice`))
	if err != nil || !strings.HasSuffix(notice, "set up by the scenario deployment-rollout (every step passed).") {
		t.Errorf("notice %q (%v)", notice, err)
	}

	// A scenario with kubectl steps and controller actions, step by step.
	if err := chromedp.Do(ctx,
		chromedp.SetValue(`form.run select`, "controllers-at-work"),
		chromedp.Click(`form.run button`),
	); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, browsertest.Poll(`document.querySelector("section.run-result").dataset.state === "passed"`)); err != nil {
		state, _ := chromedp.Run(ctx, chromedp.Text(`section.run-result`))
		t.Fatalf("waiting for the run to pass: %v\n%s", err, state)
	}
	var run struct {
		Steps, OK, Outputs int
		First, Explain     string
	}
	browsertest.Eval(t, ctx, `(async () => {
		const steps = [...document.querySelectorAll("ol.run-steps > li")];
		return {
			Steps: steps.length,
			OK: steps.filter(li => li.classList.contains("ok")).length,
			Outputs: document.querySelectorAll("ol.run-steps pre.output").length,
			First: steps[0].querySelector(".step-name").textContent,
			Explain: steps[3].querySelector(".hint")?.textContent ?? "",
		};
	})()`, &run)
	browsertest.Screenshot(t, ctx, "/tmp/kubeplay-ui-sandboxes.png")
	if run.Steps != 9 || run.OK != 9 || run.Outputs < 4 || run.First != "kubectl apply a Deployment" || !strings.Contains(run.Explain, "no controller acts on it") {
		t.Errorf("run shown as %+v", run)
	}

	// A scenario of one's own: the template as it is.
	if err := chromedp.Do(ctx,
		chromedp.Click(`details.own-scenario summary`),
		chromedp.Click(`form.run-own button`),
	); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, browsertest.Poll(`document.querySelector("section.run-result").dataset.state === "passed" &&
		document.querySelector(".run-name").textContent === "mine" && document.querySelectorAll("ol.run-steps > li.ok").length === 2`)); err != nil {
		state, _ := chromedp.Run(ctx, chromedp.Text(`section.run-result`))
		t.Fatalf("waiting for one's own scenario to pass: %v\n%s", err, state)
	}

	// Reset, then delete.
	// (The page being left is marked, to wait for the next one.)
	if err := chromedp.Do(ctx,
		chromedp.Evaluate[chromedp.Void](`document.body.dataset.left = "yes"`),
		chromedp.Click(`table.sandbox-list button[value="reset"]`),
		chromedp.WaitVisible(`body:not([data-left]) p.notice`),
	); err != nil {
		t.Fatal(err)
	}
	if notice, err = chromedp.Run(ctx, chromedp.Text(`p.notice`)); err != nil || !strings.HasSuffix(notice, "it is empty again.") {
		t.Errorf("after a reset: %q (%v)", notice, err)
	}
	if err := chromedp.Do(ctx,
		chromedp.Click(`table.sandbox-list button[value="delete"]`),
		chromedp.WaitVisible(`p.empty`),
	); err != nil {
		t.Fatalf("deleting: %v", err)
	}
}
