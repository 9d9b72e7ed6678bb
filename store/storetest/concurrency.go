package storetest

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"testing"

	"kubeplay/store"
)

// testConcurrency: goroutines increment counters by compare-and-swap,
// retrying on conflict, while readers list them. No increment is lost, every
// write has its own revision, a watcher sees them all in order, and every
// list is a consistent snapshot: at revision R the counters add up to the
// number of increments at or below R.
func (s suite) testConcurrency(t *testing.T) {
	st := s.new(t)
	const (
		counters   = 3
		goroutines = 8
		increments = 25 // per goroutine
	)
	start := currentRev(t, st)
	for i := range counters {
		mustCreate(t, st, fmt.Sprintf("/c/%d", i), "0")
	}
	w := watch(t, st, "/c/", currentRev(t, st))

	var (
		mu        sync.Mutex
		revs      []int64 // of all increments
		conflicts int
	)
	increment := func(key string) error {
		for {
			kv, err := st.Get(t.Context(), key, 0)
			if err != nil {
				return err
			}
			n, err := strconv.Atoi(string(kv.Value))
			if err != nil {
				return err
			}
			runtime.Gosched() // invite a competing write in between
			rev, err := st.Update(t.Context(), key, []byte(strconv.Itoa(n+1)), kv.ModRevision)
			if errors.Is(err, store.ErrConflict) {
				mu.Lock()
				conflicts++
				mu.Unlock()
				continue
			}
			if err != nil {
				return err
			}
			mu.Lock()
			revs = append(revs, rev)
			mu.Unlock()
			return nil
		}
	}

	type sample struct{ rev, sum int64 }
	var (
		writers, readers sync.WaitGroup
		stop             = make(chan struct{})
		samples          = make([][]sample, 2)
	)
	for g := range goroutines {
		writers.Go(func() {
			for i := range increments {
				if err := increment(fmt.Sprintf("/c/%d", (g+i)%counters)); err != nil {
					t.Errorf("increment: %v", err)
					return
				}
			}
		})
	}
	for r := range samples {
		readers.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				res, err := st.List(t.Context(), "/c/", "", 0, 0)
				if err != nil {
					t.Errorf("List: %v", err)
					return
				}
				var sum int64
				for _, kv := range res.Items {
					n, _ := strconv.Atoi(string(kv.Value))
					sum += int64(n)
				}
				samples[r] = append(samples[r], sample{res.Revision, sum})
				runtime.Gosched()
			}
		})
	}
	writers.Wait()
	close(stop)
	readers.Wait()
	if t.Failed() {
		t.FailNow()
	}

	const total = goroutines * increments
	res, err := st.List(t.Context(), "/c/", "", 0, 0)
	wantErr(t, "List", err, nil)
	var (
		sum  int64
		want [counters]int
	)
	for g := range goroutines {
		for i := range increments {
			want[(g+i)%counters]++
		}
	}
	for i, kv := range res.Items {
		n, _ := strconv.Atoi(string(kv.Value))
		sum += int64(n)
		if n != want[i] {
			t.Errorf("counter %d = %d, want %d", i, n, want[i])
		}
	}
	if sum != total || len(revs) != total {
		t.Fatalf("counters add up to %d over %d increments, want %d", sum, len(revs), total)
	}
	slices.Sort(revs)
	if len(slices.Compact(slices.Clone(revs))) != total {
		t.Fatal("two increments got the same revision")
	}
	if revs[0] <= start {
		t.Fatalf("increment revision %d <= start %d", revs[0], start)
	}
	for _, rs := range samples {
		for _, smp := range rs {
			n, _ := slices.BinarySearch(revs, smp.rev+1) // increments at or below rev
			if int64(n) != smp.sum {
				t.Fatalf("List at revision %d: counters add up to %d, but %d increments were at or below it", smp.rev, smp.sum, n)
			}
		}
	}
	var seen []int64
	for len(seen) < total {
		ev := <-w.Events()
		if ev.Type != store.Updated {
			t.Fatalf("unexpected %s", evString(ev))
		}
		seen = append(seen, ev.KV.ModRevision)
	}
	if !slices.Equal(seen, revs) {
		t.Fatal("watcher saw the increments out of order or not all")
	}
	t.Logf("%d increments, %d conflicts, %d list snapshots", total, conflicts, len(samples[0])+len(samples[1]))
}

// testReopen: a store kept at a path keeps its data, history, revisions and
// horizon across Close and open.
func (s suite) testReopen(t *testing.T) {
	if s.openAt == nil {
		t.Skip("no WithPath option: this store cannot be reopened")
	}
	path := t.TempDir() + "/store.db"
	st := s.openAt(t, path)
	a1 := mustCreate(t, st, "/a", "v1")
	a2 := mustUpdate(t, st, "/a", "v2", a1)
	b1 := mustCreate(t, st, "/b", "v1")
	wantErr(t, "Compact", st.Compact(t.Context(), a2), nil)
	a3 := mustUpdate(t, st, "/a", "v3", a2)
	b2 := mustDelete(t, st, "/b", b1)
	if err := st.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	st = s.openAt(t, path)
	t.Cleanup(func() { st.Close() })
	if cur := currentRev(t, st); cur != b2 {
		t.Fatalf("CurrentRevision after reopen = %d, want %d", cur, b2)
	}
	if horizon, err := st.CompactedRevision(t.Context()); err != nil || horizon != a2 {
		t.Fatalf("CompactedRevision after reopen = %d, %v; want %d", horizon, err, a2)
	}
	wantKV(t, "Get", mustGet(t, st, "/a", 0), kv("/a", "v3", a1, a3))
	wantKV(t, "Get at the horizon", mustGet(t, st, "/a", a2), kv("/a", "v2", a1, a2))
	wantStrings(t, "Watch from the horizon", receive(t, watch(t, st, "", a2), 3), []string{
		created(kv("/b", "v1", b1, b1)),
		updated(kv("/a", "v3", a1, a3), kv("/a", "v2", a1, a2)),
		deleted(kv("/b", "v1", b1, b2), kv("/b", "v1", b1, b1)),
	})
	if rev := mustCreate(t, st, "/c", "v1"); rev <= b2 {
		t.Fatalf("first write after reopen got revision %d <= %d", rev, b2)
	}
}
