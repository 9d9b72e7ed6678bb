//go:build js && wasm

package store

import (
	"database/sql"
	"errors"
	"fmt"
	"syscall/js"

	"kubeplay/store/internal/sqlitejs"
)

// Browser driver: the official SQLite WASM build (npm @sqlite.org/sqlite-wasm)
// through its synchronous oo1 API, behind our database/sql driver sqlitejs.

// openDB opens the database dsn in the SQLite module the host initialised
// and published as globalThis.sqlite3 before starting Go.
//
// Difference from the native driver: always exactly one connection, never
// retired. Each oo1.DB on ":memory:" is a separate database, and a second
// connection would buy nothing: Go runs on the page's one thread and every
// SQLite call is synchronous, so reads and writes take turns anyway.
func openDB(dsn string) (*sql.DB, error) {
	module := js.Global().Get("sqlite3")
	if module.Type() != js.TypeObject {
		return nil, errors.New("globalThis.sqlite3 is not set: the host must set it to the result of sqlite3InitModule() before starting Go")
	}
	if dsn == "" {
		dsn = ":memory:"
	}
	db := sql.OpenDB(sqlitejs.NewConnector(module, dsn))
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	if err := db.Ping(); err != nil {
		db.Close()
		return nil, translateErr(err)
	}
	return db, nil
}

// translateErr translates sqlitejs errors by their extended result code.
//
// Difference from the native driver: the code is the resultCode property of
// the JavaScript SQLite3Error that oo1 threw, which sqlitejs.Error carries.
func translateErr(err error) error {
	var e *sqlitejs.Error
	if errors.As(err, &e) {
		return fromResultCode(e.Code, err)
	}
	return fmt.Errorf("store: %w", err)
}
