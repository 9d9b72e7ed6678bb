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

// CreateAll implements Store. One transaction makes one commit of what
// would otherwise be one per key: what a new cluster's first start writes.
func (db *DB) CreateAll(ctx context.Context, kvs []KeyValue) (int64, error) {
	if err := db.check(ctx); err != nil {
		return 0, err
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closed.Load() {
		return 0, ErrClosed
	}
	dctx := dbctx(ctx)
	tx, err := db.sql.BeginTx(dctx, nil)
	if err != nil {
		return 0, db.fail(err)
	}
	defer tx.Rollback()
	first, now := db.rev.Load()+1, db.opts.Now().UnixMilli()
	events := make([]Event, len(kvs))
	for i, kv := range kvs {
		// The transaction sees its own rows: a key twice is found here too.
		cur, err := latest(dctx, tx, kv.Key)
		if err != nil {
			return 0, db.fail(err)
		}
		if cur != nil {
			return 0, fmt.Errorf("%w: %q", ErrExists, kv.Key)
		}
		rev := first + int64(i)
		value := bytes.Clone(kv.Value)
		if value == nil {
			value = []byte{} // NOT NULL; go-sqlite3 binds a nil slice as NULL
		}
		if _, err := tx.Exec(insertSQL, rev, []byte(kv.Key), value, rev, 0, 0, now); err != nil {
			return 0, db.fail(err)
		}
		events[i] = Event{Type: Created, KV: KeyValue{Key: kv.Key, Value: value, CreateRevision: rev, ModRevision: rev}}
	}
	if err := tx.Commit(); err != nil {
		return 0, db.fail(err)
	}
	last := first - 1 + int64(len(kvs))
	db.committed(last, events...)
	return last, nil
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
	cur, err := latest(dctx, db.sql, key)
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
	db.committed(rev, ev)
	return ev, nil
}

// committed records that the writes up to rev are in the database, and
// publishes their events; it requires db.mu, so that watchers see writes in
// commit order. The cached listings and kept values the writes change are
// cleared before the revision moves, so that none is served at a revision
// after a change to it.
func (db *DB) committed(rev int64, events ...Event) {
	for _, ev := range events {
		db.lists.written(ev.KV.Key, ev.KV.ModRevision)
		db.gets.written(ev.KV.Key, ev.KV.ModRevision)
		db.prefixWrites.written(ev.KV.Key, ev.KV.ModRevision)
	}
	db.rev.Store(rev)
	db.historyChanged()
	for _, ev := range events {
		db.publish(ev)
	}
}

// rowQuerier is the database or a transaction in it.
type rowQuerier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// latest returns key's current value, or nil if it does not exist.
func latest(ctx context.Context, q rowQuerier, key string) (*KeyValue, error) {
	kv := KeyValue{Key: key}
	var deleted bool
	err := q.QueryRowContext(ctx, latestSQL, []byte(key)).Scan(&kv.ModRevision, &kv.Value, &kv.CreateRevision, &deleted)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && deleted) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &kv, nil
}
