//go:build cgo && !js

package store_test

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kubeplay/store"
	"kubeplay/store/storetest"
)

func openFile(tb testing.TB, path string) *store.DB {
	tb.Helper()
	db, err := store.Open(tb.Context(), path, store.Options{})
	if err != nil {
		tb.Fatalf("Open(%q): %v", path, err)
	}
	return db
}

// TestDB_ContractFile runs the suite on database files, reopened too. The
// path has a '?' and a '#' in it, which must not be read as URI syntax.
func TestDB_ContractFile(t *testing.T) {
	storetest.Run(t,
		func(t *testing.T) store.Store { return openFile(t, filepath.Join(t.TempDir(), "kv?#1.db")) },
		storetest.WithPath(func(t *testing.T, path string) store.Store { return openFile(t, path) }))
}

func BenchmarkDBFile(b *testing.B) {
	storetest.Benchmark(b, func(b *testing.B) store.Store {
		return openFile(b, filepath.Join(b.TempDir(), "kv.db"))
	})
}

func TestCheckFile(t *testing.T) {
	dir := t.TempDir()
	st := openFile(t, dir+"/good.db")
	defer st.Close()
	if _, err := st.Create(t.Context(), "/a", []byte("v")); err != nil {
		t.Fatal(err)
	}
	if err := st.Snapshot(t.Context(), dir+"/snap.db"); err != nil {
		t.Fatal(err)
	}
	if err := store.CheckFile(t.Context(), dir+"/snap.db"); err != nil {
		t.Errorf("CheckFile(a snapshot): %v", err)
	}
	if size, err := st.Size(t.Context()); err != nil || size < 4096 {
		t.Errorf("Size = %d, %v", size, err)
	}

	// A trigger would run on the next write: refused.
	db, err := sql.Open("sqlite3", dir+"/snap.db")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TRIGGER t AFTER INSERT ON kv BEGIN DELETE FROM kv; END`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if err := store.CheckFile(t.Context(), dir+"/snap.db"); err == nil || !strings.Contains(err.Error(), `unexpected trigger "t"`) {
		t.Errorf("CheckFile(with a trigger) = %v", err)
	}
	if err := os.WriteFile(dir+"/junk.db", []byte(strings.Repeat("junk", 1000)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := store.CheckFile(t.Context(), dir+"/junk.db"); err == nil {
		t.Errorf("CheckFile(junk) succeeded")
	}
}

// TestOpen_existingDatabase: opening a database that has the schema only
// reads it, so that it costs no write (slow in a browser's file system). In
// WAL mode a write would leave frames in the -wal file.
func TestOpen_existingDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kv.db")
	openFile(t, path).Close()
	st := openFile(t, path)
	defer st.Close()
	info, err := os.Stat(path + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	if info.Size() != 0 {
		t.Errorf("reopening the database wrote %d bytes to its WAL", info.Size())
	}
	if _, err := st.Create(t.Context(), "/a", []byte("v")); err != nil {
		t.Fatal(err)
	}
}
