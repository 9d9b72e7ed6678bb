package storetest

import (
	"testing"

	"kubeplay/store"
)

func (s suite) testCompact(t *testing.T) {
	t.Run("horizon", func(t *testing.T) {
		st := s.new(t)
		a1 := mustCreate(t, st, "/a", "v1")
		a2 := mustUpdate(t, st, "/a", "v2", a1)
		b1 := mustCreate(t, st, "/b", "v1")
		b2 := mustDelete(t, st, "/b", b1) // the horizon
		c1 := mustCreate(t, st, "/c", "v1")
		a3 := mustUpdate(t, st, "/a", "v3", a2)

		wantErr(t, "Compact", st.Compact(t.Context(), b2), nil)
		horizon, err := st.CompactedRevision(t.Context())
		if err != nil || horizon != b2 {
			t.Fatalf("CompactedRevision = %d, %v; want %d", horizon, err, b2)
		}

		// Below the horizon: gone.
		_, err = st.Get(t.Context(), "/a", b1)
		wantErr(t, "Get below the horizon", err, store.ErrCompacted)
		_, err = st.List(t.Context(), "", "", 0, b1)
		wantErr(t, "List below the horizon", err, store.ErrCompacted)
		_, err = st.Watch(t.Context(), "", b1)
		wantErr(t, "Watch below the horizon", err, store.ErrCompacted)

		// At the horizon: each key's value as of it.
		wantKV(t, "Get at the horizon", mustGet(t, st, "/a", b2), kv("/a", "v2", a1, a2))
		_, err = st.Get(t.Context(), "/b", b2)
		wantErr(t, "Get of a key deleted at the horizon", err, store.ErrNotFound)
		res, err := st.List(t.Context(), "", "", 0, b2)
		wantErr(t, "List at the horizon", err, nil)
		wantStrings(t, "List at the horizon", kvs(res.Items...), kvs(kv("/a", "v2", a1, a2)))

		// Above: untouched.
		wantKV(t, "Get latest", mustGet(t, st, "/a", 0), kv("/a", "v3", a1, a3))
		wantKV(t, "Get above the horizon", mustGet(t, st, "/c", c1), kv("/c", "v1", c1, c1))
		w := watch(t, st, "", b2)
		wantStrings(t, "Watch from the horizon", receive(t, w, 2), []string{
			created(kv("/c", "v1", c1, c1)),
			updated(kv("/a", "v3", a1, a3), kv("/a", "v2", a1, a2)),
		})
		if n, err := st.Count(t.Context(), ""); err != nil || n != 2 {
			t.Fatalf("Count = %d, %v; want 2", n, err)
		}
	})
	t.Run("no-op at or below the horizon", func(t *testing.T) {
		st := s.new(t)
		r1 := mustCreate(t, st, "/a", "v1")
		r2 := mustUpdate(t, st, "/a", "v2", r1)
		mustUpdate(t, st, "/a", "v3", r2)
		wantErr(t, "Compact", st.Compact(t.Context(), r2), nil)
		wantErr(t, "Compact at the horizon", st.Compact(t.Context(), r2), nil)
		wantErr(t, "Compact below the horizon", st.Compact(t.Context(), r1), nil)
		wantErr(t, "Compact at 0", st.Compact(t.Context(), 0), nil)
		if horizon, _ := st.CompactedRevision(t.Context()); horizon != r2 {
			t.Fatalf("CompactedRevision = %d, want %d", horizon, r2)
		}
		wantKV(t, "Get at the horizon", mustGet(t, st, "/a", r2), kv("/a", "v2", r1, r2))
	})
	t.Run("future revision", func(t *testing.T) {
		st := s.new(t)
		rev := mustCreate(t, st, "/a", "v1")
		wantErr(t, "Compact", st.Compact(t.Context(), rev+1), store.ErrFutureRevision)
	})
	t.Run("everything", func(t *testing.T) {
		// Compacting at the current revision keeps the current values and
		// revisions go on from there, even with every row a tombstone.
		st := s.new(t)
		a := mustCreate(t, st, "/a", "v1")
		mustDelete(t, st, "/b", mustCreate(t, st, "/b", "v1"))
		a = mustUpdate(t, st, "/a", "v2", a)
		mustDelete(t, st, "/a", a)
		cur := currentRev(t, st)
		wantErr(t, "Compact", st.Compact(t.Context(), cur), nil)
		if got := currentRev(t, st); got != cur {
			t.Fatalf("CurrentRevision = %d after compaction, want %d", got, cur)
		}
		if n, _ := st.Count(t.Context(), ""); n != 0 {
			t.Fatalf("Count = %d, want 0", n)
		}
		rev := mustCreate(t, st, "/a", "v3")
		if rev <= cur {
			t.Fatalf("Create after compaction got revision %d <= %d", rev, cur)
		}
		wantKV(t, "Get", mustGet(t, st, "/a", 0), kv("/a", "v3", rev, rev))
		_, err := st.Get(t.Context(), "/a", cur)
		wantErr(t, "Get at the horizon", err, store.ErrNotFound)
	})
	t.Run("twice", func(t *testing.T) {
		st := s.new(t)
		a1 := mustCreate(t, st, "/a", "v1")
		a2 := mustUpdate(t, st, "/a", "v2", a1)
		b1 := mustCreate(t, st, "/b", "v1")
		wantErr(t, "Compact", st.Compact(t.Context(), b1), nil)
		a3 := mustUpdate(t, st, "/a", "v3", a2)
		b2 := mustDelete(t, st, "/b", b1)
		c1 := mustCreate(t, st, "/c", "v1")
		wantErr(t, "Compact", st.Compact(t.Context(), b2), nil)
		res, err := st.List(t.Context(), "", "", 0, b2)
		wantErr(t, "List at the horizon", err, nil)
		wantStrings(t, "List at the horizon", kvs(res.Items...), kvs(kv("/a", "v3", a1, a3)))
		w := watch(t, st, "", b2)
		wantStrings(t, "Watch from the horizon", receive(t, w, 1), []string{created(kv("/c", "v1", c1, c1))})
	})
}
