//go:build !js

package browsertest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TourPages are the UI's pages, each at a URL a learner reaches it by: the
// tour opens every one of them in both modes.
var TourPages = []struct{ Name, Path string }{
	{"start", "/"},
	{"resources", "/?r=v1/namespaces"},
	{"object", "/ui/object?r=v1/namespaces&name=default"},
	{"object-fields", "/ui/object?r=v1/namespaces&name=default&tab=fields"},
	{"object-deletion", "/ui/object?r=v1/namespaces&name=default&tab=deletion"},
	{"object-history", "/ui/object?r=v1/namespaces&name=default&tab=history"},
	{"lessons", "/ui/lessons"},
	{"lesson", "/ui/lessons?name=ssa-conflicts"},
	{"requests", "/ui/requests"},
	{"watch", "/ui/watch?r=v1/configmaps&ns=default"},
	{"editor", "/ui/edit"},
	{"sandboxes", "/ui/sandboxes"},
}

// tourWidths are a desktop window and a phone's: the narrow one is where
// wide tables and fixed bars used to push or cover the content.
var tourWidths = []struct {
	Name          string
	Width, Height int64
}{{"wide", 1280, 900}, {"narrow", 390, 844}}

// Tour opens every page of TourPages at each width, through open (a
// navigation natively, OpenByHash in browser mode), and checks what a
// person would see: the page drawn in the site's layout, nothing wider than
// the window (the page never scrolls sideways; a wide table scrolls in its
// own box), and nothing fixed to the window covering the end of the page
// once scrolled to the bottom. An uncaught exception in any page fails the
// test (New). Screenshots go to shots + "-<page>-<width>.png".
func Tour(t *testing.T, ctx context.Context, open func(path string) chromedp.Action[chromedp.Void], shots string) {
	t.Helper()
	for _, w := range tourWidths {
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(w.Width, w.Height)); err != nil {
			t.Fatal(err)
		}
		for _, p := range TourPages {
			if err := chromedp.Do(ctx, open(p.Path), Until(`document.readyState === "complete" && document.body.dataset.stale !== "1" && document.querySelector("header.site-header") !== null && document.querySelector("main") !== null`)); err != nil {
				t.Fatalf("%s (%s): %v", p.Name, p.Path, err)
			}
			var seen struct {
				Main             string
				PageWidth, Width float64
				Covered          []string
			}
			Eval(t, ctx, `(async () => {
				window.scrollTo(0, document.documentElement.scrollHeight);
				await new Promise(r => requestAnimationFrame(() => setTimeout(r, 0)));
				const main = document.querySelector("main");
				const end = main.getBoundingClientRect().bottom;
				const covered = [...document.querySelectorAll("body *")]
					.filter(e => getComputedStyle(e).position === "fixed" && e.getClientRects().length > 0)
					.filter(e => { const r = e.getBoundingClientRect(); return r.top < end && r.bottom > end - 1 && r.height < window.innerHeight; })
					.map(e => e.className || e.tagName);
				return {
					Main: main.textContent.trim().slice(0, 80),
					PageWidth: document.documentElement.scrollWidth,
					Width: document.documentElement.clientWidth,
					Covered: covered,
				};
			})()`, &seen)
			name := fmt.Sprintf("%s at %s", p.Name, w.Name)
			if seen.Main == "" {
				t.Errorf("%s: the page is empty", name)
			}
			if seen.PageWidth > seen.Width {
				t.Errorf("%s: the page is %.0f px wide in a %.0f px window, it scrolls sideways", name, seen.PageWidth, seen.Width)
			}
			if len(seen.Covered) > 0 {
				t.Errorf("%s: the end of the page is under %s", name, strings.Join(seen.Covered, ", "))
			}
			// The screenshot is of what opens first: the top of the page.
			if err := chromedp.Do(ctx, Until(`(() => { window.scrollTo(0, 0); return true })()`)); err != nil {
				t.Fatal(err)
			}
			Screenshot(t, ctx, fmt.Sprintf("%s-%s-%s.png", shots, p.Name, w.Name))
		}
	}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatal(err)
	}
}

// OpenByHash opens a page of the browser mode's UI as its links do, through
// the location's hash, marking the page shown until then stale so that Tour
// waits for the new one.
func OpenByHash(path string) chromedp.Action[chromedp.Void] {
	return Until(fmt.Sprintf(`(() => { if (location.hash !== "#" + %[1]s) { document.body.dataset.stale = "1"; location.hash = "#" + %[1]s } return true })()`, jsString(path)))
}
