//go:build js && wasm

package sqlitejs_test

import (
	"bytes"
	"database/sql"
	"errors"
	"math"
	"syscall/js"
	"testing"

	"kubeplay/store/internal/sqlitejs"
)

// open opens an in-memory database on the module the runner (wasm/node)
// published as globalThis.sqlite3.
func open(t *testing.T) *sql.DB {
	t.Helper()
	module := js.Global().Get("sqlite3")
	if module.Type() != js.TypeObject {
		t.Skip("globalThis.sqlite3 is not set: run with -exec wasm/node/go_js_wasm_exec")
	}
	db := sql.OpenDB(sqlitejs.NewConnector(module, ":memory:"))
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec(`CREATE TABLE t (i INTEGER, r REAL, s TEXT, b BLOB)`); err != nil {
		t.Fatal(err)
	}
	return db
}

func TestConn_values(t *testing.T) {
	db := open(t)
	for _, tc := range []struct {
		name string
		i    int64
		r    float64
		s    string
		b    []byte
	}{
		{"small", 42, 2.5, "héllo", []byte{0, 1, 255}},
		{"beyond 2^53", 1<<53 + 1, 2, "", []byte{}},
		{"extremes", math.MaxInt64, math.MaxFloat64, "\x00nul", bytes.Repeat([]byte{7}, 100_000)},
		{"negative", math.MinInt64, -0.5, "z", []byte{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := db.Exec(`DELETE FROM t`); err != nil {
				t.Fatal(err)
			}
			if _, err := db.Exec(`INSERT INTO t VALUES (?, ?, ?, ?)`, tc.i, tc.r, tc.s, tc.b); err != nil {
				t.Fatal(err)
			}
			var (
				i int64
				r any
				s string
				b []byte
			)
			if err := db.QueryRow(`SELECT i, r, s, b FROM t`).Scan(&i, &r, &s, &b); err != nil {
				t.Fatal(err)
			}
			if i != tc.i || r != any(tc.r) || s != tc.s || !bytes.Equal(b, tc.b) || b == nil {
				t.Fatalf("got %d %#v %q %d bytes (nil %v), want %d %v %q %d bytes", i, r, s, len(b), b == nil, tc.i, tc.r, tc.s, len(tc.b))
			}
		})
	}
	t.Run("null", func(t *testing.T) {
		if _, err := db.Exec(`INSERT INTO t VALUES (?, ?, ?, ?)`, nil, nil, nil, []byte(nil)); err != nil {
			t.Fatal(err)
		}
		var i, r, s, b any
		if err := db.QueryRow(`SELECT i, r, s, b FROM t WHERE i IS NULL`).Scan(&i, &r, &s, &b); err != nil {
			t.Fatal(err)
		}
		if i != nil || r != nil || s != nil || b != nil {
			t.Fatalf("got %v %v %v %v, want NULLs", i, r, s, b)
		}
	})
}

func TestConn_result(t *testing.T) {
	db := open(t)
	if _, err := db.Exec(`CREATE TABLE big (id INTEGER PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	res, err := db.Exec(`INSERT INTO big (id) VALUES (?), (?)`, int64(1), int64(math.MaxInt64))
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n != 2 {
		t.Fatalf("RowsAffected = %d", n)
	}
	if id, err := res.LastInsertId(); err != nil || id != math.MaxInt64 {
		t.Fatalf("LastInsertId = %d, %v", id, err)
	}
}

func TestConn_errors(t *testing.T) {
	db := open(t)
	if _, err := db.Exec(`CREATE TABLE u (k TEXT PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO u VALUES (?)`, "a"); err != nil {
		t.Fatal(err)
	}
	_, err := db.Exec(`INSERT INTO u VALUES (?)`, "a")
	var e *sqlitejs.Error
	if !errors.As(err, &e) || e.Code != 1555 || e.Code&0xff != 19 {
		t.Fatalf("duplicate key: %v, want SQLITE_CONSTRAINT_PRIMARYKEY (1555)", err)
	}
	// The statement is usable after its error.
	if _, err := db.Exec(`INSERT INTO u VALUES (?)`, "b"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Query(`SELECT nope FROM u`); !errors.As(err, &e) || e.Code&0xff != 1 {
		t.Fatalf("bad column: %v, want SQLITE_ERROR", err)
	}
	if _, err := db.Exec(`INSERT INTO t (i, r) VALUES (?, ?)`, 1); err == nil {
		t.Fatal("missing argument accepted")
	}
}

func TestConn_statements(t *testing.T) {
	db := open(t)
	// Several statements without arguments run through DB.exec.
	if _, err := db.Exec(`INSERT INTO t (i) VALUES (1); INSERT INTO t (i) VALUES (2); INSERT INTO t (i) VALUES (3)`); err != nil {
		t.Fatal(err)
	}
	// The same query open twice at once: the kept statement is busy, so the
	// second gets its own.
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	const q = `SELECT i FROM t WHERE i >= ? ORDER BY i`
	outer, err := tx.Query(q, 1)
	if err != nil {
		t.Fatal(err)
	}
	var pairs int
	for outer.Next() {
		var i int64
		outer.Scan(&i)
		inner, err := tx.Query(q, i)
		if err != nil {
			t.Fatal(err)
		}
		for inner.Next() {
			pairs++
		}
		inner.Close()
	}
	outer.Close()
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if pairs != 6 {
		t.Fatalf("nested queries found %d pairs, want 6", pairs)
	}
	// A prepared statement runs many times; an abandoned result set does
	// not keep it (or its read) open.
	stmt, err := db.Prepare(`SELECT count(*) FROM t WHERE i > ?`)
	if err != nil {
		t.Fatal(err)
	}
	defer stmt.Close()
	for i := range int64(3) {
		var n int64
		if err := stmt.QueryRow(i).Scan(&n); err != nil || n != 3-i {
			t.Fatalf("count > %d = %d, %v", i, n, err)
		}
	}
	rows, err := db.Query(q, 0)
	if err != nil {
		t.Fatal(err)
	}
	rows.Next()
	rows.Close()
	if _, err := db.Exec(`DELETE FROM t WHERE i = ?`, 1); err != nil {
		t.Fatal(err)
	}
}

func TestConn_transactions(t *testing.T) {
	db := open(t)
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(`INSERT INTO t (i) VALUES (?)`, 1); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM t`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("after rollback: %d rows, %v", n, err)
	}
	tx, _ = db.Begin()
	tx.Exec(`INSERT INTO t (i) VALUES (?)`, 1)
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(`SELECT count(*) FROM t`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("after commit: %d rows, %v", n, err)
	}
}
