package store

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// latestSQL reads a key's newest row, live or tombstone.
const latestSQL = `SELECT rev, value, create_rev, deleted FROM kv WHERE key = ? ORDER BY rev DESC LIMIT 1`

const insertSQL = `INSERT INTO kv (rev, key, value, create_rev, prev_rev, deleted, written_at)
	VALUES (?, ?, ?, ?, ?, ?, ?)`

// Create implements Store.
func (db *DB) Create(ctx context.Context, key string, value []byte) (int64, error) {
	ev, err := db.write(ctx, key, func(cur *KeyValue, rev int64) (Event, error) {
		if cur != nil {
			return Event{}, fmt.Errorf("%w: %q", ErrExists, key)
		}
		return Event{Type: Created, KV: KeyValue{Key: key, Value: bytes.Clone(value), CreateRevision: rev, ModRevision: rev}}, nil
	})
	return ev.KV.ModRevision, err
}

// Update implements Store.
func (db *DB) Update(ctx context.Context, key string, value []byte, expectedRev int64) (int64, error) {
	ev, err := db.write(ctx, key, func(cur *KeyValue, rev int64) (Event, error) {
		if err := compare(key, cur, expectedRev); err != nil {
			return Event{}, err
		}
		kv := KeyValue{Key: key, Value: bytes.Clone(value), CreateRevision: cur.CreateRevision, ModRevision: rev}
		return Event{Type: Updated, KV: kv, Prev: cur}, nil
	})
	return ev.KV.ModRevision, err
}

// Delete implements Store.
func (db *DB) Delete(ctx context.Context, key string, expectedRev int64) (int64, KeyValue, error) {
	ev, err := db.write(ctx, key, func(cur *KeyValue, rev int64) (Event, error) {
		if err := compare(key, cur, expectedRev); err != nil {
			return Event{}, err
		}
		kv := KeyValue{Key: key, Value: cur.Value, CreateRevision: cur.CreateRevision, ModRevision: rev}
		return Event{Type: Deleted, KV: kv, Prev: cur}, nil
	})
	if err != nil {
		return 0, KeyValue{}, err
	}
	return ev.KV.ModRevision, *ev.Prev, nil
}

// compare is the compare-and-swap test of Update and Delete.
func compare(key string, cur *KeyValue, expectedRev int64) error {
	switch {
	case cur == nil:
		return fmt.Errorf("%w: %q", ErrNotFound, key)
	case expectedRev != 0 && cur.ModRevision != expectedRev:
		return fmt.Errorf("%w: %q is at revision %d, not %d", ErrConflict, key, cur.ModRevision, expectedRev)
	}
	return nil
}

// write performs one write to key under the write lock: it reads the key's
// current value (nil if absent), asks decide for the event the write makes at
// revision rev (or an error: nothing is written), appends that row, and
// publishes the event to the watchers before releasing the lock, so they see
// writes in commit order.
//
// The read and the insert need no transaction: the write lock makes this the
// only writer of the database (one process per database file), and the
// insert alone is atomic. Should another writer appear anyway, the explicit
// rev collides with its row and the primary key turns the write into
// ErrConflict instead of a fork in history.
func (db *DB) write(ctx context.Context, key string, decide func(cur *KeyValue, rev int64) (Event, error)) (Event, error) {
	if err := db.check(ctx); err != nil {
		return Event{}, err
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closed.Load() {
		return Event{}, ErrClosed
	}
	dctx := dbctx(ctx)
	cur, err := db.latest(dctx, key)
	if err != nil {
		return Event{}, db.fail(err)
	}
	rev := db.rev.Load() + 1
	ev, err := decide(cur, rev)
	if err != nil {
		return Event{}, err
	}
	value, prevRev, deleted := ev.KV.Value, int64(0), 0
	if ev.Prev != nil {
		prevRev = ev.Prev.ModRevision
	}
	if ev.Type == Deleted {
		value, deleted = nil, 1 // a tombstone's value is its predecessor's
	}
	if value == nil {
		value = []byte{} // NOT NULL; go-sqlite3 binds a nil slice as NULL
	}
	_, err = db.sql.ExecContext(dctx, insertSQL,
		rev, []byte(key), value, ev.KV.CreateRevision, prevRev, deleted, db.opts.Now().UnixMilli())
	if err != nil {
		return Event{}, db.fail(err)
	}
	db.rev.Store(rev)
	db.publish(ev)
	return ev, nil
}

// latest returns key's current value, or nil if it does not exist.
func (db *DB) latest(ctx context.Context, key string) (*KeyValue, error) {
	kv := KeyValue{Key: key}
	var deleted bool
	err := db.sql.QueryRowContext(ctx, latestSQL, []byte(key)).Scan(&kv.ModRevision, &kv.Value, &kv.CreateRevision, &deleted)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && deleted) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &kv, nil
}
