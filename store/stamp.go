package store

import (
	"context"
	"fmt"
)

// stampSQL records a stamp and the revision it is for.
const stampSQL = `INSERT INTO meta (name, value) VALUES ('stamp', ?), ('stamp_rev', ?)
	ON CONFLICT (name) DO UPDATE SET value = excluded.value`

// Stamp implements Store. It reads no row: Open loaded the stamp.
func (db *DB) Stamp(ctx context.Context) (int64, bool, error) {
	if err := db.check(ctx); err != nil {
		return 0, false, err
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	return db.stamp, db.stampRev == db.rev.Load(), nil
}

// SetStamp implements Store.
func (db *DB) SetStamp(ctx context.Context, stamp, rev int64) error {
	if err := db.check(ctx); err != nil {
		return err
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closed.Load() {
		return ErrClosed
	}
	if cur := db.rev.Load(); rev != cur {
		return fmt.Errorf("%w: stamp for revision %d, current %d", ErrConflict, rev, cur)
	}
	if _, err := db.sql.ExecContext(dbctx(ctx), stampSQL, stamp, rev); err != nil {
		return db.fail(err)
	}
	db.stamp, db.stampRev = stamp, rev
	return nil
}
