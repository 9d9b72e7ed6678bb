package e2e_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"kubeplay/e2e"
	"kubeplay/internal/browsertest"
)

// TestUI_views clicks through the explorer, the object page (YAML, managed
// fields, deletion) and the live watch in headless Chromium, with objects
// made by kubectl; markup in names and values stays text.
func TestUI_views(t *testing.T) {
	server := e2e.Start(t, t.TempDir()).URL
	kubectl := e2e.Kubectl(t, server)
	ctx := browsertest.New(t, 3*time.Minute)
	kubectl.Stdin(`apiVersion: v1
kind: ConfigMap
metadata:
  name: demo
  labels:
    app: web
  annotations:
    caption: "<img src=x onerror=alert(1)>"
data:
  greeting: hello
`).Succeeds("apply", "--server-side", "-f", "-")
	kubectl.Succeeds("label", "configmap", "demo", "team=blue")

	// Explorer: kubectl get's columns, and a link to the object.
	do(t, ctx, chromedp.Navigate(server+"/?r=v1/configmaps&ns=default"), chromedp.WaitVisible(`table.objects`))
	var heads string
	browsertest.Eval(t, ctx, `[...document.querySelectorAll("table.objects th")].map(th => th.textContent).join(",")`, &heads)
	if heads != "Name,Data,Age" {
		t.Errorf("columns %q", heads)
	}
	browsertest.Screenshot(t, ctx, "/tmp/kubeplay-ui-explorer.png")
	// Keyboard: focus the object's link and press Enter.
	do(t, ctx, chromedp.Focus(`table.objects a`), chromedp.KeyEvent("\r"), chromedp.WaitVisible(`pre.yaml`))
	browsertest.Screenshot(t, ctx, "/tmp/kubeplay-ui-object.png")

	// Managed fields: kubectl (Apply) and kubectl-label (Update) own different labels.
	do(t, ctx, chromedp.Focus(`nav.tabs a[href*="tab=fields"]`), chromedp.KeyEvent("\r"), chromedp.WaitVisible(`table.managers`))
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
	// Clicking a marked line names its owners.
	do(t, ctx, chromedp.Click(`pre.yaml .yl[title^="kubectl-label"]`))
	var owner string
	browsertest.Eval(t, ctx, `document.getElementById("owner-details").textContent`, &owner)
	if !strings.HasPrefix(owner, "team: blue — owned by kubectl-label · Update") {
		t.Errorf("owner details %q", owner)
	}
	browsertest.Screenshot(t, ctx, "/tmp/kubeplay-ui-fields.png")

	// Live watch: kubectl's change arrives with a diff.
	do(t, ctx, chromedp.Navigate(server+"/ui/watch?r=v1/configmaps&ns=default&bookmarks=1&sendInitialEvents=1"),
		chromedp.WaitVisible(`section.watch[data-live="on"]`))
	poll(t, ctx, (`[...document.querySelectorAll("li.wev")].some(li => li.dataset.type === "ADDED" && li.textContent.includes("default/demo"))`))
	start := time.Now()
	kubectl.Succeeds("label", "configmap", "demo", "team=green", "--overwrite")
	poll(t, ctx, (`[...document.querySelectorAll("li.wev-MODIFIED pre.diff .add")].some(s => s.textContent.includes("team: green"))`))
	t.Logf("kubectl label -> MODIFIED shown with its diff: %v", time.Since(start).Round(time.Millisecond))
	var injected bool
	browsertest.Eval(t, ctx, `document.querySelector("#events img") !== null`, &injected)
	if injected {
		t.Error("an annotation's markup became an element in the watch view")
	}
	browsertest.Screenshot(t, ctx, "/tmp/kubeplay-ui-watch.png")

	// A dropped connection reconnects and resumes from the last
	// resourceVersion: the next change arrives once, nothing is replayed.
	var events int
	browsertest.Eval(t, ctx, `(() => { window.kubeplayWatch.close(); return document.querySelectorAll("li.wev").length; })()`, &events)
	poll(t, ctx, `document.getElementById("watch-state").textContent.startsWith("live") && window.kubeplayWatch.readyState === 1 &&
		new URL(window.kubeplayWatch.url).searchParams.get("resourceVersion") !== null`)
	kubectl.Succeeds("annotate", "configmap", "demo", "note=after-reconnect")
	poll(t, ctx, `[...document.querySelectorAll("li.wev-MODIFIED")].some(li => li.textContent.includes("after-reconnect"))`)
	var added int
	browsertest.Eval(t, ctx, `document.querySelectorAll("li.wev").length - `+fmt.Sprint(events), &added)
	if added != 1 {
		t.Errorf("%d events after reconnecting, want 1", added)
	}

	// Pause holds events back; resume shows them.
	do(t, ctx, chromedp.Click(`#pause`))
	kubectl.Succeeds("delete", "configmap", "demo")
	poll(t, ctx, (`document.getElementById("watch-state").textContent.includes("1 held")`))
	do(t, ctx, chromedp.Click(`#pause`))
	poll(t, ctx, `document.querySelector("li.wev-DELETED") !== null`)

	// The watch itself is in the request log, among the UI's reads.
	do(t, ctx, chromedp.Navigate(server+"/ui/requests?verb=watch&client=kubeplay-ui&ui=show"), chromedp.WaitVisible(`section.requests`))
	poll(t, ctx, `[...document.querySelectorAll("li.entry .target")].some(e => e.textContent.startsWith("/api/v1/namespaces/default/configmaps?") && e.textContent.includes("watch=1"))`)

	// Usable at 1280×720 and on a narrow screen: nothing wider than the window.
	kubectl.Succeeds("create", "configmap", "narrow", "--from-literal=key=value")
	kubectl.Succeeds("label", "configmap", "narrow", "tier=web")
	for _, size := range [][2]int64{{1280, 720}, {390, 844}} {
		for _, page := range []string{"/?r=v1/configmaps&ns=default", "/ui/object?r=v1/configmaps&ns=default&name=narrow&tab=fields",
			"/ui/watch?r=v1/configmaps&ns=default", "/ui/edit", "/ui/object?r=v1/namespaces&name=default&tab=deletion"} {
			do(t, ctx, chromedp.EmulateViewport(size[0], size[1]), chromedp.Navigate(server+page), chromedp.WaitVisible(`main`))
			var overflow bool
			browsertest.Eval(t, ctx, `document.documentElement.scrollWidth > window.innerWidth`, &overflow)
			if overflow {
				var wide []string
				browsertest.Eval(t, ctx, `[...document.querySelectorAll("body *")].filter(e => e.getBoundingClientRect().right > window.innerWidth + 1).slice(0, 6).map(e => e.tagName + "." + e.className + " " + Math.round(e.getBoundingClientRect().right))`, &wide)
				t.Logf("too wide: %q", wide)
				t.Errorf("%s at %dx%d is wider than the window", page, size[0], size[1])
			}
		}
		browsertest.Screenshot(t, ctx, fmt.Sprintf("/tmp/kubeplay-ui-deletion-%dx%d.png", size[0], size[1]))
	}
	do(t, ctx, chromedp.Navigate(server+"/ui/object?r=v1/configmaps&ns=default&name=narrow&tab=fields"), chromedp.WaitVisible(`main`))
	browsertest.Screenshot(t, ctx, "/tmp/kubeplay-ui-fields-narrow.png")

	// The dark theme follows the system's preference.
	dark := chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}})
		return err
	})
	do(t, ctx, chromedp.EmulateViewport(1280, 720), dark, chromedp.Navigate(server+"/ui/object?r=v1/configmaps&ns=default&name=narrow&tab=fields"), chromedp.WaitVisible(`main`))
	var bg string
	browsertest.Eval(t, ctx, `getComputedStyle(document.body).backgroundColor`, &bg)
	if bg != "rgb(20, 23, 29)" {
		t.Errorf("dark theme background %q", bg)
	}
	browsertest.Screenshot(t, ctx, "/tmp/kubeplay-ui-fields-dark.png")
}

func do(t *testing.T, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatal(err)
	}
}

// follow clicks a link or a submit button and waits until the page it leads
// to is loaded and ready is true in it.
func follow(t *testing.T, ctx context.Context, selector, ready string) {
	t.Helper()
	var ok bool
	browsertest.Eval(t, ctx, `window.stalePage = true`, &ok)
	do(t, ctx, chromedp.Click(selector))
	// A poll fails when the page it runs in goes away: poll again in the new one.
	for range 50 {
		_, err := chromedp.Run(ctx, browsertest.Poll(`window.stalePage === undefined && document.readyState === "complete" && (`+ready+`)`))
		if err == nil {
			return
		}
		if !strings.Contains(err.Error(), "navigated") && !strings.Contains(err.Error(), "context") {
			t.Fatalf("following %s: %v", selector, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("following %s: the page never got ready", selector)
}

func poll(t *testing.T, ctx context.Context, expr string) {
	t.Helper()
	if _, err := chromedp.Run(ctx, browsertest.Poll(expr)); err != nil {
		t.Fatalf("waiting for %s: %v", expr, err)
	}

}

// TestUI_editor applies YAML with CodeMirror, meets a conflict with
// kubectl's field, and takes each way out the page offers.
func TestUI_editor(t *testing.T) {
	server := e2e.Start(t, t.TempDir()).URL
	kubectl := e2e.Kubectl(t, server)
	ctx := browsertest.New(t, 3*time.Minute)
	kubectl.Succeeds("create", "configmap", "shared", "--from-literal=a=1")

	do(t, ctx, chromedp.Navigate(server+"/ui/edit?r=v1/configmaps&ns=default&name=shared"), chromedp.WaitVisible(`.cm-editor`))
	var loaded string
	browsertest.Eval(t, ctx, `window.kubeplayEditor.state.doc.toString()`, &loaded)
	if !strings.Contains(loaded, "name: shared") || strings.Contains(loaded, "managedFields") {
		t.Errorf("editor loaded %q", loaded)
	}
	setEditor := func(text string) {
		t.Helper()
		var ok bool
		browsertest.Eval(t, ctx, `(() => { const v = window.kubeplayEditor;
			v.dispatch({changes: {from: 0, to: v.state.doc.length, insert: `+"`"+text+"`"+`}}); return true; })()`, &ok)
	}
	submit := func(button string) { t.Helper(); follow(t, ctx, button, `document.querySelector(".result") !== null`) }
	apply := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shared\n  namespace: default\ndata:\n  a: \"2\"\n  b: \"<script>alert(1)</script>\"\n"
	setEditor(apply)
	submit(`button.primary`)
	var conflict struct {
		Code   string
		Fields []string
		Ways   []string
	}
	browsertest.Eval(t, ctx, `({
		Code: document.querySelector(".result .code").textContent,
		Fields: [...document.querySelectorAll("table.conflicts tbody tr")].map(tr => tr.textContent),
		Ways: [...document.querySelectorAll("form.way button")].map(b => b.textContent),
	})`, &conflict)
	browsertest.Screenshot(t, ctx, "/tmp/kubeplay-ui-editor-conflict.png")
	if conflict.Code != "409 Conflict" || strings.Join(conflict.Fields, ",") != ".data.akubectl-create" || len(conflict.Ways) != 3 {
		t.Fatalf("conflict shown as %+v", conflict)
	}

	// Adopt the live value: the field becomes shared, b is applied.
	submit(`form.way-adopt button`)
	var code string
	browsertest.Eval(t, ctx, `document.querySelector(".result .code").textContent`, &code)
	if code != "200 OK" {
		t.Errorf("adopting: %s", code)
	}
	if got := kubectl.Succeeds("get", "configmap", "shared", "-o", "jsonpath={.data.a} {.data.b}"); got != "1 <script>alert(1)</script>" {
		t.Errorf("after adopting: %q", got)
	}

	// Conflict again, then force: the UI's manager takes .data.a over.
	do(t, ctx, chromedp.Navigate(server+"/ui/edit"), chromedp.WaitVisible(`.cm-editor`))
	setEditor(strings.Replace(apply, `a: "2"`, `a: "3"`, 1))
	submit(`button.primary`)
	submit(`form.way-force button`)
	browsertest.Eval(t, ctx, `document.querySelector(".result .code").textContent`, &code)
	if got := kubectl.Succeeds("get", "configmap", "shared", "-o", "jsonpath={.data.a}"); code != "200 OK" || got != "3" {
		t.Errorf("forcing: %s, data.a %q", code, got)
	}

	// A strategic merge patch, dry run: answered, nothing stored.
	do(t, ctx, chromedp.Navigate(server+"/ui/edit?r=v1/configmaps&ns=default&name=shared"), chromedp.WaitVisible(`.cm-editor`))
	setEditor(`{"data": {"c": "dry"}}`)
	do(t, ctx, chromedp.SetValue(`#action`, "strategic"), chromedp.Click(`input[name=dryRun]`))
	submit(`button.primary`)
	var req string
	browsertest.Eval(t, ctx, `document.querySelector(".result .code").textContent + " " + document.querySelector(".result .request").textContent`, &req)
	if req != "200 OK PATCH /api/v1/namespaces/default/configmaps/shared?dryRun=All&fieldManager=kubeplay-ui" {
		t.Errorf("patch sent as %q", req)
	}
	if got := kubectl.Succeeds("get", "configmap", "shared", "-o", "jsonpath={.data.c}"); got != "" {
		t.Errorf("dry run stored data.c=%q", got)
	}
	browsertest.Screenshot(t, ctx, "/tmp/kubeplay-ui-editor.png")
}

// TestUI_deletion follows a namespace held in Terminating by an object's
// finalizer, and the object's own deletion.
func TestUI_deletion(t *testing.T) {
	server := e2e.Start(t, t.TempDir()).URL
	kubectl := e2e.Kubectl(t, server)
	ctx := browsertest.New(t, 3*time.Minute)
	kubectl.Succeeds("create", "namespace", "doomed")
	kubectl.Stdin(`apiVersion: v1
kind: ConfigMap
metadata:
  name: held
  namespace: doomed
  finalizers: ["example.com/hold"]
`).Succeeds("apply", "-f", "-")
	kubectl.Succeeds("delete", "namespace", "doomed", "--wait=false")

	// The YAML tab says the namespace is being deleted and links to why.
	do(t, ctx, chromedp.Navigate(server+"/ui/object?r=v1/namespaces&name=doomed"), chromedp.WaitVisible(`p.warning a`))
	do(t, ctx, chromedp.Click(`p.warning a`), chromedp.WaitVisible(`dl.facts`))
	poll(t, ctx, `[...document.querySelectorAll(".tree .node")].some(n => n.textContent.includes("held") && n.textContent.includes("example.com/hold"))`)
	var ns struct{ Phase, Finalizers, Timeline string }
	browsertest.Eval(t, ctx, `({
		Phase: document.querySelector("dl.facts").textContent,
		Finalizers: document.querySelector("table.finalizers")?.textContent ?? "",
		Timeline: document.querySelector("ol.timeline").textContent,
	})`, &ns)
	browsertest.Screenshot(t, ctx, "/tmp/kubeplay-ui-deletion-namespace.png")
	if !strings.Contains(ns.Phase, "Terminating") || !strings.Contains(ns.Timeline, "DeletionTimestampSet") {
		t.Errorf("namespace deletion %+v", ns)
	}

	// The held object: its finalizer, who added it, who should remove it.
	follow(t, ctx, `.tree .node a`, `document.querySelector("table.finalizers") !== null`)
	var fin string
	browsertest.Eval(t, ctx, `document.querySelector("table.finalizers tbody").textContent`, &fin)
	if !strings.Contains(fin, "example.com/hold") || !strings.Contains(fin, "kubectl-client-side-apply") {
		t.Errorf("finalizers %q", fin)
	}
	kubectl.Succeeds("patch", "configmap", "held", "-n", "doomed", "--type=json", `-p=[{"op":"remove","path":"/metadata/finalizers"}]`)
	do(t, ctx, chromedp.Reload(), chromedp.WaitVisible(`ol.timeline`))
	var timeline string
	browsertest.Eval(t, ctx, `document.querySelector("ol.timeline").textContent`, &timeline)
	if !strings.Contains(timeline, "FinalizerRemoved") || !strings.Contains(timeline, "Removed") {
		t.Errorf("timeline %q", timeline)
	}
	browsertest.Screenshot(t, ctx, "/tmp/kubeplay-ui-deletion.png")

	// Foreground cascading deletion: the owner waits for a dependent that
	// blocks it, which waits for its own finalizer.
	kubectl.Succeeds("create", "configmap", "owner")
	uid := kubectl.Succeeds("get", "configmap", "owner", "-o", "jsonpath={.metadata.uid}")
	kubectl.Stdin(`apiVersion: v1
kind: ConfigMap
metadata:
  name: dependent
  finalizers: ["example.com/hold"]
  ownerReferences: [{apiVersion: v1, kind: ConfigMap, name: owner, uid: `+uid+`, blockOwnerDeletion: true}]
`).Succeeds("apply", "-f", "-")
	kubectl.Succeeds("delete", "configmap", "owner", "--cascade=foreground", "--wait=false")
	// The page shows the state when loaded: reload until the garbage
	// collector has marked the dependent.
	want := "owner: terminating, waiting for foregroundDeletion; dependent: terminating, waiting for example.com/hold"
	var tree []string
	for deadline := time.Now().Add(e2e.WaitLimit(t)); ; {
		do(t, ctx, chromedp.Navigate(server+"/ui/object?r=v1/configmaps&ns=default&name=owner&tab=deletion"), chromedp.WaitVisible(`ul.tree`))
		browsertest.Eval(t, ctx, `[...document.querySelectorAll("ul.tree li.node")].map(n => n.querySelector(":scope > a").textContent + ": " + n.querySelector(":scope > .state").textContent)`, &tree)
		if strings.Join(tree, "; ") == want || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if got := strings.Join(tree, "; "); got != want {
		t.Errorf("tree %q, want %q", got, want)
	}
	browsertest.Screenshot(t, ctx, "/tmp/kubeplay-ui-deletion-cascade.png")
}
