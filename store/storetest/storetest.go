// Package storetest is the contract test suite of store.Store: every
// implementation runs it (natively and under GOOS=js GOARCH=wasm), so they
// all keep the promises the interface's doc comments make.
//
//	func TestDB_Contract(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) store.Store { ... })
//	}
package storetest

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"kubeplay/store"
)

// Run runs the contract suite. open must return a new, empty store each time,
// with a watch buffer of at most 1024 events (the slow-watcher test writes
// past it); the suite closes it.
func Run(t *testing.T, open func(t *testing.T) store.Store, opts ...Option) {
	s := suite{open: open}
	for _, o := range opts {
		o(&s)
	}
	t.Run("Create", s.testCreate)
	t.Run("CreateAll", s.testCreateAll)
	t.Run("Update", s.testUpdate)
	t.Run("Delete", s.testDelete)
	t.Run("Revisions", s.testRevisions)
	t.Run("Get", s.testGet)
	t.Run("List", s.testList)
	t.Run("Count", s.testCount)
	t.Run("Keys", s.testKeys)
	t.Run("LastWriteUnder", s.testLastWriteUnder)
	t.Run("Compact", s.testCompact)
	t.Run("Stamp", s.testStamp)
	t.Run("Watch", s.testWatch)
	t.Run("Close", s.testClose)
	t.Run("Concurrency", s.testConcurrency)
	t.Run("Reopen", s.testReopen)
	t.Run("Snapshot", s.testSnapshot)
}

// Option adds optional parts to the suite.
type Option func(*suite)

// WithPath enables the persistence tests: openAt opens (creating if needed)
// the store kept at path, which the suite chooses inside t.TempDir(); the
// suite closes it and opens the same path again.
func WithPath(openAt func(t *testing.T, path string) store.Store) Option {
	return func(s *suite) { s.openAt = openAt }
}

type suite struct {
	open   func(t *testing.T) store.Store
	openAt func(t *testing.T, path string) store.Store
}

// new opens a store for one test and closes it when the test ends.
func (s suite) new(t *testing.T) store.Store {
	t.Helper()
	st := s.open(t)
	t.Cleanup(func() { st.Close() })
	return st
}

// timeout bounds every wait for an event: it only ends a broken run, so it
// is long enough for a loaded machine running the suite under Node.
const timeout = 2 * time.Minute

func mustCreate(t testing.TB, s store.Store, key, value string) int64 {
	t.Helper()
	rev, err := s.Create(t.Context(), key, []byte(value))
	if err != nil {
		t.Fatalf("Create(%q): %v", key, err)
	}
	return rev
}

func mustUpdate(t testing.TB, s store.Store, key, value string, expectedRev int64) int64 {
	t.Helper()
	rev, err := s.Update(t.Context(), key, []byte(value), expectedRev)
	if err != nil {
		t.Fatalf("Update(%q, rev %d): %v", key, expectedRev, err)
	}
	return rev
}

func mustDelete(t testing.TB, s store.Store, key string, expectedRev int64) int64 {
	t.Helper()
	rev, _, err := s.Delete(t.Context(), key, expectedRev)
	if err != nil {
		t.Fatalf("Delete(%q, rev %d): %v", key, expectedRev, err)
	}
	return rev
}

func mustGet(t testing.TB, s store.Store, key string, atRev int64) store.KeyValue {
	t.Helper()
	kv, err := s.Get(t.Context(), key, atRev)
	if err != nil {
		t.Fatalf("Get(%q, rev %d): %v", key, atRev, err)
	}
	return kv
}

func currentRev(t testing.TB, s store.Store) int64 {
	t.Helper()
	rev, err := s.CurrentRevision(t.Context())
	if err != nil {
		t.Fatalf("CurrentRevision: %v", err)
	}
	return rev
}

// wantErr fails unless err matches target (nil: no error).
func wantErr(t testing.TB, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: error %v, want %v", what, err, target)
	}
}

// kvs formats key-values for comparison: "key@mod(create)=value".
func kvs(items ...store.KeyValue) []string {
	out := make([]string, len(items))
	for i, kv := range items {
		out[i] = kvString(kv)
	}
	return out
}

func kvString(kv store.KeyValue) string {
	return fmt.Sprintf("%s@%d(%d)=%s", kv.Key, kv.ModRevision, kv.CreateRevision, kv.Value)
}

func kv(key, value string, create, mod int64) store.KeyValue {
	return store.KeyValue{Key: key, Value: []byte(value), CreateRevision: create, ModRevision: mod}
}

func wantKV(t testing.TB, what string, got, want store.KeyValue) {
	t.Helper()
	if got.Key != want.Key || !bytes.Equal(got.Value, want.Value) ||
		got.CreateRevision != want.CreateRevision || got.ModRevision != want.ModRevision {
		t.Fatalf("%s = %s, want %s", what, kvString(got), kvString(want))
	}
}

func wantStrings(t testing.TB, what string, got, want []string) {
	t.Helper()
	if slices.Equal(got, want) {
		return
	}
	if len(got) <= 8 && len(want) <= 8 {
		t.Fatalf("%s:\n got  %s\n want %s", what, strings.Join(got, "; "), strings.Join(want, "; "))
	}
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	at := func(s []string) string {
		if i < len(s) {
			return s[i]
		}
		return "(end)"
	}
	t.Fatalf("%s: %d items, want %d; first difference at %d:\n got  %s\n want %s", what, len(got), len(want), i, at(got), at(want))
}

// Event formatting for comparisons: "Updated key@mod(create)=value prev key@...".
func evString(ev store.Event) string {
	s := fmt.Sprintf("%s %s", typeName(ev.Type), kvString(ev.KV))
	if ev.Prev != nil {
		s += " prev " + kvString(*ev.Prev)
	}
	return s
}

func typeName(t store.EventType) string {
	switch t {
	case store.Created:
		return "Created"
	case store.Updated:
		return "Updated"
	case store.Deleted:
		return "Deleted"
	case store.Progress:
		return "Progress"
	}
	return fmt.Sprintf("EventType(%d)", int(t))
}

func created(kv store.KeyValue) string { return evString(store.Event{Type: store.Created, KV: kv}) }

func progress(rev int64) string {
	return evString(store.Event{Type: store.Progress, KV: store.KeyValue{ModRevision: rev}})
}

func updated(kv, prev store.KeyValue) string {
	return evString(store.Event{Type: store.Updated, KV: kv, Prev: &prev})
}

func deleted(kv, prev store.KeyValue) string {
	return evString(store.Event{Type: store.Deleted, KV: kv, Prev: &prev})
}

// receive returns the watcher's next n events, failing if they take too long
// or the watch ends first.
func receive(t testing.TB, w store.Watcher, n int) []string {
	t.Helper()
	var out []string
	deadline := time.After(timeout)
	for len(out) < n {
		select {
		case ev, ok := <-w.Events():
			if !ok {
				t.Fatalf("watch ended after %d of %d events (Err %v): %s", len(out), n, w.Err(), tail(out))
			}
			out = append(out, evString(ev))
		case <-deadline:
			t.Fatalf("timed out after %d of %d events: %s", len(out), n, tail(out))
		}
	}
	return out
}

// receiveUntil returns the watcher's events up to the one at revision rev.
func receiveUntil(t testing.TB, w store.Watcher, rev int64) []string {
	t.Helper()
	var out []string
	deadline := time.After(timeout)
	for {
		select {
		case ev, ok := <-w.Events():
			if !ok {
				t.Fatalf("watch ended after %d events, before revision %d (Err %v)", len(out), rev, w.Err())
			}
			out = append(out, evString(ev))
			if ev.KV.ModRevision >= rev {
				return out
			}
		case <-deadline:
			t.Fatalf("timed out after %d events, before revision %d", len(out), rev)
		}
	}
}

// tail formats the last few of evs.
func tail(evs []string) string {
	if len(evs) > 3 {
		return "...; " + strings.Join(evs[len(evs)-3:], "; ")
	}
	return strings.Join(evs, "; ")
}

// wantQuiet fails if the watcher delivers anything within a short while.
func wantQuiet(t testing.TB, w store.Watcher) {
	t.Helper()
	select {
	case ev, ok := <-w.Events():
		if ok {
			t.Fatalf("unexpected event %s", evString(ev))
		}
		t.Fatalf("watch ended unexpectedly: %v", w.Err())
	case <-time.After(50 * time.Millisecond):
	}
}

// wantEnd waits for the watch to end and returns its Err.
func wantEnd(t testing.TB, w store.Watcher) error {
	t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case ev, ok := <-w.Events():
			if !ok {
				return w.Err()
			}
			_ = ev
		case <-deadline:
			t.Fatal("watch did not end")
		}
	}
}

func watch(t testing.TB, s store.Store, prefix string, afterRev int64) store.Watcher {
	t.Helper()
	w, err := s.Watch(t.Context(), prefix, afterRev)
	if err != nil {
		t.Fatalf("Watch(%q, %d): %v", prefix, afterRev, err)
	}
	t.Cleanup(w.Stop)
	return w
}
