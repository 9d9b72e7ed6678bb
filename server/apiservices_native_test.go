//go:build !js

// A data directory opened again needs a database file, which GOOS=js
// (SQLite WASM under Node) does not have.

package server_test

import (
	"maps"
	"net/http"
	"path/filepath"
	"slices"
	"testing"

	"kubeplay/server"
	"kubeplay/store"
)

// TestLocalAPIServices_Restart opens a data directory again with other
// switches, as kube-apiserver v1.35 restarted on its etcd with another
// --runtime-config: the APIServices of group versions switched on are made,
// those it registered itself for group versions switched off are deleted
// (one that lost its label stays), and a changed spec is put back.
func TestLocalAPIServices_Restart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kubeplay.db")
	open := func(opts server.Options) http.Handler {
		st, err := store.Open(t.Context(), path, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		opts.Store = st
		return newTestServerWith(t, opts)
	}
	first := open(server.Options{Version: 20})
	before := checkAPIServicesFollowDiscovery(t, first, "v1.20")
	for _, patch := range []struct{ name, body string }{
		{"v1.apps", `{"spec":{"versionPriority":16}}`},
		{"v1beta1.extensions", `{"metadata":{"labels":{"kube-aggregator.kubernetes.io/automanaged":null}}}`},
	} {
		if rec := serve(first, http.MethodPatch, "/apis/apiregistration.k8s.io/v1/apiservices/"+patch.name, "application/merge-patch+json", patch.body); rec.Code != http.StatusOK {
			t.Fatalf("patch %s: %d %s", patch.name, rec.Code, rec.Body)
		}
	}

	rc, err := server.ParseRuntimeConfig("batch/v1=false")
	if err != nil {
		t.Fatal(err)
	}
	again := open(server.Options{RuntimeConfig: rc})
	after := apiServices(t, again)
	if _, ok := after["v1beta1.extensions"]; !ok {
		t.Error("v1beta1.extensions, no longer labelled, deleted")
	}
	delete(after, "v1beta1.extensions")
	if got, want := slices.Sorted(maps.Keys(after)), discoveredAPIServiceNames(t, again); !slices.Equal(got, want) {
		t.Errorf("APIServices %v, discovery %v", got, want)
	}
	for _, name := range []string{"v1.batch", "v1beta1.policy", "v1beta1.rbac.authorization.k8s.io"} {
		if _, ok := after[name]; ok {
			t.Errorf("%s kept", name)
		}
	}
	if s := after["v1.resource.k8s.io"].Spec; s.GroupPriorityMinimum != 16200 || s.VersionPriority != 21 {
		t.Errorf("v1.resource.k8s.io spec = %+v", s)
	}
	apps := after["v1.apps"]
	if apps.Metadata.UID != before["v1.apps"].Metadata.UID || apps.Spec.VersionPriority != 15 {
		t.Errorf("v1.apps = %+v, want the same object with versionPriority 15 again", apps)
	}
}
