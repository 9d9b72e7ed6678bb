package server_test

import (
	"bytes"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// appsV1Hash is kube-apiserver v1.35.4's hash of /openapi/v3/apis/apps/v1;
// kubeplay embeds the documents that server serves, so it is kubeplay's too.
const appsV1Hash = "381D31779DB6B4B0BF7BC377E2308E6D8BA1201A54160FE54EEFF7651AFF4AE4636EC89448E9C23F5B326D77CB0858F1803A8A11FA260E0499E7FD18635A3305"

// TestOpenAPIV3_MatchesOracle replays /openapi/v3 requests recorded from
// kube-apiserver v1.35.4: status codes and headers must be the oracle's
// (Last-Modified and Expires name other instants, so only their presence is
// compared), and the index must list exactly the oracle's documents of what
// kubeplay serves, with the oracle's hashes: the documents are the same bytes.
func TestOpenAPIV3_MatchesOracle(t *testing.T) {
	h := newTestServer(t)
	hashed := "/openapi/v3/apis/apps/v1?hash=" + appsV1Hash
	etag := map[string]string{"If-None-Match": `"` + appsV1Hash + `"`}
	oracle, send := exchanges(t, h, []exchange{
		{Method: http.MethodGet, Path: "/openapi/v3"},
		{Method: http.MethodHead, Path: "/openapi/v3/apis/apps/v1"},
		{Method: http.MethodHead, Path: hashed},
		{Method: http.MethodGet, Path: "/openapi/v3/apis/apps/v1", Header: etag},
		{Method: http.MethodGet, Path: hashed, Header: etag},
		{Method: http.MethodGet, Path: "/openapi/v3/apis/apps/v1?hash=0123"},
		{Method: http.MethodHead, Path: "/openapi/v3/apis/apps"},
		{Method: http.MethodHead, Path: "/openapi/v3/api"},
		{Method: http.MethodHead, Path: "/openapi/v3/version"},
		{Method: http.MethodGet, Path: "/openapi/v3/apis/nope/v1"},
		{Method: http.MethodGet, Path: "/openapi/v3/api/v2"},
	})
	for i, want := range oracle {
		got := send(want)
		if i == 0 {
			checkIndex(t, h, got.Body, want.Body)
			got.Body = want.Body
		}
		checkExchange(t, got, want, true)
	}
}

type openAPIIndex struct {
	Paths map[string]struct {
		ServerRelativeURL string `json:"serverRelativeURL"`
	} `json:"paths"`
}

// checkIndex checks that kubeplay's index is the oracle's restricted to the
// paths kubeplay serves: /api, /apis, /version, each served group and group
// version (as its discovery lists them).
func checkIndex(t *testing.T, h http.Handler, got, oracle string) {
	t.Helper()
	var g, o openAPIIndex
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(oracle), &o); err != nil {
		t.Fatal(err)
	}
	served := []string{"api", "api/v1", "apis", "version"}
	var groups metav1.APIGroupList
	getJSON(t, h, "/apis", &groups)
	for _, grp := range groups.Groups {
		served = append(served, "apis/"+grp.Name)
		for _, v := range grp.Versions {
			served = append(served, "apis/"+v.GroupVersion)
		}
	}
	slices.Sort(served)
	if paths := slices.Sorted(maps.Keys(g.Paths)); !slices.Equal(paths, served) {
		t.Errorf("index lists %v, want %v", paths, served)
	}
	for path, entry := range g.Paths {
		if want := o.Paths[path].ServerRelativeURL; entry.ServerRelativeURL != want {
			t.Errorf("index: %s is at %s, oracle %s", path, entry.ServerRelativeURL, want)
		}
	}
	if strings.Contains(got, "\n") || !strings.HasPrefix(got, `{"paths":{"api":`) {
		t.Errorf("index is not compact JSON with sorted keys like the oracle's: %.80s", got)
	}
}

// TestOpenAPIV2_MatchesOracle replays /openapi/v2 requests recorded from
// kube-apiserver v1.35.4: the same document in JSON and protobuf (bodies
// compared by hash), negotiated, revalidated and refused as the oracle does.
func TestOpenAPIV2_MatchesOracle(t *testing.T) {
	const protobuf = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
	accept := func(v string) map[string]string { return map[string]string{"Accept": v} }
	requests := []exchange{
		{Method: http.MethodGet, Path: "/openapi/v2"},
		{Method: http.MethodGet, Path: "/openapi/v2", Header: accept(protobuf)},
		{Method: http.MethodHead, Path: "/openapi/v2", Header: accept(protobuf + ", application/json")},
		{Method: http.MethodHead, Path: "/openapi/v2", Header: accept("application/json, " + protobuf)},
		{Method: http.MethodHead, Path: "/openapi/v2", Header: accept("application/json;q=0.5, " + protobuf)},
		{Method: http.MethodHead, Path: "/openapi/v2", Header: accept(protobuf + ";q=0, application/json")},
		{Method: http.MethodHead, Path: "/openapi/v2", Header: accept(protobuf + ";q=0")},
		{Method: http.MethodHead, Path: "/openapi/v2", Header: accept("application/com.github.proto-openapi.spec.v2.v1.0+protobuf")},
		{Method: http.MethodHead, Path: "/openapi/v2", Header: accept("*/*")},
		{Method: http.MethodHead, Path: "/openapi/v2", Header: accept("application/*")},
		{Method: http.MethodGet, Path: "/openapi/v2", Header: accept("application/yaml")},
		{Method: http.MethodGet, Path: "/openapi/v2", Header: accept("text/html")},
		{Method: http.MethodHead, Path: "/openapi/v2?hash=x"},
		{Method: http.MethodGet, Path: "/openapi/v2/"},
		{Method: http.MethodGet, Path: "/openapi/v3/"},
		{Method: http.MethodGet, Path: "/openapi/v3/apis/apps/v1/"},
		{Method: http.MethodGet, Path: "/openapi/v3/apis//apps/v1"},
		{Method: http.MethodGet, Path: "/openapi"},
		{Method: http.MethodGet, Path: "/openapi/v4"},
		// Compressed when asked for: JSON and protobuf; not a HEAD, nor for gzip;q=0.
		{Method: http.MethodGet, Path: "/openapi/v2", Header: map[string]string{"Accept-Encoding": "gzip"}},
		{Method: http.MethodGet, Path: "/openapi/v2", Header: map[string]string{"Accept-Encoding": "deflate, gzip", "Accept": protobuf}},
		{Method: http.MethodHead, Path: "/openapi/v2", Header: map[string]string{"Accept-Encoding": "gzip"}},
		{Method: http.MethodGet, Path: "/openapi/v2", Header: map[string]string{"Accept-Encoding": "gzip;q=0"}},
	}
	oracle, send := exchanges(t, newTestServer(t), requests)
	etag := map[string]string{"If-None-Match": oracle[0].ResponseHeader["Etag"]}
	oracle = append(oracle, exchange{Method: http.MethodGet, Path: "/openapi/v2", Header: etag, Code: http.StatusNotModified,
		ResponseHeader: map[string]string{"Cache-Control": "no-cache, private", "Etag": etag["If-None-Match"], "Vary": "Accept-Encoding"}})
	for _, want := range oracle {
		checkExchange(t, send(want), want, true)
	}
}

// TestOpenAPIV2_CustomResources checks /openapi/v2 with custom resources
// against kube-apiserver v1.35.4 with the same CRDs: their definitions, and
// the whole document, byte for byte in JSON (its ETag is its SHA-512) and in
// protobuf. Without CRDs, it is the recorded document again.
func TestOpenAPIV2_CustomResources(t *testing.T) {
	raw, err := os.ReadFile("testdata/openapi/v2-crds.json")
	if err != nil {
		t.Fatal(err)
	}
	var golden struct {
		CRDs           []json.RawMessage          `json:"crds"`
		ETag           string                     `json:"etag"`
		ProtobufSHA512 string                     `json:"protobufSHA512"`
		Definitions    map[string]json.RawMessage `json:"definitions"`
	}
	if err := json.Unmarshal(raw, &golden); err != nil {
		t.Fatal(err)
	}
	h := newTestServer(t)
	v2 := func(accept string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, "/openapi/v2", nil)
		req.Header.Set("Accept", accept)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			t.Fatalf("GET /openapi/v2 (%s): %d %s", accept, w.Code, w.Body)
		}
		return w
	}
	recorded := v2("application/json").Header().Get("Etag")
	var names []string
	for _, crd := range golden.CRDs {
		if w := serve(h, http.MethodPost, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", "application/json", string(crd)); w.Code != http.StatusCreated {
			t.Fatalf("CRD: %d %s", w.Code, w.Body)
		}
		var md struct{ Metadata struct{ Name string } }
		_ = json.Unmarshal(crd, &md)
		names = append(names, md.Metadata.Name)
	}
	w := v2("application/json")
	var doc struct {
		Definitions map[string]json.RawMessage `json:"definitions"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	for name, want := range golden.Definitions {
		var compact bytes.Buffer
		if err := json.Compact(&compact, want); err != nil {
			t.Fatal(err)
		}
		if got := doc.Definitions[name]; !bytes.Equal(got, compact.Bytes()) {
			t.Errorf("definition %s:\n got: %s\nwant: %s", name, got, compact.Bytes())
		}
	}
	if got := w.Header().Get("Etag"); got != golden.ETag {
		t.Errorf("JSON document: ETag %s, want %s", got, golden.ETag)
	}
	pb := v2("application/com.github.proto-openapi.spec.v2@v1.0+protobuf")
	if sum := sha512.Sum512(pb.Body.Bytes()); hex.EncodeToString(sum[:]) != golden.ProtobufSHA512 {
		t.Errorf("protobuf document differs from the oracle's (%d bytes)", pb.Body.Len())
	}
	for _, name := range names {
		if w := serve(h, http.MethodDelete, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"+name, "", ""); w.Code != http.StatusOK {
			t.Fatalf("delete %s: %d %s", name, w.Code, w.Body)
		}
	}
	if got := v2("application/json").Header().Get("Etag"); got != recorded {
		t.Errorf("without CRDs: ETag %s, want the recorded document's %s", got, recorded)
	}
}
