//go:build cgo || (js && wasm)

package store_test

import (
	"testing"

	"kubeplay/store"
	"kubeplay/store/storetest"
)

// openMemory opens an in-memory store: the only kind both drivers have.
func openMemory(tb testing.TB) *store.DB {
	tb.Helper()
	db, err := store.Open(tb.Context(), ":memory:", store.Options{})
	if err != nil {
		tb.Fatalf("Open: %v", err)
	}
	return db
}

func TestDB_Contract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return openMemory(t) })
}

// TestDB_Contract_largeListCache runs the suite with room for large
// listings, as the root cluster of kubeplay serve has.
func TestDB_Contract_largeListCache(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		db, err := store.Open(t.Context(), ":memory:", store.Options{ListCacheBytes: 64 << 20})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		return db
	})
}

func BenchmarkDB(b *testing.B) {
	storetest.Benchmark(b, func(b *testing.B) store.Store { return openMemory(b) })
}
