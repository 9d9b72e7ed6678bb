//go:build !js

package static_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"kubeplay/internal/browsertest"
	"kubeplay/static"
	"kubeplay/store"
)

// The browser test runs the real thing: the page served from static.Handler
// under /browser/ (as the native server mounts it), the engine in headless
// Chromium (see package browsertest). It needs static/dist built
// (static/build.sh); it fails, rather than skips, without it.
const (
	screenshotPath   = "/tmp/kubeplay-browser.png"
	browserTestLimit = 3 * time.Minute
)

func TestBrowser(t *testing.T) {
	browsertest.SkipIfAsked(t)
	wasm, err := fs.ReadFile(static.FS(), "dist/kubeplay.wasm")
	if err != nil {
		t.Fatalf("static/dist is not built (%v): run static/build.sh first, or set %s=1 to skip this test", err, browsertest.SkipEnv)
	}
	// /browser/ as the native server mounts it; /slow/ the same files with
	// kubeplay.wasm held at half way until release is closed.
	release := make(chan struct{})
	mux := http.NewServeMux()
	mux.Handle("/browser/", http.StripPrefix("/browser", static.Handler()))
	mux.Handle("/slow/", http.StripPrefix("/slow", holdHalfway(static.Handler(), "/dist/kubeplay.wasm", release)))
	mux.Handle("/nobuild/", http.StripPrefix("/nobuild", http.FileServerFS(withoutDist(t))))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})

	ctx := browsertest.New(t, browserTestLimit)
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/browser/")); err != nil {
		t.Fatalf("opening the page: %v", err)
	}

	timings, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]float64](`kubeplay.ready.then(k => k.timings)`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("kubeplay.ready: %v", err)
	}
	t.Logf("page load -> first answer: %.0f ms (sqlite %.0f, wasm downloaded %.0f, compiled %.0f, Go main %.0f, engine open %.0f, started %.0f)",
		timings["firstAnswer"], timings["sqlite"], timings["download"], timings["compile"], timings["main"], timings["engine"], timings["start"])
	for _, step := range []string{"main", "engine"} {
		if !(timings["compile"] < timings[step] && timings[step] <= timings["start"]) {
			t.Errorf("kubeplay.timings.%s = %.0f, not between compile and start", step, timings[step])
		}
	}
	// Compressing competes for the CPU: only once the page has loaded.

	t.Run("ConfigMap create and get", func(t *testing.T) {
		var got struct {
			CreateStatus int
			GetStatus    int
			Kind         string
			Data         map[string]string
			UID          bool
		}
		browsertest.Eval(t, ctx, `(async () => {
			const created = await kubeplay.fetch("/api/v1/namespaces/default/configmaps", {
				method: "POST",
				headers: {"Content-Type": "application/json"},
				body: JSON.stringify({apiVersion: "v1", kind: "ConfigMap", metadata: {name: "demo"}, data: {greeting: "hello"}}),
			});
			await created.arrayBuffer();
			const res = await kubeplay.fetch("/api/v1/namespaces/default/configmaps/demo");
			const cm = await res.json();
			return {CreateStatus: created.status, GetStatus: res.status, Kind: cm.kind, Data: cm.data, UID: !!cm.metadata.uid};
		})()`, &got)
		if got.CreateStatus != 201 || got.GetStatus != 200 || got.Kind != "ConfigMap" || got.Data["greeting"] != "hello" || !got.UID {
			t.Errorf("got %+v", got)
		}
	})

	t.Run("the engine runs in a worker", func(t *testing.T) {
		var got struct {
			Worker, GoOnPage, SQLiteOnPage bool
			Storage                        string
		}
		browsertest.Eval(t, ctx, `Promise.resolve({Worker: kubeplay.worker instanceof Worker,
			GoOnPage: "Go" in globalThis, SQLiteOnPage: "sqlite3" in globalThis, Storage: kubeplay.storage.kind})`, &got)
		if !got.Worker || got.GoOnPage || got.SQLiteOnPage || got.Storage != "opfs-sahpool" {
			t.Errorf("got %+v, want the engine (Go, SQLite) in a worker, on OPFS", got)
		}
	})

	t.Run("a new sandbox starts from the prebuilt database", func(t *testing.T) {
		want := bootstrapUID(t)
		var saved string
		browsertest.Eval(t, ctx, `kubeplay.fetch("/api/v1/namespaces/kube-system").then((r) => r.json()).then((ns) => ns.metadata.uid)`, &saved)
		// An example's sandbox, in memory.
		tab, cancel := chromedp.NewContext(ctx)
		defer cancel()
		if err := chromedp.Do(tab, chromedp.Navigate(srv.URL+"/browser/embed.html")); err != nil {
			t.Fatal(err)
		}
		var memory string
		browsertest.Eval(t, tab, `kubeplay.ready.then((k) => k.fetch("/api/v1/namespaces/kube-system")).then((r) => r.json()).then((ns) => ns.metadata.uid)`, &memory)
		if saved != want || memory != want {
			t.Errorf("kube-system's uid: %q saved, %q in memory, want %q (dist/bootstrap.sqlite3's)", saved, memory, want)
		}
	})

	t.Run("the engine arrives compressed", func(t *testing.T) {
		var got struct{ Encoded, Decoded float64 }
		browsertest.Eval(t, ctx, `(async () => {
			const e = performance.getEntriesByType("resource").find((e) => e.name.endsWith("/dist/kubeplay.wasm"));
			return {Encoded: e.encodedBodySize, Decoded: e.decodedBodySize};
		})()`, &got)
		if int(got.Decoded) != len(wasm) || got.Encoded <= 0 || got.Encoded > got.Decoded/4 {
			t.Errorf("kubeplay.wasm: %.0f bytes on the wire for %.0f decoded (file: %d)", got.Encoded, got.Decoded, len(wasm))
		}
	})

	t.Run("errors are Status objects", func(t *testing.T) {
		var got struct {
			Status int
			Kind   string
			Reason string
		}
		browsertest.Eval(t, ctx, `(async () => {
			const res = await kubeplay.fetch("/api/v1/namespaces/default/configmaps/missing");
			const st = await res.json();
			return {Status: res.status, Kind: st.kind, Reason: st.reason};
		})()`, &got)
		if got.Status != 404 || got.Kind != "Status" || got.Reason != "NotFound" {
			t.Errorf("got %+v", got)
		}
	})

	t.Run("UI page at /", func(t *testing.T) {
		var got struct {
			Status      int
			ContentType string
			HTML        bool
		}
		browsertest.Eval(t, ctx, `(async () => {
			const res = await kubeplay.fetch("/");
			const text = await res.text();
			return {Status: res.status, ContentType: res.headers.get("Content-Type"),
				HTML: text.includes("<html") && text.includes("Resource types")};
		})()`, &got)
		if got.Status != 200 || !strings.HasPrefix(got.ContentType, "text/html") || !got.HTML {
			t.Errorf("got %+v", got)
		}
	})

	t.Run("the UI requests as the user the switch chose", func(t *testing.T) {
		var got struct {
			Status               int
			Redirected, Acting   bool
			Forbidden, AfterStop string
		}
		browsertest.Eval(t, ctx, `(async () => {
			const as = (form) => kubeplay.fetch("/ui/as", {method: "POST", body: new URLSearchParams(form)});
			const res = await as({user: "bob", groups: "qa", back: "/?r=v1/configmaps&ns=default"});
			const page = new DOMParser().parseFromString(await res.text(), "text/html");
			const alert = [...page.querySelectorAll(".alert")].map(a => a.textContent).find(t => t.includes("configmaps is forbidden"));
			const stopped = await as({stop: "1", back: "/?r=v1/configmaps&ns=default"});
			const after = new DOMParser().parseFromString(await stopped.text(), "text/html");
			return {Status: res.status, Redirected: res.redirected, Acting: page.querySelector(".acting-as")?.textContent === "acting as bob (qa)",
				Forbidden: (alert ?? "").replace(/\s+/g, " ").trim(), AfterStop: after.querySelector(".acting-as")?.textContent ?? "none"};
		})()`, &got)
		if got.Status != 200 || !got.Redirected || !got.Acting || got.AfterStop != "none" ||
			!strings.HasPrefix(got.Forbidden, `Forbidden (403) configmaps is forbidden: User "bob" cannot list resource "configmaps"`) {
			t.Errorf("got %+v", got)
		}
	})

	t.Run("watch streams and aborts", func(t *testing.T) {
		var got struct {
			Status      int
			ContentType string
			Type        string
			Name        string
			AbortError  string
			After       int // status of a request after the abort
		}
		browsertest.Eval(t, ctx, `(async () => {
			const list = await (await kubeplay.fetch("/api/v1/namespaces/default/configmaps")).json();
			const ac = new AbortController();
			const res = await kubeplay.fetch("/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=" +
				list.metadata.resourceVersion, {signal: ac.signal});
			const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
			const post = await kubeplay.fetch("/api/v1/namespaces/default/configmaps", {
				method: "POST",
				headers: {"Content-Type": "application/json"},
				body: JSON.stringify({metadata: {name: "watched"}}),
			});
			await post.arrayBuffer();
			let buf = "";
			while (!buf.includes("\n")) {
				const {value, done} = await reader.read();
				if (done) break;
				buf += value;
			}
			const ev = JSON.parse(buf.split("\n")[0]);
			ac.abort();
			let abortError = "";
			try { await reader.read(); } catch (e) { abortError = e.name; }
			const after = await kubeplay.fetch("/healthz");
			return {Status: res.status, ContentType: res.headers.get("Content-Type"), Type: ev.type,
				Name: ev.object.metadata.name, AbortError: abortError, After: after.status};
		})()`, &got)
		want := struct {
			Status      int
			ContentType string
			Type        string
			Name        string
			AbortError  string
			After       int
		}{200, "application/json", "ADDED", "watched", "AbortError", 200}
		if got != want {
			t.Errorf("got %+v, want %+v", got, want)
		}
	})

	t.Run("a stream larger than the flow-control window arrives whole", func(t *testing.T) {
		var got struct{ Items, Bytes int }
		browsertest.Eval(t, ctx, `(async () => {
			const big = "x".repeat(600000);
			const json = {"Content-Type": "application/json"};
			await (await kubeplay.fetch("/api/v1/namespaces", {method: "POST", headers: json,
				body: JSON.stringify({metadata: {name: "bigs"}})})).arrayBuffer();
			const cms = "/api/v1/namespaces/bigs/configmaps";
			const list = await (await kubeplay.fetch(cms)).json();
			// The watch's events come one write each, unread until the end:
			// past the window the engine must wait for the page to read.
			const abort = new AbortController();
			const res = await kubeplay.fetch(cms + "?watch=1&resourceVersion=" + list.metadata.resourceVersion, {signal: abort.signal});
			for (const name of ["big-1", "big-2", "big-3"]) {
				const c = await kubeplay.fetch(cms, {method: "POST", headers: json, body: JSON.stringify({metadata: {name}, data: {big}})});
				if (c.status !== 201) throw new Error("create " + name + ": " + c.status);
			}
			// Read until the three events are in, however long they take (the
			// root CA publisher's kube-root-ca.crt may come among them).
			const reader = res.body.getReader(), decoder = new TextDecoder();
			let text = "";
			while (text.split("\n").slice(0, -1).filter((l) => l.includes('"name":"big-')).length < 3) {
				const {value, done} = await reader.read();
				if (done) break;
				text += decoder.decode(value, {stream: true});
			}
			abort.abort();
			const events = text.split("\n").slice(0, -1).map((l) => JSON.parse(l)); // whole lines
			return {Items: events.filter((e) => e.type === "ADDED" && e.object.data?.big?.length === 600000).length, Bytes: text.length};
		})()`, &got)
		if got.Items != 3 || got.Bytes < 1800000 {
			t.Errorf("got %+v, want the 3 ConfigMaps whole (over 1.8 MB)", got)
		}
	})

	t.Run("the page shows the UI and keeps navigation in the engine", func(t *testing.T) {
		err := chromedp.Do(ctx,
			chromedp.WaitVisible(chromedp.CSS(`.explorer`)),
			browsertest.Click(`tr[data-ref="v1/configmaps"] a`),
			chromedp.WaitVisible(chromedp.CSS(`.ns-form`)),
			// The value and the submit in one turn: a render in between
			// would replace the form.
			browsertest.Until(`(() => { const i = document.querySelector("#ns"), b = document.querySelector(".ns-form button[type=submit]"); if (!i || !b) return false; i.value = "default"; b.click(); return true })()`),
			chromedp.Evaluate[chromedp.Void](`document.fonts.ready`, chromedp.EvalAwaitPromise),
		)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := chromedp.Run(ctx, browsertest.Poll(`location.hash.includes("ns=default") && document.body.textContent.includes("watched")`)); err != nil {
			t.Fatalf("waiting for the namespace's ConfigMaps: %v", err)
		}
		hash, err := chromedp.Run(ctx, chromedp.Location())
		if err != nil {
			t.Fatal(err)
		}
		// Read in one step: page.js replaces the body as it renders.
		title, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("#selection-title")?.textContent ?? ""`))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(hash, "#/?") || !strings.Contains(title, "ConfigMap") {
			t.Errorf("after navigating: location %q, title %q", hash, title)
		}
		browsertest.Screenshot(t, ctx, screenshotPath)

		err = chromedp.Do(ctx,
			browsertest.Click(`a.api-path`),
			chromedp.WaitVisible(chromedp.CSS(`body.kp-raw pre`)),
		)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`body.kp-raw pre`)))
		if err != nil {
			t.Fatal(err)
		}
		if err := chromedp.Do(ctx, chromedp.NavigateBack(), chromedp.WaitVisible(chromedp.CSS(`.ns-form`))); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(raw, `"kind": "ConfigMapList"`) {
			t.Errorf("the API link showed %.200q", raw)
		}
	})

	t.Run("every page in a desktop window and a phone's", func(t *testing.T) {
		browsertest.Tour(t, ctx, browsertest.OpenByHash, "/tmp/kubeplay-browser-tour")
	})

	t.Run("the emulated release switches from the header and survives a reload", func(t *testing.T) {
		// Marks the page shown, so that a poll waits for the next one:
		// page.js replaces the body as it renders.
		const mark = `document.querySelector("main").dataset.old = "1"`
		const fresh = `document.querySelector("main:not([data-old])") !== null`
		const extensions = `document.querySelector('details[data-group="extensions"]') !== null`
		poll := func(expr string) {
			t.Helper()
			if _, err := chromedp.Run(ctx, browsertest.Poll(expr)); err != nil {
				t.Fatalf("waiting for %s: %v", expr, err)
			}
		}
		// click clicks from script: the page's fixed bar may cover the
		// element where a mouse would click.
		click := func(selector, ready string) {
			t.Helper()
			sel, _ := json.Marshal(selector)
			if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](mark+`; document.querySelector(`+string(sel)+`).click()`)); err != nil {
				t.Fatal(err)
			}
			poll(fresh + " && " + ready)
		}
		switchTo := func(v string) {
			t.Helper()
			if err := chromedp.Do(ctx, chromedp.SetValue(`form.emulation select`, v)); err != nil {
				t.Fatal(err)
			}
			click(`form.emulation button`, `document.querySelector("form.emulation select").value === "`+v+`"`)
		}
		poll(`document.querySelector("main a") !== null`)
		click(`a.brand`, `document.querySelector(".explorer") !== null`)
		switchTo("1.21")
		poll(extensions)

		// The editor of a page shown before (the tour's) is not this one's.
		if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`delete window.kubeplayEditor`)); err != nil {
			t.Fatal(err)
		}
		click(`.site-nav a[href="/ui/edit"]`, `window.kubeplayEditor !== undefined`)
		ingress := "apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata:\n  name: legacy\n  namespace: default\nspec:\n  backend:\n    serviceName: web\n    servicePort: 80\n"
		yaml, _ := json.Marshal(ingress)
		var result struct{ Code, Warning string }
		browsertest.Eval(t, ctx, `(() => { const v = window.kubeplayEditor;
			v.dispatch({changes: {from: 0, to: v.state.doc.length, insert: `+string(yaml)+`}}); return true; })()`, new(bool))
		click(`button.primary`, `document.querySelector(".result .code") !== null`)
		browsertest.Eval(t, ctx, `document.querySelector(".result").scrollIntoView(), ({Code: document.querySelector(".result .code").textContent,
			Warning: document.querySelector(".result .warning")?.textContent ?? ""})`, &result)
		browsertest.Screenshot(t, ctx, "/tmp/kubeplay-browser-emulation-warning.png")
		if result.Code != "201 Created" || !strings.Contains(result.Warning, "extensions/v1beta1 Ingress is deprecated in v1.14+, unavailable in v1.22+; use networking.k8s.io/v1 Ingress") {
			t.Errorf("applying an extensions/v1beta1 Ingress in v1.21: %+v", result)
		}

		// The release is kept beside the saved database.
		if err := chromedp.Do(ctx, chromedp.Reload()); err != nil {
			t.Fatal(err)
		}
		poll(`document.querySelector("form.emulation select")?.value === "1.21"`)
		browsertest.Screenshot(t, ctx, "/tmp/kubeplay-browser-emulation-1.21.png")

		switchTo("1.25")
		click(`a.brand`, `document.querySelector(".explorer") !== null`)
		var listed bool
		browsertest.Eval(t, ctx, extensions, &listed)
		browsertest.Screenshot(t, ctx, "/tmp/kubeplay-browser-emulation-1.25.png")
		if listed {
			t.Error("the explorer of v1.25 lists the extensions group")
		}
		switchTo("1.35")
	})

	t.Run("state survives a reload, resets, and round-trips through a snapshot", func(t *testing.T) {
		status := func(name string) int {
			t.Helper()
			var got int
			browsertest.Eval(t, ctx, `kubeplay.fetch("/api/v1/namespaces/default/configmaps/`+name+`").then((r) => r.status)`, &got)
			return got
		}
		create := func(name string) {
			t.Helper()
			var got int
			browsertest.Eval(t, ctx, `kubeplay.fetch("/api/v1/namespaces/default/configmaps", {method: "POST",
				headers: {"Content-Type": "application/json"},
				body: JSON.stringify({metadata: {name: "`+name+`"}})}).then((r) => r.status)`, &got)
			if got != 201 {
				t.Fatalf("creating %s: %d", name, got)
			}
		}
		create("persisted")
		if err := chromedp.Do(ctx, chromedp.Reload()); err != nil {
			t.Fatal(err)
		}
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[chromedp.Void](`kubeplay.ready`, chromedp.EvalAwaitPromise)); err != nil {
			t.Fatalf("kubeplay.ready after the reload: %v", err)
		}
		if got := status("persisted"); got != 200 {
			t.Errorf("after a reload: GET persisted = %d, want 200", got)
		}
		if _, err := chromedp.Run(ctx, browsertest.Poll(`document.querySelector(".kp-bar .kp-storage")?.textContent.includes("Saved in this browser")`)); err != nil {
			t.Errorf("the storage bar: %v", err)
		}

		// Reset, by the button (its confirmation answered yes).
		if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`window.confirm = () => true`),
			browsertest.Click(`.kp-bar button[data-kp-action=reset]`)); err != nil {
			t.Fatal(err)
		}
		if _, err := chromedp.Run(ctx, browsertest.Poll(`!document.querySelector(".kp-bar button").disabled`)); err != nil {
			t.Fatalf("waiting for the reset: %v", err)
		}
		if got := status("persisted"); got != 404 {
			t.Errorf("after reset: GET persisted = %d, want 404", got)
		}
		var ns int
		browsertest.Eval(t, ctx, `kubeplay.fetch("/api/v1/namespaces/default").then((r) => r.status)`, &ns)
		if ns != 200 {
			t.Errorf("after reset: GET namespaces/default = %d, want 200 (a fresh cluster)", ns)
		}

		// Snapshot (what the download button saves), reset, upload it.
		create("snapped")
		var snap []byte
		browsertest.Eval(t, ctx, `kubeplay.snapshot().then(async (b) => Array.from(new Uint8Array(await b.arrayBuffer())))`, &snap)
		if len(snap) < 512 || string(snap[:16]) != "SQLite format 3\x00" {
			t.Fatalf("snapshot: %d bytes, starting %q", len(snap), snap[:min(16, len(snap))])
		}
		file := filepath.Join(t.TempDir(), "kubeplay.sqlite3")
		if err := os.WriteFile(file, snap, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[chromedp.Void](`kubeplay.reset()`, chromedp.EvalAwaitPromise)); err != nil {
			t.Fatal(err)
		}
		if got := status("snapped"); got != 404 {
			t.Errorf("after reset: GET snapped = %d, want 404", got)
		}
		if err := chromedp.Do(ctx, chromedp.SetUploadFiles(chromedp.CSS(`.kp-bar input[type=file]`), []string{file})); err != nil {
			t.Fatal(err)
		}
		if _, err := chromedp.Run(ctx, browsertest.Poll(`kubeplay.fetch("/api/v1/namespaces/default/configmaps/snapped").then((r) => r.status === 200, () => false)`)); err != nil {
			t.Errorf("after uploading the snapshot: %v", err)
		}

		// A file that is not a database is refused, and the sandbox goes on.
		var refused struct {
			Error  string
			Status int
		}
		browsertest.Eval(t, ctx, `kubeplay.restore(new Blob(["not a database"])).then(() => ({Error: ""}), async (e) => ({Error: e.message,
			Status: (await kubeplay.fetch("/api/v1/namespaces/default/configmaps/snapped")).status}))`, &refused)
		if refused.Error == "" || refused.Status != 200 {
			t.Errorf("restoring a file that is not a database: %+v, want an error and the sandbox as it was", refused)
		}
	})

	t.Run("the loading indicator shows the download", func(t *testing.T) {
		tab, cancel := chromedp.NewContext(ctx) // a second tab, a second engine
		defer cancel()
		if err := chromedp.Do(tab, chromedp.Navigate(srv.URL+"/slow/")); err != nil {
			t.Fatal(err)
		}
		// The server holds the response after half its compressed bytes; the
		// page counts decoded bytes, of which some share has then arrived.
		if _, err := chromedp.Run(tab, browsertest.Poll(`kubeplay.progress.phase === "download" && kubeplay.progress.loaded >= 1e6`)); err != nil {
			st, _ := chromedp.Run(tab, chromedp.Evaluate[[]byte](`({p: kubeplay.progress, t: kubeplay.timings, u: location.href})`))
			t.Fatalf("waiting for the download to be under way: %v (%s)", err, st)
		}
		var got struct {
			Status   string
			Progress float64
		}
		browsertest.Eval(t, tab, `Promise.resolve({Status: document.getElementById("kp-status").textContent,
			Progress: document.getElementById("kp-progress").value})`, &got)
		browsertest.Screenshot(t, tab, "/tmp/kubeplay-browser-loading.png")
		mb := fmt.Sprintf("%.1f MB", float64(len(wasm))/1e6)
		if !strings.HasPrefix(got.Status, "Downloading the engine: ") || !strings.HasSuffix(got.Status, " / "+mb) ||
			got.Progress <= 0 || got.Progress >= 1 {
			t.Errorf("under way: %+v", got)
		}
		close(release)
		if _, err := chromedp.Run(tab, chromedp.Evaluate[chromedp.Void](`kubeplay.ready`, chromedp.EvalAwaitPromise)); err != nil {
			t.Fatalf("kubeplay.ready after the download: %v", err)
		}
		// The first tab holds the saved database: this one runs in memory,
		// and says so.
		var storage struct{ Kind, Reason string }
		browsertest.Eval(t, tab, `Promise.resolve(kubeplay.storage)`, &storage)
		if storage.Kind != "memory" || !strings.Contains(storage.Reason, "another tab") {
			t.Errorf("a second tab's storage: %+v, want memory because another tab holds the database", storage)
		}
		if _, err := chromedp.Run(tab, browsertest.Poll(`document.querySelector(".kp-bar .kp-storage")?.textContent.includes("In memory only (another tab")`)); err != nil {
			t.Errorf("the second tab's storage bar: %v", err)
		}
	})

	t.Run("a browser without WebAssembly gets a message", func(t *testing.T) {
		tab, cancel := chromedp.NewContext(ctx)
		defer cancel()
		_, err := chromedp.Call(tab, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
			Source: `delete globalThis.WebAssembly`,
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := chromedp.Do(tab, chromedp.Navigate(srv.URL+"/browser/")); err != nil {
			t.Fatal(err)
		}
		if _, err := chromedp.Run(tab, browsertest.Poll(`document.querySelector("#kp-status.kp-error") !== null`)); err != nil {
			t.Fatalf("waiting for the message: %v", err)
		}
		msg, err := chromedp.Run(tab, chromedp.Text(chromedp.CSS(`#kp-status`)))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(msg, "cannot run WebAssembly") {
			t.Errorf("message %q", msg)
		}
	})

	t.Run("a site without the browser build says so", func(t *testing.T) {
		tab, cancel := chromedp.NewContext(ctx)
		defer cancel()
		if err := chromedp.Do(tab, chromedp.Navigate(srv.URL+"/nobuild/")); err != nil {
			t.Fatal(err)
		}
		if _, err := chromedp.Run(tab, browsertest.Poll(`document.querySelector("#kp-status.kp-error") !== null`)); err != nil {
			t.Fatalf("waiting for the message: %v", err)
		}
		msg, err := chromedp.Run(tab, chromedp.Text(chromedp.CSS(`#kp-status`)))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(msg, "HTTP 404") || !strings.Contains(msg, "static/build.sh") {
			t.Errorf("message %q", msg)
		}
	})

	t.Logf("kubeplay.wasm: %s", sizes(t, len(wasm)))
}

// bootstrapUID returns the uid of namespace kube-system in
// dist/bootstrap.sqlite3.
func bootstrapUID(t *testing.T) string {
	t.Helper()
	data, err := fs.ReadFile(static.FS(), "dist/bootstrap.sqlite3")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "bootstrap.sqlite3")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(t.Context(), path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	kv, err := st.Get(t.Context(), "/registry/namespaces/kube-system", 0)
	if err != nil {
		t.Fatal(err)
	}
	var ns struct {
		Metadata struct{ UID string } `json:"metadata"`
	}
	if err := json.Unmarshal(kv.Value, &ns); err != nil || ns.Metadata.UID == "" {
		t.Fatalf("kube-system in the bootstrap database: %v %s", err, kv.Value)
	}
	return ns.Metadata.UID
}

// withoutDist returns the page's files without dist/, as in a fresh clone.
func withoutDist(t *testing.T) fs.FS {
	t.Helper()
	m := fstest.MapFS{}
	for _, name := range []string{"index.html", "page.js", "kubeplay.js", "worker.js", "cel.mjs", "script.js", "state.js", "boot.css"} {
		data, err := fs.ReadFile(static.FS(), name)
		if err != nil {
			t.Fatal(err)
		}
		m[name] = &fstest.MapFile{Data: data}
	}
	return m
}

// holdHalfway serves h, but stops the body of the file at path half way until
// release is closed.
func holdHalfway(h http.Handler, path string, release <-chan struct{}) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != path {
			h.ServeHTTP(w, r)
			return
		}
		h.ServeHTTP(&halfwayWriter{ResponseWriter: w, release: release, ctx: r.Context()}, r)
	})
}

type halfwayWriter struct {
	http.ResponseWriter
	release <-chan struct{}
	ctx     context.Context
	written int
}

func (w *halfwayWriter) Write(p []byte) (int, error) {
	half, _ := strconv.Atoi(w.Header().Get("Content-Length"))
	half /= 2
	if w.written < half && w.written+len(p) >= half {
		n, err := w.ResponseWriter.Write(p[:half-w.written])
		w.written += n
		if err != nil {
			return n, err
		}
		http.NewResponseController(w.ResponseWriter).Flush()
		select {
		case <-w.release:
		case <-w.ctx.Done():
			return n, w.ctx.Err()
		}
		m, err := w.ResponseWriter.Write(p[n:])
		w.written += m
		return n + m, err
	}
	n, err := w.ResponseWriter.Write(p)
	w.written += n
	return n, err
}

// newBrowser starts headless Chromium with a fresh profile and returns a
// context for its first tab. The page's console and uncaught exceptions are
// logged; an exception fails the test.
// sizes reports the engine's size raw and as the precompressed copies the
// server sends.
func sizes(t *testing.T, raw int) string {
	t.Helper()
	mb := func(n int) string { return fmt.Sprintf("%.2f MB", float64(n)/1e6) }
	out := mb(raw) + " raw"
	for _, c := range []struct{ suffix, name string }{{".gz", "gzip -9"}, {".br", "brotli -q 11"}} {
		info, err := fs.Stat(static.FS(), "dist/kubeplay.wasm"+c.suffix)
		if err != nil {
			t.Errorf("no precompressed copy: %v", err)
			continue
		}
		out += fmt.Sprintf(", %s %s", mb(int(info.Size())), c.name)
	}
	return out
}
