package storetest

import (
	"testing"

	"kubeplay/store"
)

// testStamp: a stamp is current from SetStamp until the next write, whatever
// that write is; neither a compaction, a failed write nor a reopen ends it.
// SetStamp for a revision other than the current one fails.
func (s suite) testStamp(t *testing.T) {
	ctx := t.Context()
	want := func(st store.Store, what string, stamp int64, current bool) {
		t.Helper()
		got, cur, err := st.Stamp(ctx)
		if err != nil || got != stamp || cur != current {
			t.Fatalf("Stamp %s = %d, %v, %v; want %d, %v", what, got, cur, err, stamp, current)
		}
	}
	st := s.new(t)
	want(st, "of a new store", 0, false)
	wantErr(t, "SetStamp", st.SetStamp(ctx, 7, 0), nil)
	want(st, "after SetStamp", 7, true)
	a1 := mustCreate(t, st, "/a", "v1")
	want(st, "after a create", 7, false)
	wantErr(t, "SetStamp for an old revision", st.SetStamp(ctx, 8, a1-1), store.ErrConflict)
	want(st, "after a failed SetStamp", 7, false)
	wantErr(t, "SetStamp", st.SetStamp(ctx, -8, a1), nil)
	want(st, "after SetStamp again", -8, true)
	_, err := st.Create(ctx, "/a", []byte("v2"))
	wantErr(t, "Create of an existing key", err, store.ErrExists)
	wantErr(t, "Compact", st.Compact(ctx, a1), nil)
	want(st, "after a failed create and a compaction", -8, true)
	for _, write := range []func(){
		func() { mustUpdate(t, st, "/a", "v2", 0) },
		func() { mustDelete(t, st, "/a", 0) },
		func() {
			if _, err := st.CreateAll(ctx, []store.KeyValue{{Key: "/b", Value: []byte("v1")}}); err != nil {
				t.Fatalf("CreateAll: %v", err)
			}
		},
	} {
		wantErr(t, "SetStamp", st.SetStamp(ctx, 9, currentRev(t, st)), nil)
		write()
		want(st, "after a write", 9, false)
	}

	if s.openAt == nil {
		return
	}
	path := t.TempDir() + "/store.db"
	st = s.openAt(t, path)
	wantErr(t, "SetStamp", st.SetStamp(ctx, 5, mustCreate(t, st, "/a", "v1")), nil)
	if err := st.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	st = s.openAt(t, path)
	want(st, "after reopen", 5, true)
	mustCreate(t, st, "/b", "v1")
	if err := st.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	st = s.openAt(t, path)
	t.Cleanup(func() { st.Close() })
	want(st, "after a write and reopen", 5, false)
}
