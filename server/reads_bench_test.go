package server_test

import (
	"bufio"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
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
// op is an update and the wait until the last of them has received it.
//
//	go test ./server -run '^$' -bench 'BenchmarkWatchFanout1000' -benchtime 200x
func BenchmarkWatchFanout1000(b *testing.B) {
	const watchers = 1000
	h := newTestServer(b)
	srv := httptest.NewServer(h)
	defer srv.Close()
	putConfigMap(b, h, "default", "w", "0", false)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: watchers}}
	got := make(chan struct{}, watchers)
	for range watchers {
		resp, err := client.Get(srv.URL + "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=0")
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
	for b.Loop() {
		n++
		putConfigMap(b, h, "default", "w", fmt.Sprint(n), true)
		receive()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n*watchers), "ns/delivery")
}
