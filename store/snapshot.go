package store

import (
	"context"
	"fmt"
)

// Snapshot writes a consistent copy of the database, history and horizon
// included, to a new file at path (which must not exist), as one read
// transaction sees it: writes carry on meanwhile. Open(path) opens the copy.
func (db *DB) Snapshot(ctx context.Context, path string) error {
	if err := db.check(ctx); err != nil {
		return err
	}
	// VACUUM INTO reads inside one transaction and writes a compact file
	// (no WAL beside it), so the copy stands alone.
	if _, err := db.sql.ExecContext(dbctx(ctx), `VACUUM INTO ?`, path); err != nil {
		return db.fail(err)
	}
	return nil
}

// Size returns the bytes the database's data takes, history included: its
// pages less those free for reuse (what compaction frees).
func (db *DB) Size(ctx context.Context) (int64, error) {
	if err := db.check(ctx); err != nil {
		return 0, err
	}
	var pages, free, pageSize int64
	err := db.sql.QueryRowContext(dbctx(ctx), `SELECT page_count, freelist_count, page_size FROM pragma_page_count(), pragma_freelist_count(), pragma_page_size()`).Scan(&pages, &free, &pageSize)
	if err != nil {
		return 0, db.fail(err)
	}
	return (pages - free) * pageSize, nil
}

// CheckFile reports whether the file at path is a store database that Open
// may be trusted with, for a file that came from elsewhere (an uploaded
// snapshot): an intact SQLite database holding only the store's tables and
// index, no triggers or views that a write would run, at a schema version
// this program reads.
func CheckFile(ctx context.Context, path string) error {
	sdb, err := openDB(path)
	if err != nil {
		return fmt.Errorf("store: %w", err)
	}
	defer sdb.Close()
	ctx = dbctx(ctx)
	var integrity string
	if err := sdb.QueryRowContext(ctx, `PRAGMA quick_check`).Scan(&integrity); err != nil {
		return translateErr(err)
	}
	if integrity != "ok" {
		return fmt.Errorf("store: not an intact database: %s", integrity)
	}
	var version int
	if err := sdb.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&version); err != nil {
		return translateErr(err)
	}
	if version != schemaVersion {
		return fmt.Errorf("store: schema version %d, want %d", version, schemaVersion)
	}
	rows, err := sdb.QueryContext(ctx, `SELECT type, name FROM sqlite_schema`)
	if err != nil {
		return translateErr(err)
	}
	defer rows.Close()
	want := map[string]string{"kv": "table", "kv_key": "index", "meta": "table", "sqlite_sequence": "table", "sqlite_autoindex_meta_1": "index"}
	for rows.Next() {
		var typ, name string
		if err := rows.Scan(&typ, &name); err != nil {
			return translateErr(err)
		}
		if want[name] != typ {
			return fmt.Errorf("store: unexpected %s %q in the database", typ, name)
		}
	}
	if err := rows.Err(); err != nil {
		return translateErr(err)
	}
	return nil
}
