//go:build !js

package static_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"kubeplay/internal/browsertest"
	"kubeplay/static"
)

// TestDocs runs every example of the API concepts page (docs.html): each
// <kubeplay-example> is an iframe with its own sandbox; Run must show what
// the Kubernetes API answers for the topic.
func TestDocs(t *testing.T) {
	browsertest.SkipIfAsked(t)
	mux := http.NewServeMux()
	mux.Handle("/browser/", http.StripPrefix("/browser", static.Handler()))
	mux.HandleFunc("/scenarios/namespaces.txt", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "# a scenario kept in a file\n$ get namespaces -o name\n")
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	ctx := browsertest.New(t, browserTestLimit)
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/browser/docs.html")); err != nil {
		t.Fatal(err)
	}
	examples := []struct {
		title string
		want  []string
	}{
		{"watch", []string{"HTTP 200 OK", `"type":"ADDED"`, `"name":"watched"`}},
		{"bookmarks", []string{`"type":"ADDED"`, `"type":"BOOKMARK"`, `k8s.io/initial-events-end`}},
		// Two of a, b, c and the namespace's kube-root-ca.crt (which
		// root-ca-cert-publisher keeps in every namespace) remain.
		{"chunking", []string{"configmap/a created", "configmap/c created", `"continue": "`, `"remainingItemCount": 2`}},
		{"tables", []string{"namespace/team-a created", "NAME", "STATUS", "AGE", "kube-system", "team-a", "Active"}},
		{"dry-run", []string{"HTTP 201 Created", `"name": "dry"`, `Error from server (NotFound): configmaps "dry" not found`}},
		{"field validation", []string{"HTTP "}},
		{"server-side apply", []string{"configmap/shared serverside-applied", `error: Apply failed with 1 conflict: conflict with "alice": .data.colour`, `"manager": "bob"`, `"colour": "blue"`}},
		{"deletion", []string{"configmap/held created", `configmap "held" deleted`, "deletionTimestamp:", "configmap/held patched", `Error from server (NotFound): configmaps "held" not found`}},
	}
	if _, err := chromedp.Run(ctx, browsertest.Poll(fmt.Sprintf(`document.querySelectorAll("kubeplay-example").length === %d &&
		[...document.querySelectorAll("kubeplay-example")].every((e) => e.querySelector("iframe"))`, len(examples)))); err != nil {
		t.Fatalf("the examples never became iframes: %v", err)
	}
	for i, ex := range examples {
		frame := fmt.Sprintf(`document.querySelectorAll("kubeplay-example")[%d].querySelector("iframe")`, i)
		doc := frame + ".contentDocument"
		if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](frame+`.scrollIntoView()`)); err != nil {
			t.Fatal(err)
		}
		if _, err := chromedp.Run(ctx, browsertest.Poll(doc+`?.getElementById("kp-run")?.disabled === false`)); err != nil {
			t.Fatalf("%s: the example's sandbox never got ready: %v", ex.title, err)
		}
		if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](doc+`.getElementById("kp-run").click()`)); err != nil {
			t.Fatal(err)
		}
		if _, err := chromedp.Run(ctx, browsertest.Poll(doc+`.getElementById("kp-output").dataset.done !== undefined`)); err != nil {
			t.Fatalf("%s: never done: %v", ex.title, err)
		}
		out, err := chromedp.Run(ctx, chromedp.Evaluate[string](doc+`.getElementById("kp-output").textContent`))
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range ex.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: the output lacks %q:\n%s", ex.title, w, out)
			}
		}
		if ex.title == "deletion" {
			browsertest.Screenshot(t, ctx, "/tmp/kubeplay-docs.png")
		}
	}

	// An example may name a script file instead of carrying it.
	var fromFile string
	browsertest.Eval(t, ctx, `(async () => {
		const ex = document.createElement("kubeplay-example");
		ex.setAttribute("src", "/scenarios/namespaces.txt");
		document.body.append(ex);
		let frame;
		while (!(frame = ex.querySelector("iframe"))) await new Promise((r) => setTimeout(r, 20));
		frame.scrollIntoView();
		let doc;
		while (!(doc = frame.contentDocument)?.getElementById("kp-run") || doc.getElementById("kp-run").disabled) await new Promise((r) => setTimeout(r, 20));
		doc.getElementById("kp-run").click();
		while (doc.getElementById("kp-output").dataset.done === undefined) await new Promise((r) => setTimeout(r, 20));
		return doc.getElementById("kp-output").textContent;
	})()`, &fromFile)
	if !strings.Contains(fromFile, "namespace/kube-system") {
		t.Errorf("the example from a file printed:\n%s", fromFile)
	}

	// The page downloaded and compiled the engine once for all its examples:
	// one frame compiled it, the others ran its Module in their own sandbox.
	var once struct{ Frames, Fetches, Compiles int }
	browsertest.Eval(t, ctx, `(async () => {
		const once = { frames: 0, fetches: 0, compiles: 0 };
		for (const ex of document.querySelectorAll("kubeplay-example")) {
			const w = ex.querySelector("iframe").contentWindow;
			once.frames++;
			once.fetches += w.performance.getEntriesByType("resource").filter((e) => new URL(e.name).pathname.endsWith("/dist/kubeplay.wasm")).length;
			if (await w.kubeplay.compiled) once.compiles++;
		}
		return once;
	})()`, &once)
	if once.Frames != len(examples)+1 || once.Fetches != 1 || once.Compiles != 1 {
		t.Errorf("%d examples fetched kubeplay.wasm %d times and compiled it %d times, want once", once.Frames, once.Fetches, once.Compiles)
	}

	// Reset empties the example's sandbox: only what its controllers make
	// in every namespace is there.
	last := fmt.Sprintf(`document.querySelectorAll("kubeplay-example")[%d].querySelector("iframe").contentDocument`, len(examples)-1)
	var afterReset string
	browsertest.Eval(t, ctx, `(async () => {
		const doc = `+last+`;
		doc.getElementById("kp-reset").click();
		while (doc.getElementById("kp-reset").disabled || !doc.getElementById("kp-status").textContent.startsWith("Reset")) await new Promise((r) => setTimeout(r, 20));
		const k = doc.defaultView.kubeplay;
		const res = await k.fetch("/api/v1/namespaces/default/configmaps");
		return JSON.stringify((await res.json()).items.map((i) => i.metadata.name));
	})()`, &afterReset)
	if afterReset != `["kube-root-ca.crt"]` {
		t.Errorf("after Reset the ConfigMaps are %s, want kube-root-ca.crt alone", afterReset)
	}

	// "Open in full playground" runs the example in the full page.
	open, err := chromedp.Run(ctx, chromedp.Evaluate[string](last+`.getElementById("kp-open").href`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(open, "/browser/index.html?run=") {
		t.Fatalf("open in full playground: %q", open)
	}
	tab, cancel := chromedp.NewContext(ctx)
	defer cancel()
	if err := chromedp.Do(tab, chromedp.Navigate(open)); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(tab, browsertest.Poll(`document.querySelector(".kp-console .kp-out")?.textContent.includes('configmaps "held" not found')`)); err != nil {
		out, _ := chromedp.Run(tab, chromedp.Evaluate[string](`document.querySelector(".kp-console .kp-out")?.textContent ?? document.body.textContent`))
		t.Errorf("the full playground did not run the example: %v\n%s", err, out)
	}
}
