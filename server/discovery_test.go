package server_test

import (
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"kubeplay/server"
	"kubeplay/server/encoding"
	"kubeplay/store"
)

// The discovery documents in testdata/oracle/discovery were fetched from
// kube-apiserver v1.35.4 (GET /api, /apis, /api/v1, /apis/<group>/<version>).

func getJSON(t *testing.T, h http.Handler, path string, into any) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body)
	}
	if err := json.Unmarshal(rec.Body.Bytes(), into); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
}

func readOracle(t *testing.T, name string, into any) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "oracle", "discovery", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, into); err != nil {
		t.Fatal(err)
	}
}

func TestDiscovery_MatchesOracle(t *testing.T) {
	h := newTestServer(t)

	var groups, oracleGroups metav1.APIGroupList
	getJSON(t, h, "/apis", &groups)
	readOracle(t, "apis.json", &oracleGroups)
	// kubeplay serves a subset of the group versions; those it serves must
	// be listed in the oracle's order with the oracle's preferred version.
	served := map[string]bool{}
	servedVersions := map[string]bool{}
	for _, g := range groups.Groups {
		served[g.Name] = true
		for _, v := range g.Versions {
			servedVersions[v.GroupVersion] = true
		}
	}
	var want []metav1.APIGroup
	for _, g := range oracleGroups.Groups {
		if !served[g.Name] {
			continue
		}
		var versions []metav1.GroupVersionForDiscovery
		for _, v := range g.Versions {
			if servedVersions[v.GroupVersion] {
				versions = append(versions, v)
			}
		}
		g.Versions = versions
		want = append(want, g)
	}
	if !reflect.DeepEqual(groups.Groups, want) {
		t.Errorf("/apis groups differ from the oracle's (restricted to served group versions)\n got: %+v\nwant: %+v", groups.Groups, want)
	}
	for _, required := range []string{"apps", "batch", "coordination.k8s.io", "rbac.authorization.k8s.io", "networking.k8s.io", "policy", "events.k8s.io"} {
		if !served[required] {
			t.Errorf("group %s is not served", required)
		}
	}
	// A group served in several versions lists them all.
	for _, required := range []string{"autoscaling/v1", "autoscaling/v2"} {
		if !servedVersions[required] {
			t.Errorf("group version %s is not served", required)
		}
	}

	var core metav1.APIVersions
	getJSON(t, h, "/api", &core)
	if !reflect.DeepEqual(core.Versions, []string{"v1"}) || core.Kind != "APIVersions" {
		t.Errorf("/api = %+v", core)
	}

	paths := []string{"/api/v1"}
	for _, g := range groups.Groups {
		for _, v := range g.Versions {
			paths = append(paths, "/apis/"+v.GroupVersion)
		}
	}
	for _, path := range paths {
		t.Run(path, func(t *testing.T) {
			var got, oracle metav1.APIResourceList
			getJSON(t, h, path, &got)
			readOracle(t, strings.ReplaceAll(strings.TrimPrefix(path, "/"), "/", "__")+".json", &oracle)
			if got.GroupVersion != oracle.GroupVersion || got.Kind != "APIResourceList" {
				t.Errorf("header: %s %s, oracle %s", got.Kind, got.GroupVersion, oracle.GroupVersion)
			}
			byName := map[string]metav1.APIResource{}
			for _, r := range oracle.APIResources {
				byName[r.Name] = r
			}
			for _, r := range got.APIResources {
				want, ok := byName[r.Name]
				if !ok {
					t.Errorf("%s: not served by the oracle", r.Name)
					continue
				}
				if !reflect.DeepEqual(r, want) {
					t.Errorf("%s:\n got: %+v\nwant: %+v", r.Name, r, want)
				}
			}
		})
	}
}

func TestDiscovery_CoreResources(t *testing.T) {
	h := newTestServer(t)
	var list metav1.APIResourceList
	getJSON(t, h, "/api/v1", &list)
	names := map[string]bool{}
	for _, r := range list.APIResources {
		names[r.Name] = true
	}
	// Everything the oracle lists: client-go's discovery reports what is
	// missing as an error.
	var oracle metav1.APIResourceList
	readOracle(t, "api__v1.json", &oracle)
	for _, want := range oracle.APIResources {
		if !names[want.Name] {
			t.Errorf("/api/v1 lacks %s", want.Name)
		}
	}
}

// protobufOrJSON is the media type a client asking for aggregated discovery
// in protobuf, then for JSON, is answered in: protobuf natively, JSON in
// the browser build.
var protobufOrJSON = map[bool]string{true: protobufAggregatedV2, false: "application/json"}[encoding.ProtobufServed]

const (
	aggregatedV2         = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
	protobufAggregatedV2 = "application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
)

// kubectlDiscoveryAccept is what kubectl v1.32 and client-go v0.35 send to
// /api and /apis (seen with kubectl -v=8 against kube-apiserver v1.35.4).
const kubectlDiscoveryAccept = aggregatedV2 + ",application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json"

func get(t *testing.T, h http.Handler, method, path string, header http.Header) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, path, nil)
	for k, v := range header {
		req.Header[k] = v
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// TestAggregatedDiscovery_MatchesOracle compares the aggregated documents of
// /api and /apis with kube-apiserver's (testdata/oracle/discovery/
// aggregated_*.json, fetched with Accept: aggregatedV2). kubeplay serves
// fewer groups, versions, resources and subresources (no CRDs, API services,
// virtual review resources; only the subresources it
// implements), so the test checks that what it lists is the oracle's entry,
// field for field and in the oracle's order, with the subresources it does
// not serve left out; and that it lists exactly the resources of its legacy
// discovery documents, which TestDiscovery_MatchesOracle checks.
func TestAggregatedDiscovery_MatchesOracle(t *testing.T) {
	h := newTestServer(t)
	for _, tc := range []struct{ path, oracle string }{{"/api", "aggregated_api.json"}, {"/apis", "aggregated_apis.json"}} {
		t.Run(tc.path, func(t *testing.T) {
			rec := get(t, h, http.MethodGet, tc.path, http.Header{"Accept": {kubectlDiscoveryAccept}})
			if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != aggregatedV2 {
				t.Fatalf("%d %q", rec.Code, rec.Header().Get("Content-Type"))
			}
			var got, oracle map[string]any
			if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			readOracle(t, tc.oracle, &oracle)
			for _, k := range []string{"kind", "apiVersion", "metadata"} {
				if !reflect.DeepEqual(got[k], oracle[k]) {
					t.Errorf("%s = %v, oracle %v", k, got[k], oracle[k])
				}
			}
			want := restrictAggregated(t, oracle, got)
			if !reflect.DeepEqual(got["items"], want) {
				g, _ := json.Marshal(got["items"])
				w, _ := json.Marshal(want)
				t.Errorf("items differ from the oracle's (restricted to what kubeplay serves)\n got: %s\nwant: %s", g, w)
			}
			// Every resource of the legacy documents, and only those.
			for _, item := range got["items"].([]any) {
				name, _ := item.(map[string]any)["metadata"].(map[string]any)["name"].(string)
				for _, v := range item.(map[string]any)["versions"].([]any) {
					version := v.(map[string]any)["version"].(string)
					path := "/apis/" + name + "/" + version
					if name == "" {
						path = "/api/" + version
					}
					var legacy metav1.APIResourceList
					getJSON(t, h, path, &legacy)
					var legacyNames, names []string
					for _, r := range legacy.APIResources {
						legacyNames = append(legacyNames, r.Name)
					}
					for _, r := range v.(map[string]any)["resources"].([]any) {
						res := r.(map[string]any)
						names = append(names, res["resource"].(string))
						for _, sub := range asList(res["subresources"]) {
							names = append(names, res["resource"].(string)+"/"+sub.(map[string]any)["subresource"].(string))
						}
					}
					slices.Sort(legacyNames)
					slices.Sort(names)
					if !slices.Equal(names, legacyNames) {
						t.Errorf("%s: aggregated lists %v, legacy %v", path, names, legacyNames)
					}
				}
			}
		})
	}
}

func asList(v any) []any { l, _ := v.([]any); return l }

// restrictAggregated returns the oracle's items limited to the groups,
// versions, resources and subresources got lists; an entry of got that the
// oracle lacks is kept as null so that the comparison fails on it.
func restrictAggregated(t *testing.T, oracle, got map[string]any) []any {
	t.Helper()
	key := func(m any, field string) string {
		s, _ := m.(map[string]any)[field].(string)
		return s
	}
	groupName := func(item any) string { return key(item.(map[string]any)["metadata"], "name") }
	index := func(list []any, name func(any) string) map[string]any {
		out := map[string]any{}
		for _, e := range list {
			out[name(e)] = e
		}
		return out
	}
	// filter keeps the entries of want whose names got lists, in want's
	// order, and appends nil for each name of got that want lacks.
	filter := func(want, got []any, name func(any) string, each func(w, g any) any) []any {
		gotIndex, wantIndex := index(got, name), index(want, name)
		out := []any{}
		for _, w := range want {
			if g, ok := gotIndex[name(w)]; ok {
				out = append(out, each(w, g))
			}
		}
		for _, g := range got {
			if _, ok := wantIndex[name(g)]; !ok {
				out = append(out, nil)
			}
		}
		return out
	}
	byField := func(field string) func(any) string { return func(m any) string { return key(m, field) } }
	return filter(asList(oracle["items"]), asList(got["items"]), groupName, func(w, g any) any {
		wg, gg := maps.Clone(w.(map[string]any)), g.(map[string]any)
		wg["versions"] = filter(asList(wg["versions"]), asList(gg["versions"]), byField("version"), func(w, g any) any {
			wv, gv := maps.Clone(w.(map[string]any)), g.(map[string]any)
			wv["resources"] = filter(asList(wv["resources"]), asList(gv["resources"]), byField("resource"), func(w, g any) any {
				wr := maps.Clone(w.(map[string]any))
				subs := filter(asList(wr["subresources"]), asList(g.(map[string]any)["subresources"]), byField("subresource"), func(w, _ any) any { return w })
				if len(subs) == 0 {
					delete(wr, "subresources")
				} else {
					wr["subresources"] = subs
				}
				return wr
			})
			return wv
		})
		return wg
	})
}

// TestAggregatedDiscovery_Negotiation checks which Accept headers get the
// aggregated document, with the headers kube-apiserver v1.35.4 answers with
// (recorded with curl): Cache-Control public, an ETag, Vary: Accept, 304
// for a matching If-None-Match, and the document for any method.
func TestAggregatedDiscovery_Negotiation(t *testing.T) {
	h := newTestServer(t)
	const yamlV2 = "application/yaml;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
	for _, tc := range []struct {
		accept, contentType string
	}{
		{kubectlDiscoveryAccept, aggregatedV2},
		{aggregatedV2 + ";profile=nopeer", aggregatedV2},
		{"application/json, " + aggregatedV2, aggregatedV2},
		{"application/json;q=0.5, " + aggregatedV2, aggregatedV2},
		{aggregatedV2 + ";q=0", aggregatedV2},
		{"application/json;as=APIGroupDiscoveryList;v=v2;g=apidiscovery.k8s.io", aggregatedV2},
		{"application/*;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList", aggregatedV2},
		{yamlV2, yamlV2},
		{"application/json", "application/json"},
		{"*/*", "application/json"},
		{"", "application/json"},
		// The protobuf form natively (TestProtobuf_AggregatedDiscovery);
		// the browser build serves no protobuf, so the client's next choice
		// applies.
		{protobufAggregatedV2 + ", application/json", protobufOrJSON},
	} {
		for _, path := range []string{"/api", "/apis"} {
			rec := get(t, h, http.MethodGet, path, http.Header{"Accept": {tc.accept}})
			if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != tc.contentType {
				t.Errorf("GET %s, Accept %q: %d %q, want 200 %q", path, tc.accept, rec.Code, rec.Header().Get("Content-Type"), tc.contentType)
			}
			aggregated := tc.contentType != "application/json"
			if got := rec.Header().Get("Cache-Control"); aggregated != (got == "public") {
				t.Errorf("GET %s, Accept %q: Cache-Control %q", path, tc.accept, got)
			}
			if got := rec.Header().Get("Vary"); aggregated != (got == "Accept") {
				t.Errorf("GET %s, Accept %q: Vary %q", path, tc.accept, got)
			}
		}
	}

	accept := http.Header{"Accept": {aggregatedV2}}
	first := get(t, h, http.MethodGet, "/apis", accept)
	etag := first.Header().Get("Etag")
	if !regexp.MustCompile(`^"[0-9A-F]{128}"$`).MatchString(etag) {
		t.Fatalf("Etag %q, want a quoted upper-case SHA-512 like kube-apiserver's", etag)
	}
	if other := get(t, h, http.MethodGet, "/api", accept).Header().Get("Etag"); other == etag {
		t.Errorf("/api and /apis share the Etag %s", etag)
	}

	notModified := get(t, h, http.MethodGet, "/apis", http.Header{"Accept": {aggregatedV2}, "If-None-Match": {etag}})
	if notModified.Code != http.StatusNotModified || notModified.Body.Len() != 0 {
		t.Errorf("If-None-Match: %d %q", notModified.Code, notModified.Body)
	}
	wantHeader := http.Header{"Cache-Control": {"public"}, "Etag": {etag}, "Vary": {"Accept"}}
	if !reflect.DeepEqual(notModified.Header(), wantHeader) {
		t.Errorf("304 headers %v, want %v", notModified.Header(), wantHeader)
	}
	// kube-apiserver compares the header with its ETag as a whole string.
	for _, inm := range []string{`"x", ` + etag, "*", "W/" + etag} {
		if rec := get(t, h, http.MethodGet, "/apis", http.Header{"Accept": {aggregatedV2}, "If-None-Match": {inm}}); rec.Code != http.StatusOK {
			t.Errorf("If-None-Match %s: %d, want 200", inm, rec.Code)
		}
	}
	for _, method := range []string{http.MethodPost, http.MethodPut, http.MethodDelete} {
		if rec := get(t, h, method, "/apis", accept); rec.Code != http.StatusOK || rec.Body.String() != first.Body.String() {
			t.Errorf("%s /apis: %d, want 200 and the document", method, rec.Code)
		}
	}
	if rec := get(t, h, http.MethodHead, "/apis", accept); rec.Code != http.StatusOK || rec.Body.Len() != 0 || rec.Header().Get("Etag") != etag {
		t.Errorf("HEAD /apis: %d, %d bytes, Etag %q", rec.Code, rec.Body.Len(), rec.Header().Get("Etag"))
	}
}

// TestRootPaths checks GET / against kube-apiserver v1.35.4's answer: kubeplay
// lists a path of the oracle's list exactly when it serves it (answers a GET
// with 200), and no path the oracle does not list.
func TestRootPaths(t *testing.T) {
	h := newTestServer(t)
	oracle, send := exchanges(t, h, []exchange{
		{Method: http.MethodGet, Path: "/"},
		{Method: http.MethodPost, Path: "/"},
		{Method: http.MethodGet, Path: "/index.html"},
	})
	var want struct{ Paths []string }
	if err := json.Unmarshal([]byte(oracle[0].Body), &want); err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, p := range want.Paths {
		listed[p] = true
	}
	for i, e := range oracle {
		got := send(e)
		checkExchange(t, got, e, false)
		var paths struct{ Paths []string }
		if err := json.Unmarshal([]byte(got.Body), &paths); err != nil {
			t.Fatalf("%s %s: %v", e.Method, e.Path, err)
		}
		if !slices.IsSorted(paths.Paths) {
			t.Errorf("%s %s: paths not sorted", e.Method, e.Path)
		}
		if i > 0 {
			continue
		}
		ours := map[string]bool{}
		for _, p := range paths.Paths {
			ours[p] = true
			if !listed[p] {
				t.Errorf("lists %s, which the oracle does not", p)
			}
		}
		for _, p := range want.Paths {
			// "/openapi/v3/" names a subtree; GET of the bare prefix is 404.
			served := p == "/openapi/v3/" || get(t, h, http.MethodGet, p, nil).Code == http.StatusOK
			if served != ours[p] {
				t.Errorf("%s: listed %v, but GET answers %d", p, ours[p], get(t, h, http.MethodGet, p, nil).Code)
			}
		}
	}
}

// TestDiscovery_Methods replays other methods than GET on the discovery
// documents, recorded from kube-apiserver v1.35.4: status codes and headers
// must be the oracle's, and so must bodies other than the documents.
func TestDiscovery_Methods(t *testing.T) {
	var requests []exchange
	for _, path := range []string{"/api", "/apis", "/apis/apps", "/api/v1", "/apis/apps/v1"} {
		for _, method := range []string{http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodHead} {
			requests = append(requests, exchange{Method: method, Path: path})
		}
	}
	oracle, send := exchanges(t, newTestServer(t), requests)
	for _, want := range oracle {
		checkExchange(t, send(want), want, want.Code != http.StatusOK)
	}
}

// BenchmarkAggregatedDiscovery measures GET /apis in aggregated form, which
// every kubectl command without a fresh cache sends; the document is built
// and hashed per request.
func BenchmarkAggregatedDiscovery(b *testing.B) {
	st, err := store.Open(b.Context(), ":memory:", store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	h, err := server.New(b.Context(), server.Options{Store: st})
	if err != nil {
		b.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodGet, "/apis", nil)
	req.Header.Set("Accept", kubectlDiscoveryAccept)
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatal(rec.Code)
		}
	}
}
