package storetest

import (
	"errors"
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

func (s suite) testCreateAll(t *testing.T) {
	t.Run("new keys", func(t *testing.T) {
		st := s.new(t)
		start := currentRev(t, st)
		live := watch(t, st, "", start)
		value := []byte("v2")
		rev, err := st.CreateAll(t.Context(), []store.KeyValue{{Key: "/b", Value: []byte("v1")}, {Key: "/a", Value: value}, {Key: "/c"}})
		wantErr(t, "CreateAll", err, nil)
		value[0] = 'X'
		if rev != start+3 || currentRev(t, st) != rev {
			t.Fatalf("CreateAll: revision %d (current %d), want %d", rev, currentRev(t, st), start+3)
		}
		wantKV(t, "Get /b", mustGet(t, st, "/b", 0), kv("/b", "v1", start+1, start+1))
		wantKV(t, "Get /a", mustGet(t, st, "/a", 0), kv("/a", "v2", start+2, start+2))
		wantKV(t, "Get /c", mustGet(t, st, "/c", 0), kv("/c", "", start+3, start+3))
		want := []string{created(kv("/b", "v1", start+1, start+1)), created(kv("/a", "v2", start+2, start+2)), created(kv("/c", "", start+3, start+3))}
		wantStrings(t, "live Watch", receive(t, live, 3), want)
		wantStrings(t, "replayed Watch", receive(t, watch(t, st, "", start), 3), want)
	})
	t.Run("none", func(t *testing.T) {
		st := s.new(t)
		r := mustCreate(t, st, "/a", "v1")
		rev, err := st.CreateAll(t.Context(), nil)
		wantErr(t, "CreateAll", err, nil)
		if rev != r {
			t.Errorf("CreateAll of nothing: revision %d, want %d", rev, r)
		}
	})
	t.Run("existing key", func(t *testing.T) {
		st := s.new(t)
		r := mustCreate(t, st, "/b", "v1")
		_, err := st.CreateAll(t.Context(), []store.KeyValue{{Key: "/a", Value: []byte("v")}, {Key: "/b", Value: []byte("v2")}})
		wantErr(t, "CreateAll", err, store.ErrExists)
		if got := currentRev(t, st); got != r {
			t.Errorf("revision %d after a failed CreateAll, want %d", got, r)
		}
		if _, err := st.Get(t.Context(), "/a", 0); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Get /a after a failed CreateAll: %v, want ErrNotFound", err)
		}
		mustCreate(t, st, "/a", "v3") // the revisions go on from where they were
		wantKV(t, "Get /a", mustGet(t, st, "/a", 0), kv("/a", "v3", r+1, r+1))
	})
	t.Run("key twice", func(t *testing.T) {
		st := s.new(t)
		_, err := st.CreateAll(t.Context(), []store.KeyValue{{Key: "/a", Value: []byte("v1")}, {Key: "/a", Value: []byte("v2")}})
		wantErr(t, "CreateAll", err, store.ErrExists)
		if got := currentRev(t, st); got != 0 {
			t.Errorf("revision %d after a failed CreateAll, want 0", got)
		}
	})
	t.Run("after delete", func(t *testing.T) {
		st := s.new(t)
		mustDelete(t, st, "/a", mustCreate(t, st, "/a", "v1"))
		rev, err := st.CreateAll(t.Context(), []store.KeyValue{{Key: "/a", Value: []byte("v2")}})
		wantErr(t, "CreateAll", err, nil)
		wantKV(t, "Get /a", mustGet(t, st, "/a", 0), kv("/a", "v2", rev, rev))
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
