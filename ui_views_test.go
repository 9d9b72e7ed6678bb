package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"kubeplay/internal/browsertest"
)

// TestUI_views clicks through the explorer, the object page (YAML, managed
// fields, deletion) and the live watch in headless Chromium, with objects
// made by kubectl; markup in names and values stays text.
func TestUI_views(t *testing.T) {
	server := startServer(t, t.TempDir())
	ctx := browsertest.New(t, 3*time.Minute)
	kubectl(t, server, `apiVersion: v1
kind: ConfigMap
metadata:
  name: demo
  labels:
    app: "<img src=x onerror=alert(1)>"
data:
  greeting: hello
`, "apply", "--server-side", "-f", "-")
	kubectl(t, server, "", "label", "configmap", "demo", "team=blue")

	// Explorer: kubectl get's columns, and a link to the object.
	do(t, ctx, chromedp.Navigate(server+"/?r=v1/configmaps&ns=default"), chromedp.WaitVisible(`table.objects`))
	var heads string
	browsertest.Eval(t, ctx, `[...document.querySelectorAll("table.objects th")].map(th => th.textContent).join(",")`, &heads)
	if heads != "Name,Data,Age" {
		t.Errorf("columns %q", heads)
	}
	browsertest.Screenshot(t, ctx, "/tmp/kubeplay-ui-explorer.png")
	do(t, ctx, chromedp.Click(`table.objects a`), chromedp.WaitVisible(`pre.yaml`))
	browsertest.Screenshot(t, ctx, "/tmp/kubeplay-ui-object.png")

	// Managed fields: kubectl (Apply) and kubectl-label (Update) own different labels.
	do(t, ctx, chromedp.Click(`nav.tabs a[href*="tab=fields"]`), chromedp.WaitVisible(`table.managers`))
	var fields struct {
		Managers  []string
		App, Team string
		Injected  bool
	}
	browsertest.Eval(t, ctx, `(() => {
		const line = (key) => [...document.querySelectorAll("pre.yaml .yl")].find(l => l.querySelector(".y-key")?.textContent === key);
		return {
			Managers: [...document.querySelectorAll("table.managers tbody tr")].map(tr => tr.dataset.manager),
			App: line("app").title, Team: line("team").title,
			Injected: document.querySelector("pre.yaml img") !== null,
		};
	})()`, &fields)
	if strings.Join(fields.Managers, ",") != "kubectl,kubectl-label" || !strings.HasPrefix(fields.App, "kubectl · Apply") ||
		!strings.HasPrefix(fields.Team, "kubectl-label · Update") || fields.Injected {
		t.Errorf("managed fields %+v", fields)
	}
	browsertest.Screenshot(t, ctx, "/tmp/kubeplay-ui-fields.png")

	// Live watch: kubectl's change arrives with a diff.
	do(t, ctx, chromedp.Navigate(server+"/ui/watch?r=v1/configmaps&ns=default&bookmarks=1&sendInitialEvents=1"),
		chromedp.WaitVisible(`section.watch[data-live="on"]`))
	poll(t, ctx, (`[...document.querySelectorAll("li.wev")].some(li => li.dataset.type === "ADDED" && li.textContent.includes("default/demo"))`))
	start := time.Now()
	kubectl(t, server, "", "label", "configmap", "demo", "team=green", "--overwrite")
	poll(t, ctx, (`[...document.querySelectorAll("li.wev-MODIFIED pre.diff .add")].some(s => s.textContent.includes("team: green"))`))
	t.Logf("kubectl label -> MODIFIED shown with its diff: %v", time.Since(start).Round(time.Millisecond))
	browsertest.Screenshot(t, ctx, "/tmp/kubeplay-ui-watch.png")

	// Pause holds events back; resume shows them.
	do(t, ctx, chromedp.Click(`#pause`))
	kubectl(t, server, "", "delete", "configmap", "demo")
	poll(t, ctx, (`document.getElementById("watch-state").textContent.includes("1 held")`))
	do(t, ctx, chromedp.Click(`#pause`))
	poll(t, ctx, `document.querySelector("li.wev-DELETED") !== null`)
}

func do(t *testing.T, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatal(err)
	}
}

func poll(t *testing.T, ctx context.Context, expr string) {
	t.Helper()
	if _, err := chromedp.Run(ctx, browsertest.Poll(expr)); err != nil {
		t.Fatalf("waiting for %s: %v", expr, err)
	}
}
