package storetest

import (
	"testing"

	"kubeplay/store"
)

func (s suite) testCreate(t *testing.T) {
	t.Run("new key", func(t *testing.T) {
		st := s.new(t)
		rev := mustCreate(t, st, "/a", "v1")
		wantKV(t, "Get", mustGet(t, st, "/a", 0), kv("/a", "v1", rev, rev))
	})
	t.Run("existing key", func(t *testing.T) {
		st := s.new(t)
		rev := mustCreate(t, st, "/a", "v1")
		_, err := st.Create(t.Context(), "/a", []byte("v2"))
		wantErr(t, "second Create", err, store.ErrExists)
		wantKV(t, "Get", mustGet(t, st, "/a", 0), kv("/a", "v1", rev, rev))
	})
	t.Run("after delete", func(t *testing.T) {
		st := s.new(t)
		first := mustCreate(t, st, "/a", "v1")
		mustDelete(t, st, "/a", first)
		rev := mustCreate(t, st, "/a", "v2")
		wantKV(t, "Get", mustGet(t, st, "/a", 0), kv("/a", "v2", rev, rev))
	})
	t.Run("empty value", func(t *testing.T) {
		st := s.new(t)
		rev, err := st.Create(t.Context(), "/a", nil)
		wantErr(t, "Create", err, nil)
		wantKV(t, "Get", mustGet(t, st, "/a", 0), kv("/a", "", rev, rev))
	})
	t.Run("value is copied", func(t *testing.T) {
		st := s.new(t)
		value := []byte("v1")
		rev, err := st.Create(t.Context(), "/a", value)
		wantErr(t, "Create", err, nil)
		value[0] = 'X'
		wantKV(t, "Get", mustGet(t, st, "/a", 0), kv("/a", "v1", rev, rev))
	})
	t.Run("binary key", func(t *testing.T) {
		st := s.new(t)
		key := "/\xff\x00\xfe"
		rev := mustCreate(t, st, key, "\x00\xff")
		wantKV(t, "Get", mustGet(t, st, key, 0), kv(key, "\x00\xff", rev, rev))
	})
}

func (s suite) testUpdate(t *testing.T) {
	t.Run("missing key", func(t *testing.T) {
		st := s.new(t)
		_, err := st.Update(t.Context(), "/a", []byte("v"), 0)
		wantErr(t, "Update", err, store.ErrNotFound)
	})
	t.Run("deleted key", func(t *testing.T) {
		st := s.new(t)
		mustDelete(t, st, "/a", mustCreate(t, st, "/a", "v1"))
		_, err := st.Update(t.Context(), "/a", []byte("v2"), 0)
		wantErr(t, "Update", err, store.ErrNotFound)
	})
	t.Run("expected revision", func(t *testing.T) {
		st := s.new(t)
		created := mustCreate(t, st, "/a", "v1")
		rev := mustUpdate(t, st, "/a", "v2", created)
		if rev <= created {
			t.Fatalf("Update revision %d <= create revision %d", rev, created)
		}
		wantKV(t, "Get", mustGet(t, st, "/a", 0), kv("/a", "v2", created, rev))
	})
	t.Run("conflict", func(t *testing.T) {
		st := s.new(t)
		created := mustCreate(t, st, "/a", "v1")
		rev := mustUpdate(t, st, "/a", "v2", created)
		_, err := st.Update(t.Context(), "/a", []byte("v3"), created)
		wantErr(t, "Update with a stale revision", err, store.ErrConflict)
		_, err = st.Update(t.Context(), "/a", []byte("v3"), rev+100)
		wantErr(t, "Update with a future revision", err, store.ErrConflict)
		wantKV(t, "Get", mustGet(t, st, "/a", 0), kv("/a", "v2", created, rev))
		if cur := currentRev(t, st); cur != rev {
			t.Fatalf("CurrentRevision = %d after failed updates, want %d", cur, rev)
		}
	})
	t.Run("unconditional", func(t *testing.T) {
		st := s.new(t)
		created := mustCreate(t, st, "/a", "v1")
		mustUpdate(t, st, "/a", "v2", 0)
		rev := mustUpdate(t, st, "/a", "v3", 0)
		wantKV(t, "Get", mustGet(t, st, "/a", 0), kv("/a", "v3", created, rev))
	})
}

func (s suite) testDelete(t *testing.T) {
	t.Run("missing key", func(t *testing.T) {
		st := s.new(t)
		_, _, err := st.Delete(t.Context(), "/a", 0)
		wantErr(t, "Delete", err, store.ErrNotFound)
	})
	t.Run("expected revision", func(t *testing.T) {
		st := s.new(t)
		created := mustCreate(t, st, "/a", "v1")
		updated := mustUpdate(t, st, "/a", "v2", 0)
		rev, old, err := st.Delete(t.Context(), "/a", updated)
		wantErr(t, "Delete", err, nil)
		if rev <= updated {
			t.Fatalf("Delete revision %d <= previous revision %d", rev, updated)
		}
		wantKV(t, "deleted value", old, kv("/a", "v2", created, updated))
		_, err = st.Get(t.Context(), "/a", 0)
		wantErr(t, "Get after Delete", err, store.ErrNotFound)
		_, _, err = st.Delete(t.Context(), "/a", 0)
		wantErr(t, "second Delete", err, store.ErrNotFound)
		if cur := currentRev(t, st); cur != rev {
			t.Fatalf("CurrentRevision = %d, want the deletion's %d", cur, rev)
		}
	})
	t.Run("conflict", func(t *testing.T) {
		st := s.new(t)
		created := mustCreate(t, st, "/a", "v1")
		rev := mustUpdate(t, st, "/a", "v2", 0)
		_, _, err := st.Delete(t.Context(), "/a", created)
		wantErr(t, "Delete with a stale revision", err, store.ErrConflict)
		wantKV(t, "Get", mustGet(t, st, "/a", 0), kv("/a", "v2", created, rev))
	})
	t.Run("unconditional", func(t *testing.T) {
		st := s.new(t)
		created := mustCreate(t, st, "/a", "v1")
		_, old, err := st.Delete(t.Context(), "/a", 0)
		wantErr(t, "Delete", err, nil)
		wantKV(t, "deleted value", old, kv("/a", "v1", created, created))
	})
}

// testRevisions: one global revision, strictly increasing over all keys and
// all kinds of writes; CurrentRevision is the latest write's.
func (s suite) testRevisions(t *testing.T) {
	st := s.new(t)
	last := currentRev(t, st)
	if last < 0 {
		t.Fatalf("CurrentRevision of an empty store = %d", last)
	}
	next := func(what string, rev int64) {
		t.Helper()
		if rev <= last {
			t.Fatalf("%s got revision %d after %d", what, rev, last)
		}
		if cur := currentRev(t, st); cur != rev {
			t.Fatalf("CurrentRevision = %d after %s at %d", cur, what, rev)
		}
		last = rev
	}
	next("Create /a", mustCreate(t, st, "/a", "1"))
	next("Create /b", mustCreate(t, st, "/b", "1"))
	next("Update /a", mustUpdate(t, st, "/a", "2", 0))
	next("Delete /b", mustDelete(t, st, "/b", 0))
	next("Create /b", mustCreate(t, st, "/b", "2"))
	if _, err := st.Create(t.Context(), "/a", nil); err == nil {
		t.Fatal("Create of an existing key succeeded")
	}
	next("Update /b", mustUpdate(t, st, "/b", "3", 0))
	if horizon, err := st.CompactedRevision(t.Context()); err != nil || horizon != 0 {
		t.Fatalf("CompactedRevision = %d, %v before any compaction, want 0", horizon, err)
	}
}
