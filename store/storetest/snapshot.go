package storetest

import (
	"context"
	"testing"
)

// Snapshotter is a store that can copy itself to a file (store.DB).
type Snapshotter interface {
	Snapshot(ctx context.Context, path string) error
}

// testSnapshot: a snapshot opened as a store has the data, history,
// revisions, horizon and stamp the store had when it was taken, and writes made
// after it do not reach it.
func (s suite) testSnapshot(t *testing.T) {
	if s.openAt == nil {
		t.Skip("no WithPath option: this store cannot be reopened")
	}
	st := s.openAt(t, t.TempDir()+"/store.db")
	t.Cleanup(func() { st.Close() })
	snap, ok := st.(Snapshotter)
	if !ok {
		t.Skip("the store takes no snapshots")
	}
	a1 := mustCreate(t, st, "/a", "v1")
	a2 := mustUpdate(t, st, "/a", "v2", a1)
	wantErr(t, "Compact", st.Compact(t.Context(), a1), nil)
	b1 := mustCreate(t, st, "/b", "v1")
	wantErr(t, "SetStamp", st.SetStamp(t.Context(), 3, b1), nil)
	path := t.TempDir() + "/snapshot.db"
	wantErr(t, "Snapshot", snap.Snapshot(t.Context(), path), nil)
	mustUpdate(t, st, "/a", "v3", a2)

	cp := s.openAt(t, path)
	t.Cleanup(func() { cp.Close() })
	if cur := currentRev(t, cp); cur != b1 {
		t.Fatalf("CurrentRevision of the snapshot = %d, want %d", cur, b1)
	}
	if horizon, err := cp.CompactedRevision(t.Context()); err != nil || horizon != a1 {
		t.Fatalf("CompactedRevision of the snapshot = %d, %v; want %d", horizon, err, a1)
	}
	if stamp, current, err := cp.Stamp(t.Context()); err != nil || stamp != 3 || !current {
		t.Fatalf("Stamp of the snapshot = %d, %v, %v; want 3, true", stamp, current, err)
	}
	wantKV(t, "Get", mustGet(t, cp, "/a", 0), kv("/a", "v2", a1, a2))
	wantKV(t, "Get at the horizon", mustGet(t, cp, "/a", a1), kv("/a", "v1", a1, a1))
	if rev := mustCreate(t, cp, "/c", "v1"); rev != b1+1 {
		t.Fatalf("first write to the snapshot got revision %d, want %d", rev, b1+1)
	}
	if err := snap.Snapshot(t.Context(), path); err == nil {
		t.Fatalf("Snapshot over an existing file succeeded")
	}
}
