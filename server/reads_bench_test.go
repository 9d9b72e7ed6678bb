package server_test

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"kubeplay/server"
	"kubeplay/store"
)

// putConfigMap sends a create (or, with rv, an update) to h in process.
func putConfigMap(tb testing.TB, h http.Handler, ns, name, value string, update bool) {
	tb.Helper()
	method, path := "POST", "/api/v1/namespaces/"+ns+"/configmaps"
	if update {
		method, path = "PUT", path+"/"+name
	}
	body := fmt.Sprintf(`{"metadata":{"name":%q,"labels":{"app":"bench"}},"data":{"k":%q}}`, name, value)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, path, strings.NewReader(body)))
	if rec.Code >= 300 {
		tb.Fatalf("%s %s: %d %s", method, path, rec.Code, rec.Body)
	}
}

// BenchmarkList10000 lists 10,000 config maps in one request, in process
// (no network): latency, and memory per LIST.
//
//	go test ./server -run '^$' -bench 'BenchmarkList10000' -benchmem
func BenchmarkList10000(b *testing.B) {
	h := newTestServer(b)
	for i := range 10000 {
		putConfigMap(b, h, "default", fmt.Sprintf("cm-%05d", i), "value", false)
	}
	for _, q := range []string{"", "?limit=500", "?labelSelector=app%3Dbench"} {
		b.Run("query="+q, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/namespaces/default/configmaps"+q, nil))
				if rec.Code != 200 {
					b.Fatal(rec.Code)
				}
			}
		})
	}
}

// BenchmarkWatchFanout1000: 1,000 clients watch config maps over HTTP; one
// op is an update and the wait until the last of them has received it
// (p50-ms and p99-ms: that time's median and 99th percentile). Over
// HTTP/1.1, a connection each; over HTTP/2 with TLS, all on one connection,
// as bench:oracle's watchers (and a client-go informer's) are.
//
//	go test ./server -run '^$' -bench 'BenchmarkWatchFanout1000' -benchtime 200x
func BenchmarkWatchFanout1000(b *testing.B) {
	b.Run("http1", func(b *testing.B) {
		h := newTestServer(b)
		srv := httptest.NewServer(h)
		defer srv.Close()
		benchmarkWatchFanout1000(b, h, srv.URL, &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1000}})
	})
	b.Run("http2", func(b *testing.B) {
		h := newTestServer(b)
		srv := httptest.NewUnstartedServer(h)
		srv.EnableHTTP2 = true
		srv.StartTLS()
		defer srv.Close()
		benchmarkWatchFanout1000(b, h, srv.URL, srv.Client())
	})
}

func benchmarkWatchFanout1000(b *testing.B, h http.Handler, url string, client *http.Client) {
	const watchers = 1000
	putConfigMap(b, h, "default", "w", "0", false)
	got := make(chan struct{}, watchers)
	for range watchers {
		resp, err := client.Get(url + "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=0")
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		go func() {
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() {
				got <- struct{}{}
			}
		}()
	}
	receive := func() {
		for range watchers {
			<-got
		}
	}
	receive() // the synthetic ADDED: every watch is running
	n := 0
	var lat []time.Duration
	for b.Loop() {
		n++
		start := time.Now()
		putConfigMap(b, h, "default", "w", fmt.Sprint(n), true)
		receive()
		lat = append(lat, time.Since(start))
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n*watchers), "ns/delivery")
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}

// createConfigMaps creates n config maps of about 1 KiB each (data, labels,
// annotations, and the managedFields a create records) in namespace ns.
func createConfigMaps(tb testing.TB, h http.Handler, ns string, n int) {
	tb.Helper()
	for i := range n {
		body := fmt.Sprintf(`{"metadata":{"name":"cm-%05d","labels":{"app":"bench","tier":"t%d"},`+
			`"annotations":{"note":"a <b> & c"}},"data":{"a":%q,"b":"line one\nline two","c":"%05d"}}`,
			i, i%10, strings.Repeat("x", 600), i)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("POST", "/api/v1/namespaces/"+ns+"/configmaps", strings.NewReader(body)))
		if rec.Code != http.StatusCreated {
			tb.Fatalf("create: %d %s", rec.Code, rec.Body)
		}
	}
}

// BenchmarkList_ConfigMaps1000 lists 1,000 config maps of about 1 KiB as
// JSON in process: the whole list, in pages of 500, with a label selector,
// and for a client that accepts gzip (the answer is then compressed); with
// the store's default room for listings (a sandbox's), and with the root
// cluster's of kubeplay serve (64 MiB: the whole collection's listing kept).
//
//	go test ./server -run '^$' -bench 'BenchmarkList_ConfigMaps1000' -benchmem
func BenchmarkList_ConfigMaps1000(b *testing.B) {
	for _, c := range []struct {
		name  string
		bytes int
	}{{"sandbox", 0}, {"root", 64 << 20}} {
		b.Run("store="+c.name, func(b *testing.B) {
			st, err := store.Open(b.Context(), ":memory:", store.Options{ListCacheBytes: c.bytes})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { st.Close() })
			benchmarkListConfigMaps1000(b, newTestServerWith(b, server.Options{Store: st}))
		})
	}
}

func benchmarkListConfigMaps1000(b *testing.B, h http.Handler) {
	createConfigMaps(b, h, "default", 1000)
	for _, c := range []struct{ name, query, encoding string }{
		{"all", "", ""},
		{"limit=500", "?limit=500", ""},
		{"labelSelector", "?labelSelector=tier%3Dt1", ""},
		{"gzip", "", "gzip"},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			var size int
			for b.Loop() {
				req := httptest.NewRequest("GET", "/api/v1/namespaces/default/configmaps"+c.query, nil)
				req.Header.Set("Accept", "application/json")
				if c.encoding != "" {
					req.Header.Set("Accept-Encoding", c.encoding)
				}
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatal(rec.Code)
				}
				size = rec.Body.Len()
			}
			b.ReportMetric(float64(size), "bytes/list")
		})
	}
	// Over loopback HTTP as client-go's transport asks (gzip, decompressed
	// as read), the body read but not decoded.
	b.Run("http", func(b *testing.B) {
		srv := httptest.NewServer(h)
		defer srv.Close()
		b.ReportAllocs()
		for b.Loop() {
			req, _ := http.NewRequest("GET", srv.URL+"/api/v1/namespaces/default/configmaps", nil)
			req.Header.Set("Accept", "application/json")
			resp, err := srv.Client().Do(req)
			if err != nil || resp.StatusCode != http.StatusOK {
				b.Fatal(err, resp.StatusCode)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	})
}

// BenchmarkGet_ConfigMap reads one config map of about 1 KiB as JSON.
func BenchmarkGet_ConfigMap(b *testing.B) {
	h := newTestServer(b)
	createConfigMaps(b, h, "default", 1)
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest("GET", "/api/v1/namespaces/default/configmaps/cm-00000", nil)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatal(rec.Code)
		}
	}
}

// BenchmarkCreate_ConfigMap creates small config maps in process from 8
// goroutines at once, as the 8-client row of bench:oracle does over HTTP:
// the write path's CPU and allocations per create.
//
//	go test ./server -run '^$' -bench 'BenchmarkCreate_ConfigMap' -benchmem -cpuprofile cpu.out
func BenchmarkCreate_ConfigMap(b *testing.B) {
	h := newTestServer(b)
	var n atomic.Int64
	b.ReportAllocs()
	b.SetParallelism(4) // with GOMAXPROCS 2: 8 clients
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			putConfigMap(b, h, "default", fmt.Sprintf("cm-%07d", n.Add(1)), strings.Repeat("x", 64), false)
		}
	})
}
