//go:build !js

package static_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"kubeplay/internal/browsertest"
	"kubeplay/static"
)

// TestExportedSite exports the site, serves it with a plain file server (no
// precompressed copies, no special headers: what a static host does) and runs
// a learner's first steps against the engine in headless Chromium: create,
// server-side apply with a conflict (alice applies, bob conflicts, then
// forces and owns the field alone), deletion held by a finalizer, all seen
// by a watch; then the UI's pages, as screenshots.
func TestExportedSite(t *testing.T) {
	browsertest.SkipIfAsked(t)
	dir := t.TempDir()
	if err := static.Export(dir); err != nil {
		t.Fatalf("Export: %v (build static/dist first: static/build.sh)", err)
	}
	for _, name := range []string{"index.html", "page.js", "kubeplay.js", "worker.js", "cel.mjs", "dist/kubeplay.wasm", "dist/kubeplay-cel.wasm", "dist/sqlite3.wasm"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("exported site: %v", err)
		}
	}
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	t.Cleanup(srv.Close)

	ctx := browsertest.New(t, browserTestLimit)
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/")); err != nil {
		t.Fatalf("opening the page: %v", err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[chromedp.Void](`kubeplay.ready`, chromedp.EvalAwaitPromise)); err != nil {
		t.Fatalf("kubeplay.ready: %v", err)
	}

	var got struct {
		Create, AliceApply, BobApply, ForcedApply int
		ConflictReason, ConflictMessage           string
		Managers                                  []string
		Value                                     string
		Delete, WhileHeld, Release, AfterRelease  int
		DeletionTimestamp                         bool
		Events                                    []string
	}
	browsertest.Eval(t, ctx, `(async () => {
		const cms = "/api/v1/namespaces/default/configmaps";
		const json = {"Content-Type": "application/json"};
		const apply = (manager, value, force) => kubeplay.fetch(cms + "/app?fieldManager=" + manager + (force ? "&force=true" : ""), {
			method: "PATCH", headers: {"Content-Type": "application/apply-patch+yaml"},
			body: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  key: " + value + "\n"});
		const list = await (await kubeplay.fetch(cms)).json();
		const watch = await kubeplay.fetch(cms + "?watch=1&resourceVersion=" + list.metadata.resourceVersion);
		const events = [];
		const watched = (async () => {
			const reader = watch.body.pipeThrough(new TextDecoderStream()).getReader();
			let buf = "";
			for (;;) {
				const {value, done} = await reader.read();
				if (done) return;
				buf += value;
				let i;
				while ((i = buf.indexOf("\n")) >= 0) {
					const ev = JSON.parse(buf.slice(0, i));
					buf = buf.slice(i + 1);
					const name = ev.object.metadata.name;
					if (!["first", "app", "held"].includes(name)) continue;
					events.push(ev.type + " " + name);
					if (ev.type === "DELETED" && name === "held") { reader.cancel(); return; }
				}
			}
		})();

		const r = {};
		r.Create = (await kubeplay.fetch(cms, {method: "POST", headers: json,
			body: JSON.stringify({metadata: {name: "first"}, data: {key: "v0"}})})).status;
		r.AliceApply = (await apply("alice", "a")).status;
		const conflict = await apply("bob", "b");
		r.BobApply = conflict.status;
		const st = await conflict.json();
		r.ConflictReason = st.reason;
		r.ConflictMessage = st.message;
		const forced = await apply("bob", "b", true);
		r.ForcedApply = forced.status;
		const app = await forced.json();
		r.Managers = app.metadata.managedFields.map((f) => f.manager + "/" + f.operation);
		r.Value = app.data.key;

		await (await kubeplay.fetch(cms, {method: "POST", headers: json,
			body: JSON.stringify({metadata: {name: "held", finalizers: ["example.com/hold"]}})})).arrayBuffer();
		r.Delete = (await kubeplay.fetch(cms + "/held", {method: "DELETE"})).status;
		const held = await kubeplay.fetch(cms + "/held");
		r.WhileHeld = held.status;
		r.DeletionTimestamp = !!(await held.json()).metadata.deletionTimestamp;
		r.Release = (await kubeplay.fetch(cms + "/held", {method: "PATCH", headers: {"Content-Type": "application/merge-patch+json"},
			body: JSON.stringify({metadata: {finalizers: null}})})).status;
		r.AfterRelease = (await kubeplay.fetch(cms + "/held")).status;
		await watched;
		r.Events = events;
		return r;
	})()`, &got)

	if got.Create != 201 || got.AliceApply != 201 || got.BobApply != 409 || got.ForcedApply != 200 {
		t.Errorf("create %d, apply as alice %d, as bob %d, forced %d; want 201, 201, 409, 200", got.Create, got.AliceApply, got.BobApply, got.ForcedApply)
	}
	if got.ConflictReason != "Conflict" || !strings.Contains(got.ConflictMessage, `conflict with "alice"`) || !strings.Contains(got.ConflictMessage, ".data.key") {
		t.Errorf("conflict: %s: %s", got.ConflictReason, got.ConflictMessage)
	}
	if got.Value != "b" || strings.Join(got.Managers, ",") != "bob/Apply" {
		t.Errorf("after the forced apply: data.key %q, managers %v", got.Value, got.Managers)
	}
	if got.Delete != 200 || got.WhileHeld != 200 || !got.DeletionTimestamp || got.Release != 200 || got.AfterRelease != 404 {
		t.Errorf("finalizer: delete %d, get while held %d (deletionTimestamp %v), release %d, get after %d; want 200, 200 (true), 200, 404",
			got.Delete, got.WhileHeld, got.DeletionTimestamp, got.Release, got.AfterRelease)
	}
	want := "ADDED first,ADDED app,MODIFIED app,ADDED held,MODIFIED held,DELETED held"
	if strings.Join(got.Events, ",") != want {
		t.Errorf("watch events %v, want %s", got.Events, want)
	}

	// The UI: the ConfigMaps, then the request log.
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`location.hash = "#/?r=v1/configmaps&ns=default"`)); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, browsertest.Poll(`document.querySelector("#selection-title")?.textContent.includes("ConfigMap") && document.body.textContent.includes("app")`)); err != nil {
		t.Errorf("the explorer: %v", err)
	}
	browsertest.Screenshot(t, ctx, "/tmp/kubeplay-site-explorer.png")
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`location.hash = "#/ui/requests"`)); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, browsertest.Poll(`document.body.textContent.includes("fieldManager=bob")`)); err != nil {
		t.Errorf("the request log: %v", err)
	}

	// The log is live, over the in-page channel: a request made now appears
	// without reloading the page.
	if _, err := chromedp.Run(ctx, browsertest.Poll(`document.querySelector("section.requests")?.dataset.live === "on"`)); err != nil {
		t.Fatalf("the request log never went live: %v", err)
	}
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`document.querySelector("#entries").dataset.marked = "yes";
		kubeplay.fetch("/api/v1/namespaces/default/configmaps", {method: "POST", headers: {"Content-Type": "application/json"},
			body: JSON.stringify({metadata: {name: "live-one"}})})`, chromedp.EvalAwaitPromise)); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, browsertest.Poll(`document.querySelector("#entries").dataset.marked === "yes" &&
		document.querySelector("#entries").textContent.includes("live-one")`)); err != nil {
		t.Errorf("the new request did not appear in the log: %v", err)
	}
	browsertest.Screenshot(t, ctx, "/tmp/kubeplay-site-requests.png")

	// The watch page is live too, over the same in-page channel.
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`location.hash = "#/ui/watch?r=v1/configmaps&ns=default"`)); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, browsertest.Poll(`document.querySelector("section.watch")?.dataset.live === "on"`)); err != nil {
		t.Fatalf("the watch page never went live: %v", err)
	}
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`kubeplay.fetch("/api/v1/namespaces/default/configmaps", {method: "POST",
		headers: {"Content-Type": "application/json"}, body: JSON.stringify({metadata: {name: "seen-on-the-watch-page"}})})`, chromedp.EvalAwaitPromise)); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, browsertest.Poll(`document.querySelector("#events")?.textContent.includes("seen-on-the-watch-page")`)); err != nil {
		t.Errorf("the watch page did not show the new ConfigMap: %v", err)
	}
	browsertest.Screenshot(t, ctx, "/tmp/kubeplay-site-watch.png")
	// Back to the log, where the console's steps below start.
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`location.hash = "#/ui/requests"`)); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, browsertest.Poll(`document.querySelector("section.requests")?.dataset.live === "on"`)); err != nil {
		t.Fatalf("the request log never went live again: %v", err)
	}

	// The console: kubectl syntax, run by the engine; a watch streams until
	// stopped; its requests are in the log.
	run := func(line string) {
		t.Helper()
		err := chromedp.Do(ctx,
			chromedp.SetValue(chromedp.CSS(`.kp-console input[name=command]`), line),
			chromedp.Click(chromedp.CSS(`.kp-console button[type=submit]`)))
		if err != nil {
			t.Fatal(err)
		}
	}
	waitOut := func(text string) {
		t.Helper()
		if _, err := chromedp.Run(ctx, browsertest.Poll(`document.querySelector(".kp-console .kp-out").textContent.includes(`+strconv.Quote(text)+`)`)); err != nil {
			out, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`.kp-console .kp-out`)))
			t.Fatalf("the console never showed %q:\n%s", text, out)
		}
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`.kp-bar button[data-kp-action=console]`)),
		chromedp.Click(chromedp.CSS(`.kp-console summary`)),
		chromedp.SetValue(chromedp.CSS(`.kp-console textarea`), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: console-demo\ndata:\n  greeting: hello\n")); err != nil {
		t.Fatal(err)
	}
	run("create -f -")
	waitOut("configmap/console-demo created")
	run("get cm -l nosuch=label")
	waitOut("No resources found in default namespace.")
	run("get configmaps -w")
	waitOut("console-demo")
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`kubeplay.fetch("/api/v1/namespaces/default/configmaps", {method: "POST",
		headers: {"Content-Type": "application/json"}, body: JSON.stringify({metadata: {name: "seen-by-watch"}})})`, chromedp.EvalAwaitPromise)); err != nil {
		t.Fatal(err)
	}
	waitOut("seen-by-watch")
	browsertest.Screenshot(t, ctx, "/tmp/kubeplay-site-console.png")
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`.kp-console .kp-stop`))); err != nil {
		t.Fatal(err)
	}
	run("GET /api/v1/namespaces/default/configmaps/console-demo")
	waitOut("HTTP 200 OK")

	// On another page, a command shows its effect there at once.
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`location.hash = "#/?r=v1/configmaps&ns=default"`)); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, browsertest.Poll(`document.querySelector("#selection-title")?.textContent.includes("ConfigMap")`)); err != nil {
		t.Fatal(err)
	}
	run("delete configmap console-demo")
	waitOut(`configmap "console-demo" deleted`)
	if _, err := chromedp.Run(ctx, browsertest.Poll(`document.querySelector(".explorer") && !document.querySelector(".explorer").textContent.includes("console-demo") &&
		document.activeElement === document.querySelector(".kp-console input")`)); err != nil {
		t.Errorf("the explorer still lists console-demo after the console deleted it (or the console lost focus): %v", err)
	}
	run("create -f -")
	waitOut("configmap/console-demo created")
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`location.hash = "#/ui/requests?client=kubeplay-console"`)); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, browsertest.Poll(`document.querySelector("#entries")?.textContent.includes("/api/v1/namespaces/default/configmaps/console-demo")`)); err != nil {
		t.Errorf("the console's requests are not in the log: %v", err)
	}

	// A learner's first lesson, from the start page: the console closed
	// first, as a learner would before following the page's links.
	if err := chromedp.Do(ctx, browsertest.Click(`.kp-bar button[data-kp-action=console]`), browsertest.OpenByHash("/"),
		browsertest.Until(`document.body.dataset.stale !== "1" && document.querySelector(".start-lessons") !== null`)); err != nil {
		t.Fatal(err)
	}
	browsertest.Screenshot(t, ctx, "/tmp/kubeplay-site-start.png")
	browsertest.WalkLesson(t, ctx, "/tmp/kubeplay-site")

	// Offline: with the server gone, the service worker's copies start the
	// engine again, on the saved database.
	if _, err := chromedp.Run(ctx, browsertest.Poll(`navigator.serviceWorker.controller !== null`)); err != nil {
		t.Fatalf("no service worker controls the page: %v", err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[chromedp.Void](`navigator.serviceWorker.ready.then((r) => caches.open("kubeplay")).then(async (c) => {
		while (!(await c.match("dist/kubeplay.wasm"))) await new Promise((r) => setTimeout(r, 50));
	})`, chromedp.EvalAwaitPromise)); err != nil {
		t.Fatal(err)
	}
	srv.Close()
	if err := chromedp.Do(ctx, chromedp.Reload()); err != nil {
		t.Fatal(err)
	}
	var offline int
	browsertest.Eval(t, ctx, `kubeplay.ready.then(() => kubeplay.fetch("/api/v1/namespaces/default/configmaps/console-demo")).then((r) => r.status)`, &offline)
	if offline != 200 {
		t.Errorf("offline: GET console-demo = %d, want 200", offline)
	}
}
