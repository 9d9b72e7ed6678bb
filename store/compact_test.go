//go:build cgo || (js && wasm)

package store

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// fakeClock is Options.Now for tests.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func open(t *testing.T, opts Options) *DB {
	t.Helper()
	db, err := Open(t.Context(), ":memory:", opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func must[T any](t *testing.T) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func TestDB_CompactExpired(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	db := open(t, Options{Retention: time.Minute, Now: clock.Now})
	rev := must[int64](t)
	ctx := t.Context()

	r1 := rev(db.Create(ctx, "/a", []byte("v1")))
	r2 := rev(db.Update(ctx, "/a", []byte("v2"), r1))
	r3 := rev(db.Create(ctx, "/b", []byte("v1")))
	clock.Add(2 * time.Minute)
	r4 := rev(db.Update(ctx, "/a", []byte("v3"), r2))
	clock.Add(30 * time.Second)

	// r1..r3 are 2.5 minutes old, r4 half a minute.
	if err := db.CompactExpired(ctx); err != nil {
		t.Fatal(err)
	}
	if got := rev(db.CompactedRevision(ctx)); got != r3 {
		t.Fatalf("horizon = %d, want %d", got, r3)
	}
	if _, err := db.Get(ctx, "/a", r2); !errors.Is(err, ErrCompacted) {
		t.Fatalf("Get below the horizon: %v", err)
	}
	if kv, err := db.Get(ctx, "/a", r3); err != nil || string(kv.Value) != "v2" {
		t.Fatalf("Get at the horizon = %q, %v", kv.Value, err)
	}

	// Nothing written for longer than the retention: all history expires.
	clock.Add(time.Minute)
	if err := db.CompactExpired(ctx); err != nil {
		t.Fatal(err)
	}
	if got := rev(db.CompactedRevision(ctx)); got != r4 {
		t.Fatalf("horizon = %d, want %d", got, r4)
	}
	if err := db.CompactExpired(ctx); err != nil {
		t.Fatalf("compacting again: %v", err)
	}
}

func TestDB_compactLoop(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the compactor's first tick (1s)")
	}
	// Idle while the retention is negative, the compactor starts once it
	// is set.
	db := open(t, Options{Retention: -1})
	rev := must[int64](t)(db.Create(t.Context(), "/a", nil))
	db.SetRetention(time.Millisecond)
	deadline := time.Now().Add(waitLimit(t))
	for must[int64](t)(db.CompactedRevision(t.Context())) != rev {
		if time.Now().After(deadline) {
			t.Fatal("the background compactor did not compact")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestDB_SetRetention(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	db := open(t, Options{Retention: -1, Now: clock.Now})
	rev := must[int64](t)
	ctx := t.Context()
	r1 := rev(db.Create(ctx, "/a", nil))
	clock.Add(time.Hour)
	r2 := rev(db.Create(ctx, "/b", nil))
	// Negative: all history is kept, however old.
	if err := db.CompactExpired(ctx); err != nil || rev(db.CompactedRevision(ctx)) != 0 {
		t.Fatalf("horizon with Retention -1: %d, %v", rev(db.CompactedRevision(ctx)), err)
	}
	// Ten minutes: the hour-old write goes, the new one stays.
	db.SetRetention(10 * time.Minute)
	if db.Retention() != 10*time.Minute {
		t.Errorf("Retention() = %v", db.Retention())
	}
	if err := db.CompactExpired(ctx); err != nil || rev(db.CompactedRevision(ctx)) != r1 {
		t.Fatalf("horizon = %d (%v), want %d", rev(db.CompactedRevision(ctx)), err, r1)
	}
	// 0 is the default.
	db.SetRetention(0)
	if db.Retention() != DefaultRetention {
		t.Errorf("Retention() = %v after SetRetention(0)", db.Retention())
	}
	clock.Add(DefaultRetention)
	if err := db.CompactExpired(ctx); err != nil || rev(db.CompactedRevision(ctx)) != r2 {
		t.Fatalf("horizon = %d (%v), want %d", rev(db.CompactedRevision(ctx)), err, r2)
	}
}

// TestDB_Watch_compactedDuringReplay: a compaction that overtakes a replay
// (which reads history in batches) ends the watch with ErrCompacted; what it
// delivered before is exact.
func TestDB_Watch_compactedDuringReplay(t *testing.T) {
	db := open(t, Options{})
	ctx := t.Context()
	var revs []int64
	for i := range 2*replayBatch + 10 {
		revs = append(revs, must[int64](t)(db.Create(ctx, fmt.Sprintf("/k/%04d", i), nil)))
	}
	w, err := db.Watch(ctx, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if err := db.Compact(ctx, revs[len(revs)-1]); err != nil {
		t.Fatal(err)
	}
	var got int
	for ev := range w.Events() {
		if ev.KV.ModRevision != revs[got] {
			t.Fatalf("event %d at revision %d, want %d", got, ev.KV.ModRevision, revs[got])
		}
		got++
	}
	if !errors.Is(w.Err(), ErrCompacted) || got >= len(revs) {
		t.Fatalf("watch ended with %v after %d of %d events; want ErrCompacted before the end", w.Err(), got, len(revs))
	}
}

// waitLimit bounds a wait for something that must happen. It only ends a
// broken run, so it is generous: a loaded machine (CI) can be many times
// slower than an idle one. It leaves a margin before the test binary's
// -timeout for the test to fail with its own message.
func waitLimit(t *testing.T) time.Duration {
	if d, ok := t.Deadline(); ok {
		return max(time.Until(d)-30*time.Second, time.Until(d)/2)
	}
	return 2 * time.Minute
}
