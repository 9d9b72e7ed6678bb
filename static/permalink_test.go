//go:build !js

package static_test

import (
	"bytes"
	"compress/flate"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"kubeplay/internal/browsertest"
	"kubeplay/static"
)

// TestPermalink shares an example's state: its objects, with who owns which
// field and an object held by a finalizer, travel in the permalink and come
// back in a new sandbox, the example's and the full playground's; state too
// large for a link is offered as a file, which the full playground loads.
func TestPermalink(t *testing.T) {
	browsertest.SkipIfAsked(t)
	mux := http.NewServeMux()
	mux.Handle("/browser/", http.StripPrefix("/browser", static.Handler()))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	ctx := browsertest.New(t, browserTestLimit)

	// The example's script: two managers share a ConfigMap, a namespace
	// holds a Secret, a ConfigMap waits on its finalizer.
	const example = `$ create -f -
apiVersion: v1
kind: Namespace
metadata: {name: team-a}
---
apiVersion: v1
kind: Secret
metadata: {name: token, namespace: team-a}
stringData: {key: s3cret}
$ apply --server-side --field-manager alice -f -
apiVersion: v1
kind: ConfigMap
metadata: {name: shared}
data: {colour: red, size: big}
$ apply --server-side --field-manager bob --force-conflicts -f -
apiVersion: v1
kind: ConfigMap
metadata: {name: shared}
data: {size: small}
$ create -f -
apiVersion: v1
kind: ConfigMap
metadata: {name: held, finalizers: [example.com/hold]}
$ delete configmap held
`
	encoded := encodeScript(t, example)
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/browser/embed.html#s="+encoded)); err != nil {
		t.Fatal(err)
	}
	runExample(t, ctx)
	before := objectsJSON(t, ctx)
	permalink := sharedLink(t, ctx, ".kp-permalink-url")
	if !strings.Contains(permalink, "/browser/embed.html#s=") || !strings.Contains(permalink, "&st=") {
		t.Fatalf("permalink %q", permalink)
	}

	t.Run("opening the permalink restores the objects", func(t *testing.T) {
		tab, cancel := chromedp.NewContext(ctx)
		defer cancel()
		if err := chromedp.Do(tab, chromedp.Navigate(permalink)); err != nil {
			t.Fatal(err)
		}
		if _, err := chromedp.Run(tab, browsertest.Poll(`document.getElementById("kp-status").textContent.startsWith("Restored")`)); err != nil {
			st, _ := chromedp.Run(tab, chromedp.Evaluate[string](`document.getElementById("kp-status").textContent`))
			t.Fatalf("never restored: %v (status %q)", err, st)
		}
		if status, _ := chromedp.Run(tab, chromedp.Evaluate[string](`document.getElementById("kp-status").textContent`)); status != "Restored the link's 4 objects: Run runs the script on them." {
			t.Errorf("status %q", status)
		}
		if got := objectsJSON(t, tab); got != before {
			t.Errorf("restored:\n%s\nwant:\n%s", got, before)
		}
		if script, _ := chromedp.Run(tab, chromedp.Evaluate[string](`document.getElementById("kp-script").value`)); script != example {
			t.Errorf("the script is %q", script)
		}
	})

	t.Run("the full playground opens it in memory", func(t *testing.T) {
		st := permalink[strings.Index(permalink, "&st=")+len("&st="):]
		tab, cancel := chromedp.NewContext(ctx)
		defer cancel()
		if err := chromedp.Do(tab, chromedp.Navigate(srv.URL+"/browser/index.html#state="+st)); err != nil {
			t.Fatal(err)
		}
		if _, err := chromedp.Run(tab, browsertest.Poll(`location.hash === "#/" && document.querySelector(".kp-bar [data-kp-action=permalink]")?.disabled === false`)); err != nil {
			got, _ := chromedp.Run(tab, chromedp.Evaluate[string](`location.hash.slice(0, 20) + " | " + (document.querySelector(".kp-bar")?.textContent ?? document.body.textContent)`))
			t.Fatalf("the full playground never showed the state: %v (%s)", err, got)
		}
		if storage, _ := chromedp.Run(tab, chromedp.Evaluate[string](`kubeplay.storage.kind`)); storage != "memory" {
			t.Errorf("storage %q, want memory (the saved sandbox untouched)", storage)
		}
		if got := objectsJSON(t, tab); got != before {
			t.Errorf("restored:\n%s\nwant:\n%s", got, before)
		}
	})

	t.Run("state too large for a link is a file", func(t *testing.T) {
		// Random data does not compress: 40 ConfigMaps of 300 random bytes
		// each are well over 8 KB encoded.
		browsertest.Eval(t, ctx, `(async () => {
			for (let i = 0; i < 40; i++) {
				const bytes = crypto.getRandomValues(new Uint8Array(300));
				const res = await kubeplay.fetch("/api/v1/namespaces/default/configmaps", {
					method: "POST", headers: {"Content-Type": "application/json"},
					body: JSON.stringify({apiVersion: "v1", kind: "ConfigMap", metadata: {name: "big-" + i}, binaryData: {b: btoa(String.fromCharCode(...bytes))}}),
				});
				if (res.status !== 201) throw new Error("create: HTTP " + res.status);
			}
			return true;
		})()`, new(bool))
		big := objectsJSON(t, ctx)
		file := sharedLink(t, ctx, ".kp-state-file")
		var message string
		browsertest.Eval(t, ctx, `Promise.resolve(document.getElementById("kp-share").textContent)`, &message)
		if !strings.Contains(message, "These 44 objects are too many for a link") {
			t.Errorf("message %q", message)
		}
		var stateJSON string
		browsertest.Eval(t, ctx, `fetch(`+jsString(file)+`).then((r) => r.text())`, &stateJSON)

		// The full playground's Upload snapshot takes the file.
		tab, cancel := chromedp.NewContext(ctx)
		defer cancel()
		if err := chromedp.Do(tab, chromedp.Navigate(srv.URL+"/browser/")); err != nil {
			t.Fatal(err)
		}
		if _, err := chromedp.Run(tab, browsertest.Poll(`document.querySelector(".kp-bar input[type=file]")?.disabled === false`)); err != nil {
			t.Fatal(err)
		}
		browsertest.Eval(t, tab, `(async () => {
			const input = document.querySelector(".kp-bar input[type=file]");
			const dt = new DataTransfer();
			dt.items.add(new File([`+jsString(stateJSON)+`], "kubeplay-state.json", { type: "application/vnd.kubeplay.state+json" }));
			input.files = dt.files;
			input.dispatchEvent(new Event("change"));
			return true;
		})()`, new(bool))
		if _, err := chromedp.Run(tab, browsertest.Poll(`document.querySelector(".kp-bar input[type=file]").disabled === false`)); err != nil {
			t.Fatal(err)
		}
		if msg, _ := chromedp.Run(tab, chromedp.Evaluate[string](`document.querySelector(".kp-bar .kp-storage").textContent`)); !strings.HasPrefix(msg, "Saved in this browser") {
			t.Errorf("after the upload the bar says %q", msg)
		}
		if got := objectsJSON(t, tab); got != big {
			t.Errorf("uploaded:\n%s\nwant:\n%s", got, big)
		}
	})
}

// runExample waits for the example page's sandbox, runs its script and fails
// the test if a command failed.
func runExample(t *testing.T, ctx context.Context) {
	t.Helper()
	if _, err := chromedp.Run(ctx, browsertest.Poll(`document.getElementById("kp-run")?.disabled === false`)); err != nil {
		t.Fatalf("the example's sandbox never got ready: %v", err)
	}
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`document.getElementById("kp-run").click()`)); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, browsertest.Poll(`document.getElementById("kp-output").dataset.done !== undefined`)); err != nil {
		t.Fatalf("the example never ended: %v", err)
	}
	if failed, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`[...document.querySelectorAll("#kp-output .kp-failed")].map((b) => b.textContent).join("\n")`)); failed != "" {
		t.Fatalf("commands failed:\n%s", failed)
	}
}

// sharedLink presses Permalink and returns the href of what it shows, the
// element matching selector.
func sharedLink(t *testing.T, ctx context.Context, selector string) string {
	t.Helper()
	var href string
	browsertest.Eval(t, ctx, `(async () => {
		document.getElementById("kp-permalink").click();
		let a;
		while (!(a = document.querySelector("#kp-share `+selector+`"))) await new Promise((r) => setTimeout(r, 20));
		return a.href;
	})()`, &href)
	return href
}

// objectsJSON returns what a sandbox holds beyond its own objects, for
// comparison: names, data, labels, finalizers, whether being deleted, and
// managedFields without their times.
func objectsJSON(t *testing.T, ctx context.Context) string {
	t.Helper()
	var out string
	browsertest.Eval(t, ctx, `(async () => {
		const out = [];
		for (const path of ["/api/v1/namespaces", "/api/v1/configmaps", "/api/v1/secrets"]) {
			const list = await (await kubeplay.fetch(path)).json();
			for (const o of list.items) {
				const m = o.metadata;
				if ((m.managedFields ?? []).every((f) => ["kube-apiserver", "kube-controller-manager"].includes(f.manager))) continue;
				out.push({ path, name: m.name, namespace: m.namespace, data: o.data, binaryData: o.binaryData, labels: m.labels, finalizers: m.finalizers,
					deleting: !!m.deletionTimestamp, managedFields: (m.managedFields ?? []).map(({ time, ...f }) => f) });
			}
		}
		return JSON.stringify(out, null, 1);
	})()`, &out)
	return out
}

// encodeScript encodes a script for an example's URL, as script.js does:
// deflated, base64url.
func encodeScript(t *testing.T, script string) string {
	t.Helper()
	var b bytes.Buffer
	w, err := flate.NewWriter(&b, flate.DefaultCompression)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(w, script)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return base64.RawURLEncoding.EncodeToString(b.Bytes())
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
