package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// compactSQL drops, in order, with ?1 the old horizon and ?2 the new one:
//  1. every row superseded by a newer row of its key at or below the new
//     horizon: such a newer row has a revision in (old, new], because the
//     previous compaction left at most one row per key at or below old;
//  2. the tombstones in (old, new]: a key deleted at or below the horizon
//     does not exist as of it (and step 1 has dropped its earlier rows).
//
// Then it records the horizon. What remains at or below the horizon is each
// key's value as of the horizon, so reads at the horizon still work.
var compactSQL = []string{
	`DELETE FROM kv WHERE rev IN (
		SELECT o.rev FROM kv AS n JOIN kv AS o ON o.key = n.key AND o.rev < n.rev
		WHERE n.rev > ?1 AND n.rev <= ?2)`,
	`DELETE FROM kv WHERE rev > ?1 AND rev <= ?2 AND deleted = 1`,
	`INSERT INTO meta (name, value) VALUES ('compact_rev', ?2)
		ON CONFLICT (name) DO UPDATE SET value = excluded.value`,
}

// Compact implements Store.
func (db *DB) Compact(ctx context.Context, rev int64) error {
	if err := db.check(ctx); err != nil {
		return err
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closed.Load() {
		return ErrClosed
	}
	return db.compactLocked(ctx, rev)
}

func (db *DB) compactLocked(ctx context.Context, rev int64) error {
	old, cur := db.horizon.Load(), db.rev.Load()
	if rev > cur {
		return fmt.Errorf("%w: %d > %d", ErrFutureRevision, rev, cur)
	}
	if rev <= old {
		return nil
	}
	tx, err := db.sql.BeginTx(dbctx(ctx), nil)
	if err != nil {
		return db.fail(err)
	}
	defer tx.Rollback()
	for _, stmt := range compactSQL {
		if _, err := tx.Exec(stmt, old, rev); err != nil {
			return db.fail(err)
		}
	}
	if err := tx.Commit(); err != nil {
		return db.fail(err)
	}
	db.horizon.Store(rev)
	db.historyChanged()
	return nil
}

// expiredSQL finds the oldest revision above the horizon written after the
// cutoff: everything below it has expired. Scanning revisions in order
// rather than taking max(rev) by time keeps a clock step back from
// compacting rows that are still young.
const expiredSQL = `SELECT rev FROM kv WHERE rev > ? AND written_at > ? ORDER BY rev LIMIT 1`

// CompactExpired compacts away the history written more than the
// retention ago, by the store's clock (Options.Now): what the background
// compactor does on its own, done now (after a jump of that clock, say).
// With a negative retention it does nothing.
func (db *DB) CompactExpired(ctx context.Context) error {
	retention := db.Retention()
	if retention < 0 {
		return nil
	}
	if err := db.check(ctx); err != nil {
		return err
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closed.Load() {
		return ErrClosed
	}
	cutoff := db.opts.Now().Add(-retention).UnixMilli()
	horizon := db.rev.Load() // nothing written since the cutoff: all of it expired
	var young int64
	err := db.sql.QueryRowContext(dbctx(ctx), expiredSQL, db.horizon.Load(), cutoff).Scan(&young)
	switch {
	case err == sql.ErrNoRows:
	case err != nil:
		return db.fail(err)
	default:
		horizon = young - 1
	}
	return db.compactLocked(ctx, horizon)
}

// Retention returns the history the store keeps (negative: all of it).
func (db *DB) Retention() time.Duration { return time.Duration(db.retention.Load()) }

// SetRetention changes the history the store keeps from now on (0: the
// default; negative: all of it, with no background compaction). The
// background compactor adapts at once; history already compacted stays
// gone.
func (db *DB) SetRetention(d time.Duration) {
	if d == 0 {
		d = DefaultRetention
	}
	db.retention.Store(int64(d))
	select {
	case db.retentionChanged <- struct{}{}:
	default: // a change is pending already
	}
}

// compactLoop runs CompactExpired every retention/10 (at least every
// minCompactInterval) until ctx is done, while there is history to compact:
// once everything written is compacted it sleeps until the next write, so
// an idle store costs nothing. It does not run while the retention is
// negative. Errors are left for the next tick: a failed compaction changes
// nothing.
func (db *DB) compactLoop(ctx context.Context) {
	defer close(db.compactorDone)
	var t *time.Timer
	stop := func() {
		if t != nil {
			t.Stop()
			t = nil
		}
	}
	defer stop()
	for {
		// A write arriving while the timer runs leaves it running, so that a
		// steady stream of writes cannot put compaction off for ever; a
		// compaction that caught up (Compact, say) stops it.
		if db.horizon.Load() >= db.rev.Load() {
			stop()
		}
		if t == nil && db.Retention() >= 0 && db.horizon.Load() < db.rev.Load() {
			t = time.NewTimer(max(db.Retention()/10, minCompactInterval))
		}
		var tick <-chan time.Time
		if t != nil {
			tick = t.C
		}
		select {
		case <-ctx.Done():
			return
		case <-db.retentionChanged:
			stop() // at the new pace
		case <-db.historyChanges:
		case <-tick:
			t = nil
			db.CompactExpired(ctx)
		}
	}
}

// historyChanged wakes the compactor: a write left history to compact, or
// a compaction took it away.
func (db *DB) historyChanged() {
	select {
	case db.historyChanges <- struct{}{}:
	default: // a wake-up is pending already
	}
}
