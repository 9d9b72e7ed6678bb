package server_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"kubeplay/server"
)

// BenchmarkList_Table lists 1,000 pods as JSON and as the Table kubectl get
// asks for, to show what printing adds to a list.
func BenchmarkList_Table(b *testing.B) {
	srv := newTestServer(b)
	createPods(b, srv, 1000)
	for _, accept := range []string{"application/json", "application/json;as=Table;g=meta.k8s.io;v=v1"} {
		b.Run(accept, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				req := httptest.NewRequest("GET", "/api/v1/namespaces/default/pods", nil)
				req.Header.Set("Accept", accept)
				rec := httptest.NewRecorder()
				srv.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatal(rec.Code)
				}
				io.Copy(io.Discard, rec.Body)
			}
		})
	}
}

// BenchmarkList_CBOR lists 1,000 pods as JSON and, with the
// CBORServingAndStorage gate on, as CBOR (transcoded from the JSON, with
// the pods' schema consulted for their bytes fields).
func BenchmarkList_CBOR(b *testing.B) {
	gates, err := server.ParseFeatureGates("CBORServingAndStorage=true")
	if err != nil {
		b.Fatal(err)
	}
	srv := newTestServerWith(b, server.Options{FeatureGates: gates})
	createPods(b, srv, 1000)
	for _, accept := range []string{"application/json", "application/cbor"} {
		b.Run(accept, func(b *testing.B) {
			b.ReportAllocs()
			var size int
			for b.Loop() {
				req := httptest.NewRequest("GET", "/api/v1/namespaces/default/pods", nil)
				req.Header.Set("Accept", accept)
				rec := httptest.NewRecorder()
				srv.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != accept {
					b.Fatal(rec.Code, rec.Header().Get("Content-Type"))
				}
				size = rec.Body.Len()
			}
			b.ReportMetric(float64(size), "bytes/list")
		})
	}
}

// createPods creates n pods in the default namespace.
func createPods(b *testing.B, srv http.Handler, n int) {
	b.Helper()
	createDefaultServiceAccount(b, srv, "default")
	for i := range n {
		body := fmt.Sprintf(`{"metadata":{"name":"p%04d","labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}`, i)
		req := httptest.NewRequest("POST", "/api/v1/namespaces/default/pods", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		if rec.Code != http.StatusCreated {
			b.Fatalf("create: %d %s", rec.Code, rec.Body)
		}
	}
}
