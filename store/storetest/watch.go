package storetest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"kubeplay/store"
)

func (s suite) testWatch(t *testing.T) {
	t.Run("replay", func(t *testing.T) {
		st := s.new(t)
		start := currentRev(t, st)
		r1 := mustCreate(t, st, "/a", "v1")
		r2 := mustUpdate(t, st, "/a", "v2", r1)
		r3 := mustCreate(t, st, "/b", "v1")
		r4 := mustDelete(t, st, "/a", r2)
		r5 := mustCreate(t, st, "/a", "v3")
		want := []string{
			created(kv("/a", "v1", r1, r1)),
			updated(kv("/a", "v2", r1, r2), kv("/a", "v1", r1, r1)),
			created(kv("/b", "v1", r3, r3)),
			deleted(kv("/a", "v2", r1, r4), kv("/a", "v2", r1, r2)),
			created(kv("/a", "v3", r5, r5)),
		}
		wantStrings(t, "Watch from the start", receive(t, watch(t, st, "", start), 5), want)
		wantStrings(t, "Watch from r2", receive(t, watch(t, st, "", r2), 3), want[2:])
		w := watch(t, st, "", r5)
		wantQuiet(t, w)
	})
	t.Run("live", func(t *testing.T) {
		st := s.new(t)
		w := watch(t, st, "", currentRev(t, st))
		wantQuiet(t, w)
		r1 := mustCreate(t, st, "/a", "v1")
		r2 := mustUpdate(t, st, "/a", "v2", r1)
		r3 := mustDelete(t, st, "/a", r2)
		r4 := mustCreate(t, st, "/a", "v3")
		wantStrings(t, "Watch", receive(t, w, 4), []string{
			created(kv("/a", "v1", r1, r1)),
			updated(kv("/a", "v2", r1, r2), kv("/a", "v1", r1, r1)),
			deleted(kv("/a", "v2", r1, r3), kv("/a", "v2", r1, r2)),
			created(kv("/a", "v3", r4, r4)),
		})
		wantQuiet(t, w)
	})
	t.Run("prefix", func(t *testing.T) {
		st := s.new(t)
		start := currentRev(t, st)
		r1 := mustCreate(t, st, "/a/1", "v")
		mustCreate(t, st, "/ab", "v")
		mustCreate(t, st, "/a", "v")
		replayed := watch(t, st, "/a/", start)
		live := watch(t, st, "/a/", currentRev(t, st))
		mustCreate(t, st, "/b/1", "v")
		r2 := mustCreate(t, st, "/a/2", "v")
		mustUpdate(t, st, "/ab", "w", 0)
		want := []string{created(kv("/a/1", "v", r1, r1)), created(kv("/a/2", "v", r2, r2))}
		wantStrings(t, "replayed", receive(t, replayed, 2), want)
		wantStrings(t, "live", receive(t, live, 1), want[1:])
		wantQuiet(t, replayed)
		wantQuiet(t, live)
	})
	t.Run("progress", func(t *testing.T) {
		st := s.new(t)
		start := currentRev(t, st)
		r1 := mustCreate(t, st, "/a/1", "v")
		replaying := watch(t, st, "/a/", start)
		replaying.RequestProgress()
		r2 := mustCreate(t, st, "/b/1", "v") // outside the prefix, yet it advances the revision
		quiet := watch(t, st, "/a/", r2)
		quiet.RequestProgress()
		wantStrings(t, "replaying", receive(t, replaying, 2), []string{created(kv("/a/1", "v", r1, r1)), progress(r1)})
		wantStrings(t, "quiet", receive(t, quiet, 1), []string{progress(r2)})
		wantQuiet(t, replaying)
		quiet.Stop()
		wantEnd(t, quiet)
		quiet.RequestProgress() // after the end: nothing to deliver to, must not block
	})
	t.Run("future revision", func(t *testing.T) {
		st := s.new(t)
		_, err := st.Watch(t.Context(), "", currentRev(t, st)+1)
		wantErr(t, "Watch", err, store.ErrFutureRevision)
	})
	t.Run("handover", s.testWatchHandover)
	t.Run("stop", func(t *testing.T) {
		st := s.new(t)
		w := watch(t, st, "", currentRev(t, st))
		w.Stop()
		wantErr(t, "Err after Stop", wantEnd(t, w), nil)
		w.Stop()
		mustCreate(t, st, "/a", "v") // no one to deliver to: must not block
	})
	t.Run("context", func(t *testing.T) {
		st := s.new(t)
		ctx, cancel := context.WithCancel(t.Context())
		w, err := st.Watch(ctx, "", currentRev(t, st))
		wantErr(t, "Watch", err, nil)
		mustCreate(t, st, "/a", "v")
		receive(t, w, 1)
		cancel()
		wantErr(t, "Err after cancel", wantEnd(t, w), nil)
		mustCreate(t, st, "/b", "v")
	})
	t.Run("slow consumer", s.testWatchSlow)
}

// testWatchHandover starts watches while a writer runs: each must deliver
// exactly the writes after its revision, in order, with no gap or
// duplicate where replay hands over to live delivery.
func (s suite) testWatchHandover(t *testing.T) {
	st := s.new(t)
	const writes = 300
	type write struct {
		rev int64
		ev  string
	}
	done := make(chan []write)
	go func() {
		var log []write
		defer func() { done <- log }()
		prev := map[string]store.KeyValue{}
		for i := range writes {
			key := fmt.Sprintf("/h/%d", i%7)
			value := fmt.Sprint(i)
			old, ok := prev[key]
			var (
				rev int64
				err error
				ev  string
			)
			if !ok {
				rev, err = st.Create(context.Background(), key, []byte(value))
				ev = created(kv(key, value, rev, rev))
			} else {
				rev, err = st.Update(context.Background(), key, []byte(value), old.ModRevision)
				ev = updated(kv(key, value, old.CreateRevision, rev), old)
			}
			if err != nil {
				t.Errorf("write %d: %v", i, err)
				return
			}
			createRev := rev
			if ok {
				createRev = old.CreateRevision
			}
			prev[key] = kv(key, value, createRev, rev)
			log = append(log, write{rev, ev})
			if i%10 == 0 {
				time.Sleep(time.Millisecond) // let watches start in between
			}
		}
	}()

	// Each watch starts some writes back, so that it replays history while
	// the writer goes on, and hands over to live events mid-stream.
	var watchers []store.Watcher
	var after []int64
	for i := range 8 {
		rev := max(currentRev(t, st)-int64(i*5), 0)
		after = append(after, rev)
		watchers = append(watchers, watch(t, st, "/h/", rev))
		time.Sleep(3 * time.Millisecond)
	}
	log := <-done
	if len(log) != writes {
		t.FailNow()
	}
	for i, w := range watchers {
		var want []string
		for _, wr := range log {
			if wr.rev > after[i] {
				want = append(want, wr.ev)
			}
		}
		wantStrings(t, fmt.Sprintf("watch after %d", after[i]), receiveUntil(t, w, log[len(log)-1].rev), want)
		wantQuiet(t, w)
	}
}

// testWatchSlow: a consumer that stops reading is ended with
// ErrWatcherTooSlow once its buffer fills, writers never wait for it, and it
// resumes without loss by watching after the last revision it received.
func (s suite) testWatchSlow(t *testing.T) {
	st := s.new(t)
	const writes = 2100 // more than twice the largest buffer Run allows
	start := currentRev(t, st)
	slow := watch(t, st, "/s/", start)

	wrote := make(chan []int64)
	go func() {
		var revs []int64
		defer func() { wrote <- revs }()
		for i := range writes {
			rev, err := st.Create(context.Background(), fmt.Sprintf("/s/%04d", i), nil)
			if err != nil {
				t.Errorf("Create %d: %v", i, err)
				return
			}
			revs = append(revs, rev)
		}
	}()
	var revs []int64
	select {
	case revs = <-wrote:
	case <-time.After(2 * timeout):
		t.Fatal("writes blocked by a watcher that does not read")
	}
	if len(revs) != writes {
		t.FailNow()
	}

	var got []int64
	for ev := range slow.Events() {
		got = append(got, ev.KV.ModRevision)
	}
	wantErr(t, "slow watcher's Err", slow.Err(), store.ErrWatcherTooSlow)
	if len(got) >= writes {
		t.Fatalf("slow watcher received all %d events", len(got))
	}
	if !slices.Equal(got, revs[:len(got)]) {
		t.Fatalf("slow watcher's events are not a prefix of the writes: %v...", got[:min(len(got), 10)])
	}

	last := start
	if len(got) > 0 {
		last = got[len(got)-1]
	}
	resumed := watch(t, st, "/s/", last)
	rest := revs[len(got):]
	for i, want := range rest {
		select {
		case ev, ok := <-resumed.Events():
			if !ok {
				t.Fatalf("resumed watch ended after %d of %d events: %v", i, len(rest), resumed.Err())
			}
			if ev.KV.ModRevision != want {
				t.Fatalf("resumed watch event %d has revision %d, want %d", i, ev.KV.ModRevision, want)
			}
		case <-time.After(timeout):
			t.Fatalf("resumed watch: timed out after %d of %d events", i, len(rest))
		}
	}
	wantQuiet(t, resumed)
}

func (s suite) testClose(t *testing.T) {
	st := s.open(t)
	rev := mustCreate(t, st, "/a", "v")
	w := watch(t, st, "", rev)
	if err := st.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	wantEnd(t, w)
	ctx := t.Context()
	_, err := st.Create(ctx, "/b", nil)
	wantErr(t, "Create", err, store.ErrClosed)
	_, err = st.Update(ctx, "/a", nil, 0)
	wantErr(t, "Update", err, store.ErrClosed)
	_, _, err = st.Delete(ctx, "/a", 0)
	wantErr(t, "Delete", err, store.ErrClosed)
	_, err = st.Get(ctx, "/a", 0)
	wantErr(t, "Get", err, store.ErrClosed)
	_, err = st.List(ctx, "", "", 0, 0)
	wantErr(t, "List", err, store.ErrClosed)
	_, err = st.Count(ctx, "")
	wantErr(t, "Count", err, store.ErrClosed)
	_, err = st.CurrentRevision(ctx)
	wantErr(t, "CurrentRevision", err, store.ErrClosed)
	_, err = st.CompactedRevision(ctx)
	wantErr(t, "CompactedRevision", err, store.ErrClosed)
	_, err = st.Watch(ctx, "", rev)
	wantErr(t, "Watch", err, store.ErrClosed)
	wantErr(t, "Compact", st.Compact(ctx, rev), store.ErrClosed)
}
