package storetest

import (
	"testing"

	"kubeplay/store"
)

func (s suite) testGet(t *testing.T) {
	t.Run("history", func(t *testing.T) {
		st := s.new(t)
		before := mustCreate(t, st, "/other", "x")
		r1 := mustCreate(t, st, "/a", "v1")
		r2 := mustUpdate(t, st, "/a", "v2", r1)
		r3 := mustDelete(t, st, "/a", r2)
		r4 := mustCreate(t, st, "/a", "v3")
		r5 := mustUpdate(t, st, "/other", "y", 0)

		_, err := st.Get(t.Context(), "/a", before)
		wantErr(t, "Get before creation", err, store.ErrNotFound)
		wantKV(t, "Get at create", mustGet(t, st, "/a", r1), kv("/a", "v1", r1, r1))
		wantKV(t, "Get at update", mustGet(t, st, "/a", r2), kv("/a", "v2", r1, r2))
		_, err = st.Get(t.Context(), "/a", r3)
		wantErr(t, "Get at deletion", err, store.ErrNotFound)
		wantKV(t, "Get at re-creation", mustGet(t, st, "/a", r4), kv("/a", "v3", r4, r4))
		wantKV(t, "Get at a later write", mustGet(t, st, "/a", r5), kv("/a", "v3", r4, r4))
		wantKV(t, "Get latest", mustGet(t, st, "/a", 0), kv("/a", "v3", r4, r4))
	})
	t.Run("latest, repeated", func(t *testing.T) {
		// A key read again and again at the latest revision, as every
		// create reads its namespace: each read is the key's current
		// value, whatever was written in between, and what a caller does
		// to one value is not in the next.
		st := s.new(t)
		r1 := mustCreate(t, st, "/a", "v1")
		wantKV(t, "Get", mustGet(t, st, "/a", 0), kv("/a", "v1", r1, r1))
		got := mustGet(t, st, "/a", 0)
		wantKV(t, "Get again", got, kv("/a", "v1", r1, r1))
		got.Value[0] = 'X'
		_ = append(got.Value[:1], "XYZ"...)
		mustCreate(t, st, "/b", "elsewhere")
		mustCreate(t, st, "/ab", "a key that extends it")
		wantKV(t, "Get after writes elsewhere", mustGet(t, st, "/a", 0), kv("/a", "v1", r1, r1))
		r2 := mustUpdate(t, st, "/a", "v2", r1)
		wantKV(t, "Get after an update", mustGet(t, st, "/a", 0), kv("/a", "v2", r1, r2))
		wantKV(t, "Get after an update, again", mustGet(t, st, "/a", 0), kv("/a", "v2", r1, r2))
		r3 := mustDelete(t, st, "/a", r2)
		_, err := st.Get(t.Context(), "/a", 0)
		wantErr(t, "Get after a delete", err, store.ErrNotFound)
		wantKV(t, "Get at the update", mustGet(t, st, "/a", r2), kv("/a", "v2", r1, r2))
		r4 := mustCreate(t, st, "/a", "v3")
		wantKV(t, "Get after re-creation", mustGet(t, st, "/a", 0), kv("/a", "v3", r4, r4))
		if r4 <= r3 {
			t.Fatalf("re-creation at %d, not after the delete at %d", r4, r3)
		}
	})
	t.Run("missing key", func(t *testing.T) {
		st := s.new(t)
		mustCreate(t, st, "/a", "v")
		for _, key := range []string{"/b", "/", "/a/", "/A", ""} {
			_, err := st.Get(t.Context(), key, 0)
			wantErr(t, "Get("+key+")", err, store.ErrNotFound)
		}
	})
	t.Run("future revision", func(t *testing.T) {
		st := s.new(t)
		rev := mustCreate(t, st, "/a", "v")
		_, err := st.Get(t.Context(), "/a", rev+1)
		wantErr(t, "Get", err, store.ErrFutureRevision)
	})
}

// listFixture writes keys around the prefix "/a/" and returns the revision
// of the last write.
func listFixture(t *testing.T, st store.Store) int64 {
	for _, key := range []string{"/a/2", "/a/1", "/ab", "/a", "/a/3", "/a0", "/b/1", "/", "/a/gone"} {
		mustCreate(t, st, key, "v"+key)
	}
	return mustDelete(t, st, "/a/gone", 0)
}

func keys(items []store.KeyValue) []string {
	out := make([]string, len(items))
	for i, kv := range items {
		out[i] = kv.Key
	}
	return out
}

func (s suite) testList(t *testing.T) {
	t.Run("prefix", func(t *testing.T) {
		st := s.new(t)
		rev := listFixture(t, st)
		for _, tc := range []struct {
			prefix string
			want   []string
		}{
			{"/a/", []string{"/a/1", "/a/2", "/a/3"}},
			{"/a", []string{"/a", "/a/1", "/a/2", "/a/3", "/a0", "/ab"}},
			{"/a/1", []string{"/a/1"}},
			{"/c", nil},
			{"", []string{"/", "/a", "/a/1", "/a/2", "/a/3", "/a0", "/ab", "/b/1"}},
		} {
			res, err := st.List(t.Context(), tc.prefix, "", 0, 0)
			wantErr(t, "List("+tc.prefix+")", err, nil)
			wantStrings(t, "List("+tc.prefix+")", keys(res.Items), tc.want)
			if res.Revision != rev || res.Remaining != 0 {
				t.Fatalf("List(%q): Revision %d, Remaining %d; want %d, 0", tc.prefix, res.Revision, res.Remaining, rev)
			}
		}
	})
	t.Run("values", func(t *testing.T) {
		st := s.new(t)
		r1 := mustCreate(t, st, "/a/1", "one")
		r2 := mustCreate(t, st, "/a/2", "two")
		r3 := mustUpdate(t, st, "/a/1", "uno", r1)
		res, err := st.List(t.Context(), "/a/", "", 0, 0)
		wantErr(t, "List", err, nil)
		wantStrings(t, "List", kvs(res.Items...), kvs(kv("/a/1", "uno", r1, r3), kv("/a/2", "two", r2, r2)))
	})
	t.Run("repeated", func(t *testing.T) {
		// A prefix listed again and again, as admission lists its
		// configuration on every write: each list is the current state at
		// the current revision, whatever was written in between, here or
		// elsewhere, and what a caller does to one list is not in the next.
		st := s.new(t)
		list := func(what string, want ...string) store.ListResult {
			t.Helper()
			res, err := st.List(t.Context(), "/a/", "", 0, 0)
			wantErr(t, "List", err, nil)
			wantStrings(t, what, kvs(res.Items...), want)
			if cur := currentRev(t, st); res.Revision != cur {
				t.Fatalf("%s: Revision %d, want the current %d", what, res.Revision, cur)
			}
			return res
		}
		list("empty")
		list("empty again")
		r1 := mustCreate(t, st, "/a/1", "one")
		list("after a create", kvString(kv("/a/1", "one", r1, r1)))
		res := list("again", kvString(kv("/a/1", "one", r1, r1)))
		res.Items[0].Value[0] = 'X'
		mustCreate(t, st, "/b/1", "elsewhere")
		list("after a write elsewhere", kvString(kv("/a/1", "one", r1, r1)))
		r2 := mustUpdate(t, st, "/a/1", "uno", r1)
		list("after an update", kvString(kv("/a/1", "uno", r1, r2)))
		r3 := mustCreate(t, st, "/a/2", "two")
		both := []string{kvString(kv("/a/1", "uno", r1, r2)), kvString(kv("/a/2", "two", r3, r3))}
		list("two", both...)
		res = list("two again", both...)
		_ = append(res.Items[0].Value, "XYZ"...) // must not write into the next value
		wantStrings(t, "after an append to the first value", kvs(res.Items...), both)
		mustDelete(t, st, "/a/2", r3)
		mustDelete(t, st, "/a/1", r2)
		list("after a delete")
	})
	t.Run("binary prefix", func(t *testing.T) {
		st := s.new(t)
		for _, key := range []string{"/k\xfe", "/k\xff", "/k\xff\x00", "/k\xff\xff", "/l", "\xff", "\xff\xff"} {
			mustCreate(t, st, key, "v")
		}
		for prefix, want := range map[string][]string{
			"/k\xff": {"/k\xff", "/k\xff\x00", "/k\xff\xff"},
			"\xff":   {"\xff", "\xff\xff"},
			"/k":     {"/k\xfe", "/k\xff", "/k\xff\x00", "/k\xff\xff"},
		} {
			res, err := st.List(t.Context(), prefix, "", 0, 0)
			wantErr(t, "List", err, nil)
			wantStrings(t, "List", keys(res.Items), want)
		}
	})
	t.Run("startKey", func(t *testing.T) {
		st := s.new(t)
		listFixture(t, st)
		for _, tc := range []struct {
			start string
			want  []string
		}{
			{"/a/2", []string{"/a/2", "/a/3"}},
			{"/a/10", []string{"/a/2", "/a/3"}},
			{"/0", []string{"/a/1", "/a/2", "/a/3"}},
			{"/a/3\x00", nil},
			{"/b", nil},
		} {
			res, err := st.List(t.Context(), "/a/", tc.start, 0, 0)
			wantErr(t, "List from "+tc.start, err, nil)
			wantStrings(t, "List from "+tc.start, keys(res.Items), tc.want)
			if res.Remaining != 0 {
				t.Fatalf("List from %q: Remaining %d", tc.start, res.Remaining)
			}
		}
	})
	t.Run("limit", func(t *testing.T) {
		st := s.new(t)
		listFixture(t, st)
		for _, tc := range []struct {
			prefix, start string
			limit         int
			want          []string
			remaining     int64
		}{
			{"/a/", "", 1, []string{"/a/1"}, 2},
			{"/a/", "", 2, []string{"/a/1", "/a/2"}, 1},
			{"/a/", "", 3, []string{"/a/1", "/a/2", "/a/3"}, 0},
			{"/a/", "", 4, []string{"/a/1", "/a/2", "/a/3"}, 0},
			{"/a/", "/a/2", 1, []string{"/a/2"}, 1},
			{"", "", 3, []string{"/", "/a", "/a/1"}, 5},
			{"/a", "/a/3", 2, []string{"/a/3", "/a0"}, 1},
		} {
			res, err := st.List(t.Context(), tc.prefix, tc.start, tc.limit, 0)
			wantErr(t, "List", err, nil)
			wantStrings(t, "List", keys(res.Items), tc.want)
			if res.Remaining != tc.remaining {
				t.Fatalf("List(%q, %q, %d): Remaining %d, want %d", tc.prefix, tc.start, tc.limit, res.Remaining, tc.remaining)
			}
		}
	})
	t.Run("at revision", func(t *testing.T) {
		st := s.new(t)
		r1 := mustCreate(t, st, "/a/1", "one")
		r2 := mustCreate(t, st, "/a/2", "two")
		mustUpdate(t, st, "/a/1", "uno", r1)
		mustDelete(t, st, "/a/2", r2)
		mustCreate(t, st, "/a/3", "three")
		res, err := st.List(t.Context(), "/a/", "", 0, r2)
		wantErr(t, "List", err, nil)
		wantStrings(t, "List at r2", kvs(res.Items...), kvs(kv("/a/1", "one", r1, r1), kv("/a/2", "two", r2, r2)))
		if res.Revision != r2 {
			t.Fatalf("Revision = %d, want %d", res.Revision, r2)
		}
		_, err = st.List(t.Context(), "/a/", "", 0, currentRev(t, st)+1)
		wantErr(t, "List at a future revision", err, store.ErrFutureRevision)
	})
	t.Run("pages of one snapshot", func(t *testing.T) {
		// Writes between pages must not show: each page is read at the
		// revision of the first.
		st := s.new(t)
		revs := map[string]int64{}
		for _, k := range []string{"00", "01", "02", "03", "04", "05", "06", "07", "08", "09"} {
			revs[k] = mustCreate(t, st, "/p/"+k, "v"+k)
		}
		want := func(ks ...string) []string {
			var out []store.KeyValue
			for _, k := range ks {
				out = append(out, kv("/p/"+k, "v"+k, revs[k], revs[k]))
			}
			return kvs(out...)
		}
		page1, err := st.List(t.Context(), "/p/", "", 4, 0)
		wantErr(t, "page 1", err, nil)
		wantStrings(t, "page 1", kvs(page1.Items...), want("00", "01", "02", "03"))
		if page1.Remaining != 6 {
			t.Fatalf("page 1 Remaining = %d, want 6", page1.Remaining)
		}

		mustDelete(t, st, "/p/05", 0)
		mustUpdate(t, st, "/p/06", "changed", 0)
		mustCreate(t, st, "/p/045", "new")
		mustCreate(t, st, "/p/99", "new")
		mustDelete(t, st, "/p/01", 0)

		next := page1.Items[len(page1.Items)-1].Key + "\x00"
		page2, err := st.List(t.Context(), "/p/", next, 4, page1.Revision)
		wantErr(t, "page 2", err, nil)
		wantStrings(t, "page 2", kvs(page2.Items...), want("04", "05", "06", "07"))
		if page2.Remaining != 2 || page2.Revision != page1.Revision {
			t.Fatalf("page 2: Remaining %d, Revision %d; want 2, %d", page2.Remaining, page2.Revision, page1.Revision)
		}
		next = page2.Items[len(page2.Items)-1].Key + "\x00"
		page3, err := st.List(t.Context(), "/p/", next, 4, page1.Revision)
		wantErr(t, "page 3", err, nil)
		wantStrings(t, "page 3", kvs(page3.Items...), want("08", "09"))
		if page3.Remaining != 0 {
			t.Fatalf("page 3 Remaining = %d, want 0", page3.Remaining)
		}

		latest, err := st.List(t.Context(), "/p/", "", 0, 0)
		wantErr(t, "latest", err, nil)
		wantStrings(t, "latest", keys(latest.Items), []string{
			"/p/00", "/p/02", "/p/03", "/p/04", "/p/045", "/p/06", "/p/07", "/p/08", "/p/09", "/p/99"})
	})
}

func (s suite) testCount(t *testing.T) {
	st := s.new(t)
	listFixture(t, st)
	for prefix, want := range map[string]int64{"/a/": 3, "/a": 6, "/a/1": 1, "/c": 0, "": 8} {
		n, err := st.Count(t.Context(), prefix)
		wantErr(t, "Count", err, nil)
		if n != want {
			t.Fatalf("Count(%q) = %d, want %d", prefix, n, want)
		}
	}
}

func (s suite) testKeys(t *testing.T) {
	st := s.new(t)
	listFixture(t, st)
	for prefix, want := range map[string][]string{"/a/": {"/a/1", "/a/2", "/a/3"}, "/a": {"/a", "/a/1", "/a/2", "/a/3", "/a0", "/ab"}, "/c": nil} {
		got, err := st.Keys(t.Context(), prefix)
		wantErr(t, "Keys", err, nil)
		wantStrings(t, "Keys("+prefix+")", got, want)
	}
}

func (s suite) testLastWriteUnder(t *testing.T) {
	st := s.new(t)
	mustCreate(t, st, "/a/1", "x")
	asked := mustCreate(t, st, "/b/1", "x")
	// Before it follows /a/, the store answers the revision of the question.
	if got := st.LastWriteUnder("/a/"); got != asked {
		t.Fatalf("first LastWriteUnder(/a/) = %d, want %d", got, asked)
	}
	mustCreate(t, st, "/b/2", "x")
	mustCreate(t, st, "/ab", "x") // not under /a/
	if got := st.LastWriteUnder("/a/"); got != asked {
		t.Fatalf("LastWriteUnder(/a/) after writes elsewhere = %d, want %d", got, asked)
	}
	for _, write := range []struct {
		what string
		do   func() (int64, error)
	}{
		{"create", func() (int64, error) { return st.Create(t.Context(), "/a/2", []byte("x")) }},
		{"update", func() (int64, error) { return st.Update(t.Context(), "/a/1", []byte("y"), 0) }},
		{"delete", func() (int64, error) { rev, _, err := st.Delete(t.Context(), "/a/2", 0); return rev, err }},
		{"create in one transaction", func() (int64, error) {
			return st.CreateAll(t.Context(), []store.KeyValue{{Key: "/a/3", Value: []byte("x")}, {Key: "/c", Value: []byte("x")}})
		}},
	} {
		rev, err := write.do()
		wantErr(t, write.what, err, nil)
		if write.what == "create in one transaction" {
			rev-- // /a/3 is the first of two
		}
		if got := st.LastWriteUnder("/a/"); got != rev {
			t.Fatalf("LastWriteUnder(/a/) after a %s at %d = %d", write.what, rev, got)
		}
	}
}
