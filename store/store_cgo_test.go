//go:build cgo && !js

package store_test

import (
	"path/filepath"
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
