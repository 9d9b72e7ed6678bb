package browsertest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Follow clicks the element selector names and waits until the page it
// leads to is shown and the JavaScript expression ready is true in it —
// whether the browser loads a new document (natively) or the page's script
// replaces the body (browser mode).
func Follow(t *testing.T, ctx context.Context, selector, ready string) {
	t.Helper()
	Leave(t, ctx, "clicking "+selector, Click(selector), ready)
}

// Leave does act, which leaves the page shown (a link followed, a form
// submitted), and waits as Follow does for the page it leads to.
func Leave(t *testing.T, ctx context.Context, what string, act chromedp.Action[chromedp.Void], ready string) {
	t.Helper()
	if err := chromedp.Do(ctx, Until(`(() => { document.body.dataset.stale = "1"; return true })()`), act); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	// A poll fails when its document goes away: poll again in the new one.
	for range 100 {
		_, err := chromedp.Run(ctx, Poll(`document.readyState === "complete" && document.body.dataset.stale !== "1" && (`+ready+`)`))
		if err == nil {
			return
		}
		if !strings.Contains(err.Error(), "navigated") && !strings.Contains(err.Error(), "context") && !strings.Contains(err.Error(), "Execution") {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s: the page never got ready", what)
}

// WalkLesson is a learner's first lesson, in a page already showing the
// start page: it opens the Server-Side Apply conflicts lesson from there,
// runs its first three steps one at a time (alice applies, bob's apply
// conflicts, bob forces), follows the link of the conflict step into the
// ConfigMap's managed fields, opens its history, and goes back to the
// version before the conflict, then to the cluster as it was then.
// Screenshots go to shots + "-<view>.png".
func WalkLesson(t *testing.T, ctx context.Context, shots string) {
	t.Helper()
	Follow(t, ctx, `.start-lessons a[href*="name=ssa-conflicts"]`, `document.querySelector("li#step-1.step-next") !== null`)
	for step := 1; step <= 3; step++ {
		n := string(rune('0' + step))
		Follow(t, ctx, `li#step-`+n+` form.run button`, `document.querySelector("li#step-`+n+`.step-passed, li#step-`+n+`.step-failed") !== null`)
		var failed bool
		Eval(t, ctx, `Promise.resolve(document.querySelector("li#step-`+n+`.step-failed") !== null)`, &failed)
		if failed {
			var text string
			Eval(t, ctx, `Promise.resolve(document.querySelector("li#step-`+n+`").textContent)`, &text)
			t.Fatalf("step %d failed: %s", step, text)
		}
	}
	Screenshot(t, ctx, shots+"-lesson.png")

	// The conflict step links to the ConfigMap's managed fields: bob owns
	// the field now.
	Follow(t, ctx, `li#step-2 .step-requests a[href*="tab=fields"]`, `document.querySelector("table.managers") !== null`)
	var managers string
	Eval(t, ctx, `Promise.resolve([...document.querySelectorAll("table.managers tbody tr")].map(tr => tr.dataset.manager).join(","))`, &managers)
	if managers != "bob" {
		t.Errorf("after bob forced, the managers are %q", managers)
	}
	Screenshot(t, ctx, shots+"-fields.png")

	// Its history: bob's forced apply, then alice's, whose version had her
	// value.
	Follow(t, ctx, `nav.tabs a[href*="tab=history"]`, `document.querySelectorAll("li.revision").length === 2`)
	var history struct {
		Changes []string
		First   string
	}
	Eval(t, ctx, `Promise.resolve({
		Changes: [...document.querySelectorAll("li.revision .change")].map(e => e.textContent),
		First: document.querySelectorAll("li.revision")[1].querySelector("pre.diff").textContent,
	})`, &history)
	if strings.Join(history.Changes, ",") != "updated,created" || !strings.Contains(history.First, "key: alice") {
		t.Errorf("history %+v", history)
	}
	Screenshot(t, ctx, shots+"-history.png")

	// The cluster when alice had applied: the ConfigMap in the list at that
	// exact revision.
	Follow(t, ctx, `li.revision:last-child a[href*="rv="]`, `document.querySelector("nav.revision-steps") !== null`)
	var listed struct {
		Path  string
		Names []string
	}
	Eval(t, ctx, `Promise.resolve({
		Path: document.querySelector("a.api-path").textContent,
		Names: [...document.querySelectorAll("table.objects a")].map(a => a.textContent),
	})`, &listed)
	found := false
	for _, n := range listed.Names {
		found = found || strings.HasPrefix(n, "ssa-")
	}
	if !found || !strings.Contains(listed.Path, "resourceVersionMatch=Exact") {
		t.Errorf("the cluster then: %+v", listed)
	}
	Screenshot(t, ctx, shots+"-then.png")

	// Scrubbed one revision further back, before alice's apply created it,
	// the ConfigMap is not there.
	Leave(t, ctx, "scrubbing back one revision", Until(`(() => { const r = document.querySelector("form.revision-scrub input[type=range]");
		r.value = String(Number(r.value) - 1); r.dispatchEvent(new Event("change", {bubbles: true})); return true })()`),
		`document.querySelector("nav.revision-steps") !== null`)
	Eval(t, ctx, `Promise.resolve([...document.querySelectorAll("table.objects a")].map(a => a.textContent))`, &listed.Names)
	for _, n := range listed.Names {
		if strings.HasPrefix(n, "ssa-") {
			t.Errorf("one revision before alice's apply the list has %s: %v", n, listed.Names)
		}
	}
	Screenshot(t, ctx, shots+"-before.png")
}
