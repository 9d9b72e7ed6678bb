package server_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
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

// readRecorder is a store that records the prefixes its Keys and List
// calls read.
type readRecorder struct {
	store.Store
	mu    sync.Mutex
	reads []string
}

func (r *readRecorder) Keys(ctx context.Context, prefix string) ([]string, error) {
	r.record(prefix)
	return r.Store.Keys(ctx, prefix)
}

func (r *readRecorder) List(ctx context.Context, prefix, startKey string, limit int, atRev int64) (store.ListResult, error) {
	r.record(prefix)
	return r.Store.List(ctx, prefix, startKey, limit, atRev)
}

func (r *readRecorder) record(prefix string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reads = append(r.reads, prefix)
}

// TestNew_stampedBootstrap: a server started on a store that StampBootstrap
// stamped, with the same settings, reads nothing: neither the bootstrap
// objects' keys, nor the local APIServices, nor CRDs; with other settings,
// or once something wrote to the store, it checks and repairs as on any
// store. StampBootstrap repairs what it finds missing, and then refuses to
// stamp; it refuses to stamp a store that holds a CRD.
func TestNew_stampedBootstrap(t *testing.T) {
	ctx := t.Context()
	st, err := store.Open(ctx, ":memory:", store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	srv, err := server.New(ctx, server.Options{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.StampBootstrap(ctx); err != nil {
		t.Fatal(err)
	}
	const apiServices = "/registry/apiregistration.k8s.io/apiservices/"
	checks := func(opts server.Options) []string {
		t.Helper()
		rec := &readRecorder{Store: st}
		opts.Store = rec
		if _, err := server.New(ctx, opts); err != nil {
			t.Fatal(err)
		}
		return rec.reads
	}
	if reads := checks(server.Options{}); len(reads) != 0 {
		t.Errorf("a start on a stamped store read %q", reads)
	}
	rc, err := server.ParseRuntimeConfig("batch/v1=false")
	if err != nil {
		t.Fatal(err)
	}
	if reads := checks(server.Options{RuntimeConfig: rc}); !slices.Contains(reads, apiServices) {
		t.Errorf("a start with other settings did not sync the local APIServices: read %q", reads)
	}
	if _, err := st.Get(ctx, apiServices+"v1.batch", 0); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("v1.batch after a start with batch/v1 off: %v, want it deleted", err)
	}

	srv, err = server.New(ctx, server.Options{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.StampBootstrap(ctx); err != nil {
		t.Fatal(err)
	}
	const deleted = "/registry/namespaces/kube-public"
	if _, _, err := st.Delete(ctx, deleted, 0); err != nil {
		t.Fatal(err)
	}
	if reads := checks(server.Options{}); !slices.Contains(reads, "/registry/namespaces/") {
		t.Errorf("a start after a write did not check the bootstrap objects: read %q", reads)
	}
	if _, err := st.Get(ctx, deleted, 0); err != nil {
		t.Errorf("%s was not made again: %v", deleted, err)
	}

	if _, _, err := st.Delete(ctx, deleted, 0); err != nil {
		t.Fatal(err)
	}
	if err := srv.StampBootstrap(ctx); !errors.Is(err, store.ErrConflict) {
		t.Errorf("StampBootstrap of a store it repaired: %v, want store.ErrConflict", err)
	}
	if _, err := st.Get(ctx, deleted, 0); err != nil {
		t.Errorf("StampBootstrap did not make %s again: %v", deleted, err)
	}
	if _, current, err := st.Stamp(ctx); err != nil || current {
		t.Errorf("Stamp after StampBootstrap repaired = current %v, %v; want not current", current, err)
	}

	if _, err := st.Create(ctx, "/registry/apiextensions.k8s.io/customresourcedefinitions/widgets.example.com", []byte("{}")); err != nil {
		t.Fatal(err)
	}
	if err := srv.StampBootstrap(ctx); err == nil || !strings.Contains(err.Error(), "CustomResourceDefinitions") {
		t.Errorf("StampBootstrap of a store with a CRD: %v, want an error about it", err)
	}
	if _, current, err := st.Stamp(ctx); err != nil || current {
		t.Errorf("Stamp after StampBootstrap of a store with a CRD = current %v, %v; want not current", current, err)
	}
}
