//go:build cgo && !js

package store

import (
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/mattn/go-sqlite3"
)

// Native driver: github.com/mattn/go-sqlite3 (SQLite compiled in with cgo).

// fileParams configure every connection to a database file: WAL lets reads
// run beside the (single, serialised) writer; synchronous=NORMAL is durable
// across application crashes and loses at most the last commits on power
// loss, the usual WAL trade; the busy timeout covers the WAL checkpoint and
// the rare reader that meets a lock; go-sqlite3 keeps prepared statements.
const fileParams = "_journal_mode=WAL&_synchronous=NORMAL&_busy_timeout=5000&_stmt_cache_size=32"

// openDB opens a pool of go-sqlite3 connections.
//
// Difference from the browser driver: a file gets a pool, so reads run
// concurrently with the writer. An in-memory database gets exactly one
// connection that is never retired, because each connection to ":memory:"
// is its own separate database (shared cache would share it, but with table
// locks that make readers fail while a write is under way). The browser
// driver always has one connection.
func openDB(dsn string) (*sql.DB, error) {
	if dsn == "" || dsn == ":memory:" {
		db, err := sql.Open("sqlite3", ":memory:?_stmt_cache_size=32")
		if err != nil {
			return nil, err
		}
		db.SetMaxOpenConns(1)
		db.SetMaxIdleConns(1)
		db.SetConnMaxLifetime(0)
		db.SetConnMaxIdleTime(0)
		return db, ping(db)
	}
	// A "file:" URI, so that a path may contain '?' or '#'.
	uri := "file:" + strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(dsn) + "?" + fileParams
	db, err := sql.Open("sqlite3", uri)
	if err != nil {
		return nil, err
	}
	db.SetMaxIdleConns(8)
	return db, ping(db)
}

// ping opens the first connection, so a bad path fails in Open.
func ping(db *sql.DB) error {
	if err := db.Ping(); err != nil {
		db.Close()
		return translateErr(err)
	}
	return nil
}

// translateErr translates go-sqlite3 errors by their extended result code.
//
// Difference from the browser driver: the code comes from sqlite3.Error
// (a Go value) instead of the resultCode of a JavaScript SQLite3Error.
func translateErr(err error) error {
	var e sqlite3.Error
	if errors.As(err, &e) {
		return fromResultCode(int(e.ExtendedCode), err)
	}
	return fmt.Errorf("store: %w", err)
}
