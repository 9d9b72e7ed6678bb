package store

import (
	"context"
	"errors"
)

// Sentinel errors. Drivers translate SQLite errors into these inside the driver
// file, so nothing above the store ever sees a driver type; callers match them
// with errors.Is.
var (
	// ErrNotFound: the key does not exist (at the requested revision).
	ErrNotFound = errors.New("store: key not found")
	// ErrExists: Create of a key that already exists.
	ErrExists = errors.New("store: key already exists")
	// ErrConflict: a compare-and-swap failed because the key's current
	// revision is not the expected one.
	ErrConflict = errors.New("store: revision conflict")
	// ErrCompacted: the requested revision is older than the compaction
	// horizon, so its history is gone.
	ErrCompacted = errors.New("store: revision has been compacted")
	// ErrFutureRevision: the requested revision is newer than the current one.
	ErrFutureRevision = errors.New("store: revision is in the future")
	// ErrWatcherTooSlow ends a watch whose consumer fell behind; see Watch.
	ErrWatcherTooSlow = errors.New("store: watcher too slow, resume from the last revision seen")
	// ErrClosed: the store has been closed.
	ErrClosed = errors.New("store: closed")
)

// KeyValue is one key's value as of some revision.
type KeyValue struct {
	Key   string
	Value []byte
	// CreateRevision is the revision at which this incarnation of the key was
	// created; ModRevision the revision of its latest change.
	CreateRevision int64
	ModRevision    int64
}

// EventType says what a change did to its key.
type EventType int

const (
	Created EventType = iota + 1
	Updated
	Deleted
	// Progress answers Watcher.RequestProgress: every change under the
	// watch's prefix up to KV.ModRevision has been delivered. Its KV carries
	// only that revision.
	Progress
)

// Event is one change, as delivered by Watch.
type Event struct {
	Type EventType
	// KV is the key after the change; for Deleted its Value is the last value
	// the key held and ModRevision is the deletion's revision.
	KV KeyValue
	// Prev is the key before the change (nil for Created). Watchers filtering
	// by content need it to turn a change that leaves their filter into a delete.
	Prev *KeyValue
}

// ListResult is one page of a range read.
type ListResult struct {
	Items []KeyValue
	// Revision is the snapshot the page was read at: pass it back as atRev to
	// read the next page from the same snapshot.
	Revision int64
	// Remaining counts the keys in the range after the last returned item at
	// that snapshot (0 when the page ends the range).
	Remaining int64
}

// Store is a revisioned (MVCC) key-value store. Every write gets the next value
// of one global, strictly increasing revision.
type Store interface {
	// Create stores value under key and returns the new revision.
	// ErrExists if the key exists.
	Create(ctx context.Context, key string, value []byte) (int64, error)
	// CreateAll stores each of kvs (their Key and Value) as Create would,
	// in order, at consecutive revisions, in one transaction: all of them,
	// or none with ErrExists if one of the keys exists (or appears twice).
	// It returns the revision of the last (the current revision if kvs is
	// empty).
	CreateAll(ctx context.Context, kvs []KeyValue) (int64, error)
	// Update replaces key's value if its ModRevision equals expectedRev
	// (0 means unconditionally) and returns the new revision. ErrNotFound if
	// the key does not exist, ErrConflict if its revision differs.
	Update(ctx context.Context, key string, value []byte, expectedRev int64) (int64, error)
	// Delete removes key if its ModRevision equals expectedRev (0 means
	// unconditionally) and returns the deletion's revision and the value
	// deleted. ErrNotFound if the key does not exist, ErrConflict if its
	// revision differs.
	Delete(ctx context.Context, key string, expectedRev int64) (int64, KeyValue, error)
	// Get returns key as of revision atRev (0 means the latest).
	// ErrNotFound if it does not exist then, ErrCompacted if atRev is older
	// than the compaction horizon, ErrFutureRevision if it is newer than the
	// current revision.
	Get(ctx context.Context, key string, atRev int64) (KeyValue, error)
	// List returns up to limit keys (0 means no limit) that start with prefix
	// and are >= startKey (startKey "" means from the beginning of the
	// prefix), in key order, as of revision atRev (0 means the latest: the
	// result's Revision says which). Errors as for Get.
	List(ctx context.Context, prefix, startKey string, limit int, atRev int64) (ListResult, error)
	// Count returns the number of keys starting with prefix at the latest revision.
	Count(ctx context.Context, prefix string) (int64, error)
	// Keys returns the keys starting with prefix at the latest revision, in
	// key order, without their values: what List would return of them, for
	// far less reading.
	Keys(ctx context.Context, prefix string) ([]string, error)
	// CurrentRevision returns the revision of the latest write.
	CurrentRevision(ctx context.Context) (int64, error)
	// LastWriteUnder returns a revision at or after that of the newest
	// write to a key starting with prefix, so that what was read under prefix
	// at a revision at or after it is still current. A prefix is followed
	// from the first question about it on: until a write under it, the
	// answer is the revision of that question.
	LastWriteUnder(prefix string) int64
	// CompactedRevision returns the compaction horizon (0 if nothing was
	// compacted): the changes at or below it are gone, so reads at a
	// revision below it, and watches after one, fail with ErrCompacted;
	// reads at the horizon itself still see each key's value as of it.
	CompactedRevision(ctx context.Context) (int64, error)
	// Watch delivers, in revision order, every change to keys starting with
	// prefix with a revision greater than afterRev: first replayed from
	// history, then live, with no gap or duplicate. ErrCompacted if afterRev
	// is older than the horizon, ErrFutureRevision if newer than the current
	// revision.
	//
	// Slow consumers: delivery never blocks writers. Each watcher has a
	// bounded buffer; a watcher whose buffer fills is ended with
	// ErrWatcherTooSlow, and its consumer resumes by watching again after the
	// last revision it received (as a client reconnecting after a watch
	// timeout does). The watch ends when ctx is done or the store closes.
	Watch(ctx context.Context, prefix string, afterRev int64) (Watcher, error)
	// SetStamp records stamp, a value of the caller's own, for the store's
	// contents as of revision rev, with them (a snapshot keeps it): a
	// caller that checked something true of the contents records it, so as
	// not to check again while they stay the same. ErrConflict if rev is
	// not the current revision: the contents changed since the check.
	SetStamp(ctx context.Context, stamp, rev int64) error
	// Stamp returns the latest stamp SetStamp recorded (0 if none), and
	// whether it is for the contents as they are: false once anything has
	// been written since.
	Stamp(ctx context.Context) (stamp int64, current bool, err error)
	// Compact drops history at or below rev, keeping each key's value as of
	// rev, and moves the horizon to rev. Compacting at or below the current
	// horizon is a no-op.
	Compact(ctx context.Context, rev int64) error
	// Close releases the database and ends all watches.
	Close() error
}

// Watcher is one watch's stream of events.
type Watcher interface {
	// Events is closed when the watch ends; Err then says why (nil if its
	// context was cancelled or Stop was called).
	Events() <-chan Event
	Err() error
	// Stop ends the watch; safe to call more than once.
	Stop()
	// RequestProgress asks for a Progress event at the store's current
	// revision, delivered after every change up to it (as etcd's progress
	// requests), so a quiet watch can learn how far it is.
	RequestProgress()
}
