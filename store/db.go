package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

var _ Store = (*DB)(nil)

// Options tune a DB. The zero value is ready to use.
type Options struct {
	// Retention: history older than this is compacted automatically
	// (default 5*time.Minute; negative disables the background compactor;
	// SetRetention changes it).
	Retention time.Duration
	// WatchBuffer: events buffered per watcher before it is ended with
	// ErrWatcherTooSlow (default 1024).
	WatchBuffer int
	// Now: clock, for tests (default time.Now).
	Now func() time.Time
	// ListCacheBytes bounds the memory for the listings of whole prefixes
	// kept at the current revision, so that listing them again costs no
	// query (default DefaultListCacheBytes); a quarter of it is the largest
	// listing kept.
	ListCacheBytes int
}

// DefaultRetention is the history a store keeps unless told otherwise.
const DefaultRetention = 5 * time.Minute

const (
	defaultWatchBuffer = 1024
	// minCompactInterval bounds how often the background compactor runs.
	minCompactInterval = time.Second
)

func (o Options) withDefaults() Options {
	if o.Retention == 0 {
		o.Retention = DefaultRetention
	}
	if o.WatchBuffer <= 0 {
		o.WatchBuffer = defaultWatchBuffer
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.ListCacheBytes <= 0 {
		o.ListCacheBytes = DefaultListCacheBytes
	}
	return o
}

// schemaVersion is stored in PRAGMA user_version; Open refuses newer files.
const schemaVersion = 1

// schema is the whole database; see the package doc for what each column means.
// Keys are BLOBs so that range bounds compare byte-wise and reach SQLite
// unchanged through either driver (a JS string cannot carry arbitrary bytes).
var schema = []string{
	`CREATE TABLE IF NOT EXISTS kv (
		rev        INTEGER PRIMARY KEY AUTOINCREMENT,
		key        BLOB    NOT NULL,
		value      BLOB    NOT NULL,
		create_rev INTEGER NOT NULL,
		prev_rev   INTEGER NOT NULL,
		deleted    INTEGER NOT NULL,
		written_at INTEGER NOT NULL
	) STRICT`,
	// deleted is in the index so that the live keys of a range are found
	// from the index alone (see liveKeys).
	`CREATE INDEX IF NOT EXISTS kv_key ON kv (key, rev, deleted)`,
	`CREATE TABLE IF NOT EXISTS meta (
		name  TEXT    PRIMARY KEY,
		value INTEGER NOT NULL
	) STRICT, WITHOUT ROWID`,
}

// stateSQL reads the current revision and the compaction horizon. The current
// revision comes from sqlite_sequence, which AUTOINCREMENT keeps at the highest
// revision ever written even when compaction has deleted that row.
const stateSQL = `SELECT
	ifnull((SELECT seq FROM sqlite_sequence WHERE name = 'kv'), 0),
	ifnull((SELECT value FROM meta WHERE name = 'compact_rev'), 0)`

// openSQL reads, at Open, stateSQL's and the stamp and its revision (see
// SetStamp; -1 for none).
const openSQL = `SELECT s.*,
	ifnull((SELECT value FROM meta WHERE name = 'stamp'), 0),
	ifnull((SELECT value FROM meta WHERE name = 'stamp_rev'), -1)
	FROM (` + stateSQL + `) AS s`

// DB is the Store on SQLite. It is safe for concurrent use.
type DB struct {
	sql  *sql.DB
	opts Options

	// mu serialises writes and compactions, so commit order is revision
	// order is notification order. Reads do not take it.
	mu sync.Mutex
	// rev and horizon mirror the database's current revision and
	// compaction horizon; they change only under mu, after a commit.
	rev     atomic.Int64
	horizon atomic.Int64
	closed  atomic.Bool // set under mu
	// stamp is the latest SetStamp's, for the contents at stampRev (under mu).
	stamp, stampRev int64

	watchMu  sync.Mutex
	watchers map[*watcher]struct{}

	lists listCache // see List
	// gets keeps the current values of keys read at the latest revision
	// (each an entry of its own, named by the key): what every create reads
	// first, its namespace. A write to a key clears its entry as it clears
	// the listings it is under (see committed; a write to a key that
	// extends another clears that one's too, a needless miss), so a value
	// found here is the key's current one.
	gets listCache
	// prefixWrites answers LastWriteUnder.
	prefixWrites prefixWrites

	// retention is the history kept (a time.Duration; SetRetention
	// changes it and signals retentionChanged to the compactor).
	retention        atomic.Int64
	retentionChanged chan struct{}
	historyChanges   chan struct{} // see historyChanged
	stopCompactor    context.CancelFunc
	compactorDone    chan struct{}
}

// Open opens (creating if needed) the database named by dsn: natively a file
// path, in the browser a database name; "" or ":memory:" is a fresh in-memory
// database. The caller must Close it.
func Open(ctx context.Context, dsn string, opts Options) (*DB, error) {
	sdb, err := openDB(dsn)
	if err != nil {
		return nil, fmt.Errorf("store: open %q: %w", dsn, err)
	}
	db := &DB{
		sql:      sdb,
		opts:     opts.withDefaults(),
		watchers: make(map[*watcher]struct{}),
	}
	if err := db.init(ctx); err != nil {
		sdb.Close()
		return nil, fmt.Errorf("store: open %q: %w", dsn, err)
	}
	db.lists.budget = db.opts.ListCacheBytes
	db.gets.budget = DefaultListCacheBytes
	db.retention.Store(int64(db.opts.Retention))
	db.retentionChanged = make(chan struct{}, 1)
	db.historyChanges = make(chan struct{}, 1)
	cctx, cancel := context.WithCancel(context.Background())
	db.stopCompactor = cancel
	db.compactorDone = make(chan struct{})
	go db.compactLoop(cctx)
	return db, nil
}

// init creates the schema unless the database has it, and loads the
// revision and horizon. A database of the current version is only read: in
// a browser the first write to a new saved database costs a fifth of a
// second, which would delay the engine's start.
func (db *DB) init(ctx context.Context) error {
	var version int
	if err := db.sql.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&version); err != nil {
		return translateErr(err)
	}
	switch {
	case version > schemaVersion:
		return fmt.Errorf("database schema version %d is newer than this program's (%d)", version, schemaVersion)
	case version < schemaVersion:
		if err := db.createSchema(ctx); err != nil {
			return err
		}
	}
	var rev, horizon int64
	if err := db.sql.QueryRowContext(ctx, openSQL).Scan(&rev, &horizon, &db.stamp, &db.stampRev); err != nil {
		return translateErr(err)
	}
	db.rev.Store(rev)
	db.horizon.Store(horizon)
	return nil
}

// createSchema creates what the database lacks of the schema and marks it
// with schemaVersion, last, so that a database marked has it all.
func (db *DB) createSchema(ctx context.Context) error {
	for _, stmt := range schema {
		if _, err := db.sql.ExecContext(ctx, stmt); err != nil {
			return translateErr(err)
		}
	}
	if _, err := db.sql.ExecContext(ctx, fmt.Sprintf(`PRAGMA user_version = %d`, schemaVersion)); err != nil {
		return translateErr(err)
	}
	return nil
}

// Close stops the compactor, ends all watches with ErrClosed and closes the
// database. Later calls return nil; every other method returns ErrClosed.
func (db *DB) Close() error {
	db.mu.Lock()
	if db.closed.Load() {
		db.mu.Unlock()
		return nil
	}
	db.closed.Store(true)
	db.mu.Unlock()

	db.stopCompactor()
	<-db.compactorDone
	db.endWatchers(ErrClosed)
	return db.sql.Close()
}

// CurrentRevision implements Store.
func (db *DB) CurrentRevision(ctx context.Context) (int64, error) {
	if err := db.check(ctx); err != nil {
		return 0, err
	}
	return db.rev.Load(), nil
}

// CompactedRevision implements Store.
func (db *DB) CompactedRevision(ctx context.Context) (int64, error) {
	if err := db.check(ctx); err != nil {
		return 0, err
	}
	return db.horizon.Load(), nil
}

// check is the entry test of every method: a done context or a closed store.
func (db *DB) check(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if db.closed.Load() {
		return ErrClosed
	}
	return nil
}

// fail turns an error from database/sql into what callers see: ErrClosed if
// the store was closed under the operation, else the driver's translation.
func (db *DB) fail(err error) error {
	if db.closed.Load() {
		return ErrClosed
	}
	return translateErr(err)
}

// dbctx is the context for database calls. Callers' cancellation is checked
// at entry and between watch batches, never passed down: database/sql
// discards a connection whose transaction's context is cancelled, and
// discarding the only connection of an in-memory database would lose it.
// Each call is short, so nothing waits long for it.
func dbctx(ctx context.Context) context.Context { return context.WithoutCancel(ctx) }

// checkRev validates a requested read revision against the current revision
// and the horizon and returns the revision to read at (0 means cur).
func checkRev(atRev, cur, horizon int64) (int64, error) {
	switch {
	case atRev == 0:
		return cur, nil
	case atRev > cur:
		return 0, fmt.Errorf("%w: %d > %d", ErrFutureRevision, atRev, cur)
	case atRev < horizon:
		return 0, fmt.Errorf("%w: %d < %d", ErrCompacted, atRev, horizon)
	}
	return atRev, nil
}

// read runs fn in one read transaction, so all its statements see the same
// snapshot, with the snapshot's current revision and horizon.
func (db *DB) read(ctx context.Context, fn func(tx *sql.Tx, cur, horizon int64) error) error {
	if err := db.check(ctx); err != nil {
		return err
	}
	tx, err := db.sql.BeginTx(dbctx(ctx), nil)
	if err != nil {
		return db.fail(err)
	}
	defer tx.Rollback() // read-only: rolling back is ending it
	var cur, horizon int64
	if err := tx.QueryRow(stateSQL).Scan(&cur, &horizon); err != nil {
		return db.fail(err)
	}
	if err := fn(tx, cur, horizon); err != nil {
		if isSentinel(err) {
			return err
		}
		return db.fail(err)
	}
	return nil
}

// isSentinel says whether err is already one of the store's own errors.
func isSentinel(err error) bool {
	for _, s := range []error{ErrNotFound, ErrExists, ErrConflict, ErrCompacted, ErrFutureRevision, ErrClosed} {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}
