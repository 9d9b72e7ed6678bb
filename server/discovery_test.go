package server_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	for _, want := range []string{"configmaps", "secrets", "namespaces", "pods", "services", "serviceaccounts", "events", "nodes", "persistentvolumeclaims", "namespaces/finalize"} {
		if !names[want] {
			t.Errorf("/api/v1 lacks %s", want)
		}
	}
	for _, virtual := range []string{"bindings", "componentstatuses"} {
		if names[virtual] {
			t.Errorf("/api/v1 lists %s, which kubeplay does not implement", virtual)
		}
	}
}
