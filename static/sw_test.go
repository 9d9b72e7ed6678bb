//go:build !js

package static_test

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"kubeplay/internal/browsertest"
	"kubeplay/static"
)

// TestServiceWorker_engine: once the service worker keeps the engine, a
// visit asks the server whether that copy is current (If-None-Match) and,
// on 304, starts from it, even with the HTTP cache empty: V8 keeps the code
// it compiled beside a copy in the Cache Storage, not beside a Response the
// worker fetched.
func TestServiceWorker_engine(t *testing.T) {
	var (
		mu       sync.Mutex
		statuses []int // of the requests for the engine
	)
	h := static.Handler()
	srv := httptest.NewServer(http.StripPrefix("/browser", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		if r.URL.Path != "/dist/kubeplay.wasm" {
			h.ServeHTTP(w, r)
			return
		}
		rec := &statusWriter{ResponseWriter: w}
		h.ServeHTTP(rec, r)
		mu.Lock()
		statuses = append(statuses, rec.status)
		mu.Unlock()
	})))
	defer srv.Close()
	ctx := browsertest.New(t, browserTestLimit)
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/browser/")); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[chromedp.Void](`kubeplay.ready.then(() => navigator.serviceWorker.ready).then((r) => caches.open("kubeplay")).then(async (c) => {
		while (!(await c.match("dist/kubeplay.wasm"))) await new Promise((r) => setTimeout(r, 50));
	})`, chromedp.EvalAwaitPromise)); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, network.ClearBrowserCache, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	statuses = nil
	mu.Unlock()
	if err := chromedp.Do(ctx, chromedp.Reload()); err != nil {
		t.Fatal(err)
	}
	var status int
	browsertest.Eval(t, ctx, `kubeplay.ready.then(() => kubeplay.fetch("/api/v1/namespaces/default")).then((r) => r.status)`, &status)
	if status != 200 {
		t.Errorf("after the reload: GET namespace default = %d, want 200", status)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(statuses) == 0 || statuses[0] != http.StatusNotModified {
		t.Errorf("the requests for the engine after the reload answered %v, want 304 first", statuses)
	}
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}
