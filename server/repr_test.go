package server_test

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"kubeplay/server"
	"kubeplay/server/encoding"
	"kubeplay/store"
)

// target is a server under test: kubeplay, or the oracle with -oracle.
type target struct {
	URL   string
	token string
}

// kubeplayOrOracle starts kubeplay, or returns the oracle when -oracle is
// given (for the tests that check facts taken from it).
func kubeplayOrOracle(t *testing.T) *target {
	if *oracleURL != "" {
		return &target{URL: *oracleURL, token: *oracleToken}
	}
	srv := httptest.NewServer(newTestServer(t))
	t.Cleanup(srv.Close)
	return &target{URL: srv.URL}
}

func (tg *target) header() http.Header {
	h := http.Header{}
	if tg.token != "" {
		h.Set("Authorization", "Bearer "+tg.token)
	}
	return h
}

var insecureTLS = &tls.Config{InsecureSkipVerify: true} // the oracle's self-signed certificate

// call sends one request to srv with the given headers and returns the
// response with its body read.
func call(t *testing.T, srv *target, method, path, body string, headers ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = srv.header()
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	// No transparent decompression: the test sees what the server sent.
	resp, err := (&http.Transport{DisableCompression: true, TLSClientConfig: insecureTLS}).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

func statusMessage(t *testing.T, body []byte) string {
	t.Helper()
	var st struct{ Message, Reason string }
	if err := json.Unmarshal(body, &st); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	return st.Message
}

// The media types of a built-in resource's objects and of its watch streams
// as kube-apiserver v1.35 names them in a 406 or 415 message (the browser
// build too, though it does not serve protobuf).
const (
	servedTypes       = "application/json, application/yaml, application/vnd.kubernetes.protobuf"
	servedStreamTypes = "application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch"
)

// The messages are kube-apiserver's (v1.35); a build that does not serve
// protobuf (the browser's) names it all the same, and refuses it.
func TestNegotiate_NotAcceptable(t *testing.T) {
	srv := &target{URL: httptest.NewServer(newTestServer(t)).URL}
	const cms = "/api/v1/namespaces/default/configmaps"
	if resp, b := call(t, srv, "POST", cms, `{"metadata":{"name":"cm"}}`); resp.StatusCode != 201 {
		t.Fatalf("create: %d %s", resp.StatusCode, b)
	}
	const (
		object     = "406: Not Acceptable\n\nAvailable representations: " + servedTypes
		collection = object + ", " + servedStreamTypes
		only       = "only the following media types are accepted: " + servedTypes
	)
	type check struct{ name, method, path, accept, want string }
	checks := []check{
		{"cbor get", "GET", cms + "/cm", "application/cbor", object},
		{"html get", "GET", cms + "/cm", "text/html", object},
		{"unknown as", "GET", cms, "application/json;as=Foo;g=meta.k8s.io;v=v1", only},
		{"yaml watch", "GET", cms + "?watch=true", "application/yaml", "only the following media types are accepted: " + servedStreamTypes},
		{"protobuf table", "GET", cms, "application/vnd.kubernetes.protobuf;as=Table;g=meta.k8s.io;v=v1", only}, // no Table in protobuf
	}
	if !encoding.ProtobufServed {
		checks = append(checks,
			check{"protobuf get", "GET", cms + "/cm", "application/vnd.kubernetes.protobuf", object},
			check{"protobuf list", "GET", cms, "application/vnd.kubernetes.protobuf", collection},
			check{"protobuf watch", "GET", cms + "?watch=true", "application/vnd.kubernetes.protobuf", collection},
			check{"protobuf create", "POST", cms, "application/vnd.kubernetes.protobuf", collection})
	}
	for _, tc := range checks {
		t.Run(tc.name, func(t *testing.T) {
			body := ""
			if tc.method == "POST" {
				body = `{"metadata":{"name":"other"}}`
			}
			resp, b := call(t, srv, tc.method, tc.path, body, "Accept", tc.accept)
			if resp.StatusCode != http.StatusNotAcceptable {
				t.Fatalf("got %d %s: %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
			}
			if resp.Header.Get("Content-Type") == "application/yaml" {
				b, _ = yaml.YAMLToJSON(b) // the Status in the format the client accepts
			} else if resp.Header.Get("Content-Type") != "application/json" {
				t.Errorf("Content-Type %q", resp.Header.Get("Content-Type"))
			}
			if got := statusMessage(t, b); got != tc.want {
				t.Errorf("message %q, want %q", got, tc.want)
			}
		})
	}
	// The refused create did not happen.
	if resp, _ := call(t, srv, "GET", cms+"/other", ""); resp.StatusCode != http.StatusNotFound {
		t.Errorf("object created despite the 406: %d", resp.StatusCode)
	}
	// With JSON also acceptable and protobuf not served, JSON it is.
	if !encoding.ProtobufServed {
		resp, _ := call(t, srv, "GET", cms+"/cm", "", "Accept", "application/vnd.kubernetes.protobuf, application/json")
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
			t.Errorf("protobuf and JSON: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
		}
	}
}

// namespace creates a namespace for one test, so that tests against the
// oracle (which share it) do not see each other's objects.
func namespace(t *testing.T, srv *target, name string) string {
	t.Helper()
	resp, b := call(t, srv, "POST", "/api/v1/namespaces", `{"metadata":{"name":"`+name+`"}}`)
	if resp.StatusCode != 201 {
		t.Fatalf("create namespace: %d %s", resp.StatusCode, b)
	}
	return "/api/v1/namespaces/" + name + "/configmaps"
}

// kube-apiserver compresses a response of 128 KiB or more for a client that
// accepts gzip, with Vary: Accept-Encoding (the test passes against the
// oracle with -oracle).
func TestWrite_Gzip(t *testing.T) {
	srv := kubeplayOrOracle(t)
	cms := namespace(t, srv, "repr-gzip")
	create := func(size int) {
		body, _ := json.Marshal(map[string]any{"metadata": map[string]any{"name": "big"}, "data": map[string]string{"k": strings.Repeat("a", size)}})
		if resp, b := call(t, srv, "POST", cms, string(body)); resp.StatusCode != 201 {
			t.Fatalf("create: %d %s", resp.StatusCode, b)
		}
	}
	// The list's size with a value of size bytes, to aim at the threshold
	// whatever the server's overhead.
	create(1000)
	_, b := call(t, srv, "GET", cms, "")
	overhead := len(b) - 1000
	for _, tc := range []struct {
		size int
		gzip bool
	}{
		{128 * 1024, false},
		{128*1024 + 1, true},
		{200 * 1024, true},
	} {
		// The resourceVersions grow by a digit now and then: aim again.
		var plain []byte
		for range 3 {
			call(t, srv, "DELETE", cms+"/big", "")
			create(tc.size - overhead)
			_, plain = call(t, srv, "GET", cms, "")
			if len(plain) == tc.size {
				break
			}
			overhead += len(plain) - tc.size
		}
		if len(plain) != tc.size {
			t.Fatalf("list of %d bytes, aimed at %d", len(plain), tc.size)
		}
		resp, b := call(t, srv, "GET", cms, "", "Accept-Encoding", "deflate, gzip")
		gzipped := resp.Header.Get("Content-Encoding") == "gzip"
		if gzipped != tc.gzip {
			t.Errorf("%d bytes: Content-Encoding %q", tc.size, resp.Header.Get("Content-Encoding"))
		}
		if gzipped && (resp.Header.Get("Vary") != "Accept-Encoding" || !bytes.HasPrefix(b, []byte{0x1f, 0x8b})) {
			t.Errorf("%d bytes: Vary %q, body starts %x", tc.size, resp.Header.Get("Vary"), b[:2])
		}
	}
	// Only a plain "gzip" token counts, as on the oracle.
	for _, ae := range []string{"", "gzip;q=0.8", "GZIP", "*"} {
		if resp, _ := call(t, srv, "GET", cms, "", "Accept-Encoding", ae); resp.Header.Get("Content-Encoding") != "" {
			t.Errorf("Accept-Encoding %q: gzipped", ae)
		}
	}
}

// The bytes are the oracle's for the same request.
func TestWrite_Pretty(t *testing.T) {
	srv := kubeplayOrOracle(t)
	want := "{\n  \"kind\": \"Status\",\n  \"apiVersion\": \"v1\",\n  \"metadata\": {},\n  \"status\": \"Failure\",\n  \"message\": \"configmaps \\\"nope\\\" not found\",\n  \"reason\": \"NotFound\",\n  \"details\": {\n    \"name\": \"nope\",\n    \"kind\": \"configmaps\"\n  },\n  \"code\": 404\n}"
	_, b := call(t, srv, "GET", "/api/v1/namespaces/default/configmaps/nope?pretty=true", "", "User-Agent", "kubectl")
	if string(b) != want {
		t.Errorf("pretty body\n%s\nwant\n%s", b, want)
	}
	_, b = call(t, srv, "GET", "/api/v1/namespaces/default/configmaps/nope", "", "User-Agent", "kubectl")
	if !bytes.HasSuffix(b, []byte("\"code\":404}\n")) {
		t.Errorf("compact body %q", b)
	}
}

// A Table page carries the list's metadata: the continue token and
// remainingItemCount of the same page as JSON (as kubectl get --chunk-size
// relies on).
func TestTable_Pages(t *testing.T) {
	srv := &target{URL: httptest.NewServer(newTestServer(t)).URL}
	cms := namespace(t, srv, "pages")
	for _, n := range []string{"a", "b", "c"} {
		call(t, srv, "POST", cms, `{"metadata":{"name":"`+n+`"}}`)
	}
	type page struct {
		Metadata struct {
			ResourceVersion    string `json:"resourceVersion"`
			Continue           string `json:"continue"`
			RemainingItemCount *int64 `json:"remainingItemCount"`
		}
		Rows []struct{ Cells []any }
	}
	get := func(path string, accept string) page {
		t.Helper()
		resp, b := call(t, srv, "GET", path, "", "Accept", accept)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", path, resp.StatusCode, b)
		}
		var p page
		if err := json.Unmarshal(b, &p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const table = "application/json;as=Table;g=meta.k8s.io;v=v1"
	list := get(cms+"?limit=2", "application/json")
	first := get(cms+"?limit=2", table)
	fm, lm := first.Metadata, list.Metadata
	if fm.ResourceVersion != lm.ResourceVersion || fm.Continue != lm.Continue || fm.Continue == "" ||
		fm.RemainingItemCount == nil || *fm.RemainingItemCount != 1 {
		t.Fatalf("table page metadata %+v, list's %+v", first.Metadata, list.Metadata)
	}
	if len(first.Rows) != 2 || first.Rows[0].Cells[0] != "a" || first.Rows[1].Cells[0] != "b" {
		t.Errorf("first page rows %v", first.Rows)
	}
	last := get(cms+"?limit=2&continue="+first.Metadata.Continue, table)
	if len(last.Rows) != 1 || last.Rows[0].Cells[0] != "c" || last.Metadata.Continue != "" || last.Metadata.ResourceVersion != first.Metadata.ResourceVersion {
		t.Errorf("last page %+v", last)
	}
}

// Ages are computed when the server answers, with its clock (Options.Now).
func TestTable_AgesUseServerClock(t *testing.T) {
	st, err := store.Open(t.Context(), ":memory:", store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	h, err := server.New(t.Context(), server.Options{Store: st, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	httpSrv := httptest.NewServer(h)
	defer httpSrv.Close()
	srv := &target{URL: httpSrv.URL}
	call(t, srv, "POST", "/api/v1/namespaces/default/configmaps", `{"metadata":{"name":"cm"}}`)
	for _, tc := range []struct {
		after time.Duration
		want  string
	}{{0, "0s"}, {90 * time.Second, "90s"}, {5*time.Minute + 3*time.Second, "5m3s"}, {49 * time.Hour, "2d1h"}} {
		now = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).Add(tc.after)
		_, b := call(t, srv, "GET", "/api/v1/namespaces/default/configmaps/cm", "", "Accept", "application/json;as=Table;g=meta.k8s.io;v=v1")
		var tbl struct{ Rows []struct{ Cells []any } }
		if err := json.Unmarshal(b, &tbl); err != nil || len(tbl.Rows) != 1 {
			t.Fatalf("%v: %s", err, b)
		}
		if got := tbl.Rows[0].Cells[2]; got != tc.want {
			t.Errorf("after %v: age %v, want %s", tc.after, got, tc.want)
		}
	}
}

// TestNegotiate_Discovery checks the media types of the discovery documents
// and /version against what kube-apiserver v1.35 answers, each by rules of
// its own, and
// kube-apiserver's order of preference among Accept's media types, which
// puts a concrete type before a wildcard whatever their qualities.
func TestNegotiate_Discovery(t *testing.T) {
	srv := &target{URL: httptest.NewServer(newTestServer(t)).URL}
	const (
		available = "406: Not Acceptable\n\nAvailable representations: " + servedTypes
		only      = "only the following media types are accepted: " + servedTypes
		versionNA = "406: Not Acceptable\n\nAvailable representations: application/json"
		table     = "application/json;as=Table;g=meta.k8s.io;v=v1"
		notAllow  = "the server does not allow this method on the requested resource"
	)
	for _, tc := range []struct {
		method, path, accept string
		code                 int
		mediaType            string
		want                 string // the Status message, or the kind answered
	}{
		{"GET", "/version", "application/json", 200, "application/json", ""},
		{"GET", "/version", "*/*", 200, "application/json", ""},
		{"GET", "/version", table, 200, "application/json", ""},
		{"GET", "/version", "application/json;q=0.1, application/yaml;q=0.2", 200, "application/json", ""},
		{"GET", "/version", "application/yaml", 406, "application/yaml", versionNA},
		{"GET", "/version", "application/cbor", 406, "application/json", versionNA},
		{"GET", "/version", "application/*", 406, "application/json", versionNA},
		{"GET", "/version", "application/*, application/yaml;q=0.1", 406, "application/yaml", versionNA},
		{"POST", "/version", "application/json", 405, "application/json", notAllow},
		{"GET", "/", "application/yaml", 200, "application/json", ""},
		{"GET", "/api", "application/foo", 406, "application/json", available},
		{"GET", "/api", "application/*", 406, "application/json", available},
		{"GET", "/api", "text/plain", 406, "application/json", available},
		{"GET", "/api", table, 406, "application/json", only},
		{"GET", "/api", table + ", application/yaml", 200, "application/yaml", "APIVersions"},
		{"GET", "/api", "*/*, application/yaml;q=0.1", 200, "application/yaml", "APIVersions"},
		{"GET", "/api", "application/yaml;q=0.5, */*", 200, "application/json", "APIVersions"},
		{"GET", "/api", "application/json;q=0, application/yaml;q=0.1", 200, "application/yaml", "APIVersions"},
		{"GET", "/api", "application/json;q=0", 200, "application/json", "APIVersions"},
		{"GET", "/api/v1", "application/foo", 406, "application/json", available},
		{"GET", "/api/v1", table, 406, "application/json", only},
		{"GET", "/api/v1", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList", 406, "application/json", only},
		{"POST", "/api/v1", "application/foo", 405, "application/json", notAllow},
		{"GET", "/apis/apps/v1", "application/*", 406, "application/json", available},
		{"GET", "/apis/apps/v1", "application/yaml", 200, "application/yaml", "APIResourceList"},
		{"GET", "/apis", "application/foo", 406, "application/json", only},
		{"GET", "/apis", "application/*", 200, "application/json", "APIGroupList"},
		{"GET", "/apis", table, 406, "application/json", only},
		{"GET", "/apis", table + ", application/yaml", 200, "application/yaml", "APIGroupList"},
		{"GET", "/apis", "application/cbor-seq", 406, "application/json", only},
		{"POST", "/apis/apps", "application/*", 200, "application/json", "APIGroup"},
		{"GET", "/apis/apps", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList", 406, "application/json", only},
		{"GET", "/apis/apps", "*/*;q=0.2, application/yaml;q=0.1", 200, "application/yaml", "APIGroup"},
		// The same order for resources, and no application/* there.
		{"GET", "/api/v1/namespaces", "*/*;q=0.2, application/yaml;q=0.1", 200, "application/yaml", "NamespaceList"},
		{"GET", "/api/v1/namespaces", "application/json;q=0.1, application/yaml;q=0.2, " + table + ";q=0.3", 200, "application/json", "Table"},
		{"GET", "/api/v1/namespaces", table + ";q=0.1, application/json;q=0.2", 200, "application/json", "NamespaceList"},
		{"GET", "/api/v1/namespaces", "application/*", 406, "application/json", available + ", " + servedStreamTypes},
	} {
		t.Run(tc.method+" "+tc.path+" "+tc.accept, func(t *testing.T) {
			resp, b := call(t, srv, tc.method, tc.path, "", "Accept", tc.accept)
			if resp.StatusCode != tc.code || resp.Header.Get("Content-Type") != tc.mediaType {
				t.Fatalf("got %d %s, want %d %s: %s", resp.StatusCode, resp.Header.Get("Content-Type"), tc.code, tc.mediaType, b)
			}
			if tc.mediaType == "application/yaml" {
				b, _ = yaml.YAMLToJSON(b)
			}
			var got struct{ Kind, Message string }
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatalf("%v: %s", err, b)
			}
			if tc.code != 200 && got.Message != tc.want || tc.code == 200 && got.Kind != tc.want {
				t.Errorf("got kind %q message %q, want %q", got.Kind, got.Message, tc.want)
			}
		})
	}
}
