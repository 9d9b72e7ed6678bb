package server_test

import (
	"testing"

	"kubeplay/server"
	"kubeplay/store"
)

// TestNew_bootstrap: a server started on a store that holds the bootstrap
// objects writes nothing; one started on a store where some were deleted
// makes those again, and only those.
func TestNew_bootstrap(t *testing.T) {
	ctx := t.Context()
	st, err := store.Open(ctx, ":memory:", store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := server.New(ctx, server.Options{Store: st}); err != nil {
		t.Fatal(err)
	}
	created, err := st.CurrentRevision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := server.New(ctx, server.Options{Store: st}); err != nil {
		t.Fatal(err)
	}
	if rev, err := st.CurrentRevision(ctx); err != nil || rev != created {
		t.Errorf("a second start wrote: revision %d, then %d (%v)", created, rev, err)
	}

	deleted := []string{"/registry/namespaces/kube-public", "/registry/clusterroles/admin",
		"/registry/rolebindings/kube-system/system:controller:bootstrap-signer"}
	for _, key := range deleted {
		if _, _, err := st.Delete(ctx, key, 0); err != nil {
			t.Fatalf("delete %s: %v", key, err)
		}
	}
	before, err := st.CurrentRevision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := server.New(ctx, server.Options{Store: st}); err != nil {
		t.Fatal(err)
	}
	for _, key := range deleted {
		if kv, err := st.Get(ctx, key, 0); err != nil {
			t.Errorf("%s was not made again: %v", key, err)
		} else if kv.ModRevision <= before {
			t.Errorf("%s: revision %d, not after %d", key, kv.ModRevision, before)
		}
	}
	if rev, err := st.CurrentRevision(ctx); err != nil || rev != before+int64(len(deleted)) {
		t.Errorf("revision %d after making %d objects again from %d (%v)", rev, len(deleted), before, err)
	}
}
