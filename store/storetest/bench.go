package storetest

import (
	"bytes"
	"fmt"
	"testing"

	"kubeplay/store"
)

// benchKeys is how many keys the read benchmarks spread over.
const benchKeys = 1000

// benchValue is about the size of a small Kubernetes object.
var benchValue = make([]byte, 512)

// Benchmark measures a store's writes and reads per second. open must return
// a new, empty store; the benchmark closes it.
func Benchmark(b *testing.B, open func(b *testing.B) store.Store) {
	fresh := func(b *testing.B) store.Store {
		st := open(b)
		b.Cleanup(func() { st.Close() })
		return st
	}
	b.Run("Create", func(b *testing.B) {
		st := fresh(b)
		i := 0
		for b.Loop() {
			if _, err := st.Create(b.Context(), fmt.Sprintf("/registry/pods/default/p%08d", i), benchValue); err != nil {
				b.Fatal(err)
			}
			i++
		}
		perSecond(b, "writes/s")
	})
	b.Run("Update", func(b *testing.B) {
		st := fresh(b)
		revs := fill(b, st, benchKeys)
		i := 0
		for b.Loop() {
			k := i % benchKeys
			rev, err := st.Update(b.Context(), benchKey(k), benchValue, revs[k])
			if err != nil {
				b.Fatal(err)
			}
			revs[k] = rev
			i++
		}
		perSecond(b, "writes/s")
	})
	b.Run("Get", func(b *testing.B) {
		st := fresh(b)
		fill(b, st, benchKeys)
		i := 0
		for b.Loop() {
			if _, err := st.Get(b.Context(), benchKey(i*7919%benchKeys), 0); err != nil {
				b.Fatal(err)
			}
			i++
		}
		perSecond(b, "reads/s")
	})
	b.Run("List100", func(b *testing.B) {
		st := fresh(b)
		fill(b, st, benchKeys)
		i := 0
		for b.Loop() {
			start := benchKey(i * 100 % benchKeys)
			res, err := st.List(b.Context(), "/registry/configmaps/", start, 100, 0)
			if err != nil || len(res.Items) == 0 {
				b.Fatal(len(res.Items), err)
			}
			i++
		}
		perSecond(b, "lists/s")
	})
	b.Run("List1000", func(b *testing.B) {
		// One read of 1,000 keys of 1 KiB: a LIST of 1,000 config maps.
		st := fresh(b)
		value := bytes.Repeat([]byte("x"), 1024)
		for i := range 1000 {
			if _, err := st.Create(b.Context(), fmt.Sprintf("/registry/configmaps/big/c%04d", i), value); err != nil {
				b.Fatal(err)
			}
		}
		fill(b, st, benchKeys) // other keys, as in a cluster
		for b.Loop() {
			res, err := st.List(b.Context(), "/registry/configmaps/big/", "", 0, 0)
			if err != nil || len(res.Items) != 1000 {
				b.Fatal(len(res.Items), err)
			}
		}
		perSecond(b, "lists/s")
	})
}

func benchKey(i int) string { return fmt.Sprintf("/registry/configmaps/default/c%06d", i) }

// fill creates n keys and returns their revisions.
func fill(b *testing.B, st store.Store, n int) []int64 {
	revs := make([]int64, n)
	for i := range revs {
		rev, err := st.Create(b.Context(), benchKey(i), benchValue)
		if err != nil {
			b.Fatal(err)
		}
		revs[i] = rev
	}
	return revs
}

func perSecond(b *testing.B, unit string) {
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), unit)
}
