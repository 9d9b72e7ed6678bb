//go:build !js

package static_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"kubeplay/internal/browsertest"
	"kubeplay/playground"
	"kubeplay/static"
	"kubeplay/store"
	"kubeplay/web"
)

// The budgets of the browser mode (README, "Browser mode"), measured by
// static/bench.sh: what the browser downloads, the time from navigation to
// the first answer, and requests per second through kubeplay.fetch against
// the native server's.

// fetched are the files a first visit downloads, in order.
var fetched = []string{"/", "/boot.css", "/page.js", "/kubeplay.js", "/worker.js", "/cel.mjs",
	"/dist/kubeplay.wasm", "/dist/sqlite3.mjs", "/dist/sqlite3.wasm", "/dist/wasm_exec.js", "/dist/bootstrap.sqlite3"}

// BenchmarkDownload fetches every file of a first visit from static.Handler
// (as the native server sends them: the engine and SQLite precompressed)
// and reports the bytes on the wire per visit for each encoding.
func BenchmarkDownload(b *testing.B) {
	h := static.Handler()
	for _, enc := range []string{"br", "gzip", "identity"} {
		b.Run(enc, func(b *testing.B) {
			var wire int
			for b.Loop() {
				wire = 0
				for _, p := range fetched {
					r := httptest.NewRequest("GET", p, nil)
					r.Header.Set("Accept-Encoding", enc)
					w := httptest.NewRecorder()
					h.ServeHTTP(w, r)
					if w.Code != 200 {
						b.Fatalf("%s: %d (is static/dist built?)", p, w.Code)
					}
					wire += w.Body.Len()
				}
			}
			b.ReportMetric(float64(wire)/1e6, "MB/visit")
		})
	}
}

// BenchmarkFirstAnswer measures navigation → first answered request
// (kubeplay.timings.firstAnswer) in headless Chromium on localhost: cold, in
// a fresh browser context (empty HTTP cache and storage) each time; warm, by
// reloading the same tab; revisit, in a new tab of a browser that visited
// before, whose renderer process starts with nothing compiled: only what the
// browser kept on disk (HTTP cache, V8's code cache, the service worker's
// copy of the engine, the database).
func BenchmarkFirstAnswer(b *testing.B) {
	browsertest.SkipIfAsked(b)
	srv := httptest.NewServer(http.StripPrefix("/browser", noCache(static.Handler())))
	b.Cleanup(srv.Close)
	ctx := browsertest.New(b, 10*time.Minute)
	// first waits for the page's first answer and adds kubeplay.timings
	// (milliseconds since navigation at which each step ended) to sums.
	first := func(tab context.Context, sums map[string]float64) {
		t, err := chromedp.Run(tab, chromedp.Evaluate[map[string]float64](`kubeplay.ready.then((k) => k.timings)`, chromedp.EvalAwaitPromise))
		if err != nil {
			b.Fatal(err)
		}
		for step, ms := range t {
			sums[step] += ms
		}
	}
	// report reports the mean time of the first answer and of each step
	// before it, so that a slower start shows where it went.
	report := func(b *testing.B, sums map[string]float64) {
		for step, ms := range sums {
			unit := "ms/" + step
			if step == "firstAnswer" {
				unit = "ms/first-answer"
			}
			b.ReportMetric(ms/float64(b.N), unit)
		}
	}
	b.Run("cold", func(b *testing.B) {
		sums := map[string]float64{}
		for b.Loop() {
			tab, cancel := chromedp.NewContext(ctx, chromedp.WithNewBrowserContext())
			if err := chromedp.Do(tab, chromedp.Navigate(srv.URL+"/browser/")); err != nil {
				b.Fatal(err)
			}
			first(tab, sums)
			cancel()
		}
		report(b, sums)
	})
	b.Run("warm", func(b *testing.B) {
		if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/browser/")); err != nil {
			b.Fatal(err)
		}
		first(ctx, map[string]float64{})
		sums := map[string]float64{}
		for b.Loop() {
			if err := chromedp.Do(ctx, chromedp.Reload()); err != nil {
				b.Fatal(err)
			}
			first(ctx, sums)
		}
		report(b, sums)
	})
	b.Run("revisit", func(b *testing.B) {
		visit := func(sums map[string]float64) {
			tab, cancel := chromedp.NewContext(ctx)
			if err := chromedp.Do(tab, chromedp.Navigate(srv.URL+"/browser/")); err != nil {
				b.Fatal(err)
			}
			first(tab, sums)
			cancel()
		}
		// The warm tab would hold the database: a second tab runs on one in
		// memory.
		if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
			b.Fatal(err)
		}
		// V8 writes its code cache some seconds after a visit, once the
		// engine's hot functions are optimised: after the first visit for
		// the HTTP cache's copy, after the second for the service worker's.
		for range 2 {
			visit(map[string]float64{})
			time.Sleep(codeCacheDelay)
		}
		sums := map[string]float64{}
		for b.Loop() {
			visit(sums)
		}
		report(b, sums)
	})
}

// codeCacheDelay is long enough for V8 to have written its code cache of
// kubeplay.wasm after a visit (measured: under 10 s on a loaded machine).
const codeCacheDelay = 15 * time.Second

// noCache sets the cache policy the native server sets (package website).
func noCache(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		h.ServeHTTP(w, r)
	})
}

// requestJS makes n requests through kubeplay.fetch, one after the other,
// as the page would: creates of ConfigMaps prefix-0..n-1, or gets of one.
const requestJS = `(async (kind, prefix, n) => {
	const cms = "/api/v1/namespaces/default/configmaps";
	for (let i = 0; i < n; i++) {
		const res = kind === "create"
			? await kubeplay.fetch(cms, {method: "POST", headers: {"Content-Type": "application/json"},
				body: JSON.stringify({metadata: {name: prefix + i}, data: {k: "v"}})})
			: await kubeplay.fetch(cms + "/" + prefix + "0");
		await res.arrayBuffer();
		if (res.status !== (kind === "create" ? 201 : 200)) throw new Error(kind + ": " + res.status);
	}
})`

// BenchmarkRequests compares requests per second through kubeplay.fetch
// (engine in a worker, database in OPFS) with the native server over HTTP
// on localhost (database file on disk), for ConfigMap creates and gets.
func BenchmarkRequests(b *testing.B) {
	browsertest.SkipIfAsked(b)
	srv := httptest.NewServer(http.StripPrefix("/browser", static.Handler()))
	b.Cleanup(srv.Close)
	ctx := browsertest.New(b, 10*time.Minute)
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/browser/")); err != nil {
		b.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[chromedp.Void](`kubeplay.ready`, chromedp.EvalAwaitPromise)); err != nil {
		b.Fatal(err)
	}
	native := nativeServer(b)
	run := 0
	for _, kind := range []string{"create", "get"} {
		b.Run("browser/"+kind, func(b *testing.B) {
			run++
			prefix := fmt.Sprintf("b%d-", run)
			if kind == "get" {
				browserRequests(b, ctx, "create", prefix, 1)
			}
			b.ResetTimer()
			browserRequests(b, ctx, kind, prefix, b.N)
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
		})
		b.Run("native/"+kind, func(b *testing.B) {
			run++
			prefix := fmt.Sprintf("n%d-", run)
			if kind == "get" {
				nativeRequest(b, native, "create", prefix+"0")
			}
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				name := prefix + "0"
				if kind == "create" {
					name = fmt.Sprint(prefix, i)
				}
				nativeRequest(b, native, kind, name)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
		})
	}
}

func browserRequests(b *testing.B, ctx context.Context, kind, prefix string, n int) {
	b.Helper()
	js := fmt.Sprintf("%s(%q, %q, %d)", requestJS, kind, prefix, n)
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[chromedp.Void](js, chromedp.EvalAwaitPromise)); err != nil {
		b.Fatal(err)
	}
}

// nativeServer serves the native site (kubeplay serve, without the
// browser files) on a database file.
func nativeServer(b testing.TB) string {
	b.Helper()
	st, err := store.Open(b.Context(), filepath.Join(b.TempDir(), "kubeplay.db"), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	sb, err := playground.Open(b.Context(), playground.Options{Store: st})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { sb.Close() })
	srv := httptest.NewServer(web.New(sb))
	b.Cleanup(srv.Close)
	return srv.URL
}

func nativeRequest(b *testing.B, server, kind, name string) {
	cms := server + "/api/v1/namespaces/default/configmaps"
	var res *http.Response
	var err error
	if kind == "create" {
		body := fmt.Sprintf(`{"metadata":{"name":%q},"data":{"k":"v"}}`, name)
		res, err = http.Post(cms, "application/json", bytes.NewReader([]byte(body)))
	} else {
		res, err = http.Get(cms + "/" + name)
	}
	if err != nil {
		b.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if want := map[string]int{"create": 201, "get": 200}[kind]; res.StatusCode != want {
		b.Fatalf("%s %s: %d", kind, name, res.StatusCode)
	}
}
