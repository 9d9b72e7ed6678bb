package server_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"kubeplay/server"
	"kubeplay/server/encoding"
	"kubeplay/store"
)

// TestStoredAnswers_SameAsDecoded reads a variety of objects (config maps
// with every kind of character, secrets, pods with managedFields and one
// being deleted, deployments, events of both groups, HPAs of two versions,
// custom objects, values stored by something else, a corrupt one) from two
// servers over one store: one sends stored objects as they are, the other
// decodes and encodes them as before. Gets, lists (pages, selectors, gzip,
// every representation) and watches must answer the same bytes.
func TestStoredAnswers_SameAsDecoded(t *testing.T) {
	st, err := store.Open(t.Context(), ":memory:", store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	gates, err := server.ParseFeatureGates("CBORServingAndStorage=true")
	if err != nil {
		t.Fatal(err)
	}
	fast := newTestServerWith(t, server.Options{Store: st, FeatureGates: gates}).(*server.Server)

	send := func(method, path, contentType, body string) {
		t.Helper()
		rec := serve(fast, method, path, contentType, body)
		if rec.Code >= 300 {
			t.Fatalf("%s %s: %d %s", method, path, rec.Code, rec.Body)
		}
	}
	const cms = "/api/v1/namespaces/eq/configmaps"
	for _, ns := range []string{"eq", "eq-big", "eq-bad"} {
		send("POST", "/api/v1/namespaces", "application/json", `{"metadata":{"name":"`+ns+`"}}`)
	}
	createDefaultServiceAccount(t, fast, "eq")
	start := revisionOf(t, fast, "/api/v1/namespaces/eq/configmaps")

	for i, data := range []string{
		`{"a":"plain"}`,
		`{"html":"<b>&amp;</b>","unicode":"héllo ✓ 😀 \u2028 \u2029","ctl":"\u0001\b\f\n\r\t","quote":"\"\\/"}`,
		`{"a.b":"v","A_B-c":"v","Z":"é"}`,
		`{}`,
	} {
		send("POST", cms, "application/json", fmt.Sprintf(
			`{"metadata":{"name":"cm%d","labels":{"app":"a","i":"%d"},"annotations":{"note":"<x>"}},"data":%s,"binaryData":{"b":"AAEC"},"immutable":%v}`,
			i, i, data, i%2 == 1))
	}
	send("POST", "/api/v1/namespaces/eq/secrets", "application/json",
		`{"metadata":{"name":"s"},"type":"Opaque","data":{"k":"dmFsdWU="},"stringData":{"t":"text"}}`)
	send("POST", "/api/v1/namespaces/eq/pods", "application/json",
		`{"metadata":{"name":"p1","labels":{"app":"a"}},"spec":{"containers":[{"name":"c","image":"nginx","resources":{"limits":{"cpu":"1.5"}}}],"terminationGracePeriodSeconds":7}}`)
	send("PATCH", "/api/v1/namespaces/eq/pods/p1?fieldManager=other", "application/apply-patch+yaml",
		`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p1","labels":{"owner":"other"}}}`)
	send("POST", "/api/v1/namespaces/eq/pods", "application/json",
		`{"metadata":{"name":"p2","finalizers":["example.com/hold"]},"spec":{"containers":[{"name":"c","image":"nginx"}]}}`)
	send("DELETE", "/api/v1/namespaces/eq/pods/p2", "", "")
	send("POST", "/apis/apps/v1/namespaces/eq/deployments", "application/json",
		`{"metadata":{"name":"d"},"spec":{"replicas":3,"selector":{"matchLabels":{"app":"d"}},"template":{"metadata":{"labels":{"app":"d"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}}}`)
	send("POST", "/apis/events.k8s.io/v1/namespaces/eq/events", "application/json",
		`{"metadata":{"name":"e"},"eventTime":"2024-01-01T00:00:00.000000Z","reason":"R","note":"n","action":"A","reportingController":"c","reportingInstance":"i","type":"Normal","regarding":{"kind":"Pod","name":"p1","namespace":"eq"}}`)
	send("POST", "/apis/autoscaling/v2/namespaces/eq/horizontalpodautoscalers", "application/json",
		`{"metadata":{"name":"h"},"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"d"},"maxReplicas":5,"metrics":[{"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":50}}}]}}`)
	send("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", "application/json",
		`{"metadata":{"name":"things.example.com"},"spec":{"group":"example.com","scope":"Namespaced","names":{"plural":"things","singular":"thing","kind":"Thing","listKind":"ThingList"},`+
			`"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","properties":{"spec":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}}}]}}`)
	waitServed(t, fast, "/apis/example.com/v1/namespaces/eq/things")
	send("POST", "/apis/example.com/v1/namespaces/eq/things", "application/json",
		`{"apiVersion":"example.com/v1","kind":"Thing","metadata":{"name":"t"},"spec":{"n":1.50,"s":"<x>"}}`)
	for i := range 150 {
		send("POST", "/api/v1/namespaces/eq-big/configmaps", "application/json",
			fmt.Sprintf(`{"metadata":{"name":"big%03d"},"data":{"v":%q}}`, i, strings.Repeat("x<", 500)))
	}
	cmGVR := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	for name, value := range map[string]string{
		"odd-spaces":  `{"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "odd-spaces", "namespace": "eq"}, "data": {"a": "b"}}`,
		"odd-rv":      `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"odd-rv","namespace":"eq","resourceVersion":"1"}}`,
		"odd-order":   `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"eq","name":"odd-order"},"data":{"b":"","a":"\u0041"}}`,
		"odd-nometa":  `{"kind":"ConfigMap","apiVersion":"v1","data":{"a":"b"}}`,
		"odd-version": `{"kind":"ConfigMap","apiVersion":"v0","metadata":{"name":"odd-version","namespace":"eq"}}`,
	} {
		if err := fast.PlantUndecodable(t.Context(), cmGVR, "eq", name, []byte(value)); err != nil {
			t.Fatal(err)
		}
	}
	if err := fast.PlantUndecodable(t.Context(), cmGVR, "eq-bad", "bad", []byte(`{"kind":"ConfigMap"`)); err != nil {
		t.Fatal(err)
	}
	// Selector transitions, an update and a delete for the watches.
	send("PUT", cms+"/cm0", "application/json", `{"metadata":{"name":"cm0","labels":{"app":"b"}},"data":{"a":"2"}}`)
	send("PUT", cms+"/cm0", "application/json", `{"metadata":{"name":"cm0","labels":{"app":"a"}},"data":{"a":"3"}}`)
	send("DELETE", cms+"/cm3", "", "")
	end := revisionOf(t, fast, cms)
	// Started now, it serves the custom resource too.
	slow := newTestServerWith(t, server.Options{Store: st, FeatureGates: gates}).(*server.Server)
	server.DecodeReads(slow)
	waitServed(t, slow, "/apis/example.com/v1/namespaces/eq/things")

	// The values kubeplay wrote are sent as stored.
	for _, key := range []string{"/registry/configmaps/eq/cm1", "/registry/pods/eq/p1", "/registry/pods/eq/p2"} {
		kv, err := st.Get(t.Context(), key, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := encoding.Canonical(kv.Value); !ok {
			t.Errorf("%s is not stored canonical: %s", key, kv.Value)
		}
	}

	const partial = "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io"
	const partialList = "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io"
	paths := []string{
		cms, cms + "?labelSelector=app%3Da", cms + "?labelSelector=i+in+(1,2)", cms + "?fieldSelector=metadata.name%3Dcm1",
		cms + "?resourceVersion=0", cms + fmt.Sprintf("?resourceVersion=%d&resourceVersionMatch=Exact", start+3),
		cms + fmt.Sprintf("?resourceVersion=%d&resourceVersionMatch=NotOlderThan", start), cms + "?limit=3",
		cms + "?pretty=true", cms + "/cm1", cms + "/cm2?resourceVersion=0", cms + "/odd-spaces", cms + "/odd-rv", cms + "/odd-order",
		cms + "/odd-nometa", cms + "/odd-version", cms + "/missing",
		"/api/v1/configmaps", "/api/v1/namespaces/eq/secrets", "/api/v1/namespaces/eq/secrets/s",
		"/api/v1/namespaces/eq/pods", "/api/v1/namespaces/eq/pods/p1", "/api/v1/namespaces/eq/pods/p2",
		"/api/v1/namespaces/eq/pods?fieldSelector=spec.restartPolicy%3DAlways",
		"/apis/apps/v1/namespaces/eq/deployments", "/apis/apps/v1/namespaces/eq/deployments/d",
		"/apis/events.k8s.io/v1/namespaces/eq/events", "/api/v1/namespaces/eq/events",
		"/apis/autoscaling/v1/namespaces/eq/horizontalpodautoscalers", "/apis/autoscaling/v2/namespaces/eq/horizontalpodautoscalers/h",
		"/apis/example.com/v1/namespaces/eq/things", "/apis/example.com/v1/namespaces/eq/things/t",
		"/api/v1/namespaces", "/api/v1/namespaces/eq",
		"/api/v1/namespaces/eq-bad/configmaps", "/api/v1/namespaces/eq-bad/configmaps/bad",
		"/api/v1/namespaces/eq-big/configmaps", "/api/v1/namespaces/eq-big/configmaps?limit=100",
	}
	// (Not Table, whose ages change from one second to the next.)
	for _, path := range paths {
		for _, h := range []http.Header{
			{},
			{"Accept": {"application/json"}, "Accept-Encoding": {"gzip"}},
			{"Accept": {partialList + ", " + partial + ", application/json"}},
			{"Accept": {"application/yaml"}},
			{"Accept": {"application/cbor"}},
		} {
			sameAnswer(t, fast, slow, path, h)
		}
	}
	// Every page of a paginated list.
	next := cms + "?limit=2"
	for next != "" {
		body := sameAnswer(t, fast, slow, next, http.Header{})
		var l struct{ Metadata struct{ Continue string } }
		if err := json.Unmarshal(body, &l); err != nil {
			t.Fatal(err)
		}
		next = ""
		if l.Metadata.Continue != "" {
			next = cms + "?limit=2&continue=" + url.QueryEscape(l.Metadata.Continue)
		}
	}

	// A large collection's list, whose items are kept to be sent again,
	// after a change to one of them, and after none.
	const big = "/api/v1/namespaces/eq-big/configmaps"
	for _, change := range [][3]string{
		{"PUT", big + "/big007", fmt.Sprintf(`{"metadata":{"name":"big007"},"data":{"v":%q}}`, strings.Repeat("y>", 500))},
		{"DELETE", big + "/big100", ""},
		{"POST", big, `{"metadata":{"name":"big-new"}}`},
	} {
		send(change[0], change[1], "application/json", change[2])
		for range 2 {
			sameAnswer(t, fast, slow, big, http.Header{})
			sameAnswer(t, fast, slow, big, http.Header{"Accept": {"application/json"}, "Accept-Encoding": {"gzip"}})
		}
	}

	// Watches, replayed from history or from the initial state, side by
	// side. Last writes (named to come last in the initial state too) end
	// what each has to send: a watch is read until it sent its marker, so
	// that both servers' answers are whole whatever the machine's load.
	send("PUT", cms+"/cm0", "application/json", `{"metadata":{"name":"cm0","labels":{"app":"a"},"annotations":{"end":"cm0-end"}},"data":{"a":"4"}}`)
	send("POST", cms, "application/json", `{"metadata":{"name":"zz-end","labels":{"app":"a"}}}`)
	send("POST", "/api/v1/namespaces/eq-bad/configmaps", "application/json", `{"metadata":{"name":"zz-end"}}`)
	send("POST", "/api/v1/namespaces/eq/pods", "application/json", `{"metadata":{"name":"zz-end"},"spec":{"containers":[{"name":"c","image":"nginx"}]}}`)
	send("POST", "/apis/example.com/v1/namespaces/eq/things", "application/json", `{"apiVersion":"example.com/v1","kind":"Thing","metadata":{"name":"zz-end"}}`)
	watches := []struct{ path, marker string }{
		{fmt.Sprintf("%s?watch=1&resourceVersion=%d", cms, start), "zz-end"},
		{fmt.Sprintf("%s?watch=1&resourceVersion=%d&labelSelector=app%%3Da", cms, start), "zz-end"},
		{fmt.Sprintf("%s?watch=1&resourceVersion=%d&fieldSelector=metadata.name%%3Dcm0", cms, start), "cm0-end"},
		{fmt.Sprintf("/api/v1/namespaces/eq/pods?watch=1&resourceVersion=%d", start), "zz-end"},
		{fmt.Sprintf("/apis/example.com/v1/namespaces/eq/things?watch=1&resourceVersion=%d", start), "zz-end"},
		{cms + "?watch=1", "zz-end"},
		{cms + "?watch=1&labelSelector=app%3Da&allowWatchBookmarks=true", "zz-end"},
		{fmt.Sprintf("%s?watch=1&resourceVersion=%d", cms, end-2), "zz-end"},
		{"/api/v1/namespaces/eq-bad/configmaps?watch=1", "zz-end"},
	}
	var wg sync.WaitGroup
	// (Not Table, whose ages change from one second to the next.)
	accepts := []string{"", "application/cbor", partial}
	answers := make([][][2]*httptest.ResponseRecorder, len(watches))
	for i, w := range watches {
		answers[i] = make([][2]*httptest.ResponseRecorder, len(accepts))
		for a, accept := range accepts {
			for j, h := range []http.Handler{fast, slow} {
				wg.Go(func() {
					ctx, cancel := context.WithCancel(t.Context())
					defer cancel()
					rec := &untilWriter{ResponseRecorder: httptest.NewRecorder(), marker: []byte(w.marker), done: cancel}
					req := httptest.NewRequest("GET", w.path, nil).WithContext(ctx)
					if accept != "" {
						req.Header.Set("Accept", accept)
					}
					h.ServeHTTP(rec, req)
					answers[i][a][j] = rec.ResponseRecorder
				})
			}
		}
	}
	wg.Wait()
	for i, w := range watches {
		path := w.path
		for a, accept := range accepts {
			f, s := answers[i][a][0], answers[i][a][1]
			if f.Code != s.Code || f.Body.String() != s.Body.String() {
				t.Errorf("watch %s (%s):\nshared:  %d %q\ndecoded: %d %q", path, accept, f.Code, f.Body, s.Code, s.Body)
			}
			if f.Body.Len() == 0 {
				t.Errorf("watch %s (%s): nothing sent", path, accept)
			}
		}
	}
}

// sameAnswer asks both servers and compares status, headers and body; it
// returns the body.
func sameAnswer(t *testing.T, fast, slow http.Handler, path string, h http.Header) []byte {
	t.Helper()
	f, s := get(t, fast, "GET", path, h), get(t, slow, "GET", path, h)
	fb, sb := unzipped(t, f), unzipped(t, s)
	for _, k := range []string{"Content-Type", "Content-Encoding", "Vary", "Warning"} {
		if f.Header().Get(k) != s.Header().Get(k) {
			t.Errorf("GET %s %v: %s %q, decoded %q", path, h, k, f.Header().Get(k), s.Header().Get(k))
		}
	}
	if f.Code != s.Code || !bytes.Equal(fb, sb) {
		t.Errorf("GET %s %v:\nstored:  %d %s\ndecoded: %d %s", path, h, f.Code, fb, s.Code, sb)
	}
	return fb
}

func unzipped(t *testing.T, rec *httptest.ResponseRecorder) []byte {
	t.Helper()
	if rec.Header().Get("Content-Encoding") != "gzip" {
		return rec.Body.Bytes()
	}
	zr, err := gzip.NewReader(bytes.NewReader(rec.Body.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// revisionOf is the resourceVersion of a list.
func revisionOf(t *testing.T, h http.Handler, path string) int64 {
	t.Helper()
	rec := get(t, h, "GET", path, nil)
	var l struct {
		Metadata struct{ ResourceVersion string }
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &l); err != nil {
		t.Fatalf("%s: %v %s", path, err, rec.Body)
	}
	var n int64
	fmt.Sscan(l.Metadata.ResourceVersion, &n)
	return n
}

// untilWriter records a watch until it has sent marker, then ends it
// (done) and records nothing more.
type untilWriter struct {
	*httptest.ResponseRecorder
	marker []byte
	done   func()
	ended  bool
}

func (w *untilWriter) Write(b []byte) (int, error) {
	if w.ended {
		return len(b), nil
	}
	n, err := w.ResponseRecorder.Write(b)
	if bytes.Contains(w.Body.Bytes(), w.marker) {
		w.ended = true
		w.done()
	}
	return n, err
}

// waitServed waits until h serves path (a custom resource being set up),
// as long as the test may run.
func waitServed(t *testing.T, h http.Handler, path string) {
	t.Helper()
	for get(t, h, "GET", path, nil).Code != http.StatusOK {
		select {
		case <-t.Context().Done():
			t.Fatalf("%s is not served", path)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// The items of a built-in list come in the field order kube-apiserver
// v1.35.4 sends them in, as recorded from it (with the uid, times and
// resourceVersion, which differ, left out): no kind or apiVersion, metadata
// first in ObjectMeta's order, then the type's fields; with and without a
// label selector. (TestStoredAnswers_SameAsDecoded holds the decoding path
// to the same bytes.)
func TestList_ItemFieldOrder(t *testing.T) {
	h := newTestServer(t)
	if w := serve(h, "POST", "/api/v1/namespaces/default/configmaps", "application/json",
		`{"metadata":{"name":"order","labels":{"a":"b"}},"data":{"k":"v"}}`); w.Code != 201 {
		t.Fatalf("create: %d %s", w.Code, w.Body)
	}
	// From the oracle: {"metadata":{"name":"order","namespace":"default","uid":…,
	// "resourceVersion":…,"creationTimestamp":…,"labels":{"a":"b"},"managedFields":[…]},"data":{"k":"v"}}
	want := []string{`{"metadata":{"name":"order","namespace":"default","uid":"`, `","resourceVersion":"`,
		`","creationTimestamp":"`, `","labels":{"a":"b"},"managedFields":[`, `]},"data":{"k":"v"}}`}
	for _, path := range []string{"/api/v1/namespaces/default/configmaps", "/api/v1/namespaces/default/configmaps?labelSelector=a%3Db"} {
		req := httptest.NewRequest("GET", path, nil)
		req.Header.Set("Accept", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		var list struct {
			Items []json.RawMessage `json:"items"`
		}
		if err := json.Unmarshal(w.Body.Bytes(), &list); err != nil || len(list.Items) != 1 {
			t.Fatalf("%s: %v %s", path, err, w.Body)
		}
		item, at := string(list.Items[0]), 0
		for _, part := range want {
			i := strings.Index(item[at:], part)
			if i < 0 {
				t.Fatalf("%s: item %s lacks %q after byte %d", path, item, part, at)
			}
			at += i + len(part)
		}
	}
}

// TestCreateAnswers_SameAsDecoded creates objects of several types on two
// servers over one store, one that answers a create with the bytes it stored
// (the resourceVersion spliced in), one that encodes the object again as
// before: each answer must be the bytes the other server's GET gives of the
// object just created, in every representation.
func TestCreateAnswers_SameAsDecoded(t *testing.T) {
	st, err := store.Open(t.Context(), ":memory:", store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	fast := newTestServerWith(t, server.Options{Store: st}).(*server.Server)
	slow := newTestServerWith(t, server.Options{Store: st}).(*server.Server)
	server.DecodeReads(slow)
	if rec := serve(fast, "POST", "/api/v1/namespaces", "application/json", `{"metadata":{"name":"eq"}}`); rec.Code != http.StatusCreated {
		t.Fatalf("namespace: %d %s", rec.Code, rec.Body)
	}
	createDefaultServiceAccount(t, fast, "eq")

	objects := []struct{ collection, body string }{
		{"/api/v1/namespaces/eq/configmaps", `{"metadata":{"name":"%s","labels":{"app":"a"},"annotations":{"note":"<x>"}},"data":{"html":"<b>&amp;</b>","unicode":"héllo ✓ 😀 \u2028","ctl":"\u0001\n\t","quote":"\"\\/"},"binaryData":{"b":"AAEC"}}`},
		{"/api/v1/namespaces/eq/configmaps", `{"metadata":{"name":"%s"}}`},
		{"/api/v1/namespaces/eq/secrets", `{"metadata":{"name":"%s"},"type":"Opaque","data":{"k":"dmFsdWU="},"stringData":{"t":"text"}}`},
		{"/api/v1/namespaces/eq/pods", `{"metadata":{"name":"%s","labels":{"app":"a"}},"spec":{"containers":[{"name":"c","image":"nginx","resources":{"limits":{"cpu":"1.5"}}}],"terminationGracePeriodSeconds":7}}`},
		{"/apis/apps/v1/namespaces/eq/deployments", `{"metadata":{"name":"%s"},"spec":{"replicas":3,"selector":{"matchLabels":{"app":"d"}},"template":{"metadata":{"labels":{"app":"d"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}}}`},
		{"/apis/autoscaling/v2/namespaces/eq/horizontalpodautoscalers", `{"metadata":{"name":"%s"},"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"d"},"maxReplicas":5}}`},
		{"/apis/autoscaling/v1/namespaces/eq/horizontalpodautoscalers", `{"metadata":{"name":"%s"},"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"d"},"maxReplicas":5}}`},
	}
	headers := []http.Header{
		{},
		{"Accept": {"application/json"}, "Accept-Encoding": {"gzip"}},
		{"Accept": {"application/yaml"}},
		{"Accept": {"application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io"}},
	}
	n := 0
	for _, o := range objects {
		for _, h := range headers {
			for _, pair := range [][2]*server.Server{{fast, slow}, {slow, fast}} {
				n++
				name := fmt.Sprintf("o%d", n)
				req := httptest.NewRequest("POST", o.collection, strings.NewReader(fmt.Sprintf(o.body, name)))
				req.Header.Set("Content-Type", "application/json")
				for k, v := range h {
					req.Header[k] = v
				}
				created := httptest.NewRecorder()
				pair[0].ServeHTTP(created, req)
				if created.Code != http.StatusCreated {
					t.Fatalf("POST %s: %d %s", o.collection, created.Code, created.Body)
				}
				got := get(t, pair[1], "GET", o.collection+"/"+name, h)
				cb, gb := unzipped(t, created), unzipped(t, got)
				for _, k := range []string{"Content-Type", "Content-Encoding", "Vary"} {
					if created.Header().Get(k) != got.Header().Get(k) {
						t.Errorf("POST %s %v: %s %q, GET %q", o.collection, h, k, created.Header().Get(k), got.Header().Get(k))
					}
				}
				if !bytes.Equal(cb, gb) {
					t.Errorf("POST %s %v (stored answer: %v):\ncreate: %s\nGET:    %s", o.collection, h, pair[0] == fast, cb, gb)
				}
			}
		}
	}
}
