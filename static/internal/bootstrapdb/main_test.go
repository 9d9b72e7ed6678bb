//go:build !js

package main

import (
	"context"
	"path/filepath"
	"testing"

	"kubeplay/playground"
	"kubeplay/store"
)

// TestRun writes the bootstrap database and opens a sandbox on it, as the
// browser does: the sandbox finds what it starts with, stamped as checked,
// and writes nothing.
func TestRun(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "bootstrap.sqlite3")
	if err := run(ctx, path); err != nil {
		t.Fatal(err)
	}
	if err := store.CheckFile(ctx, path); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	before, err := st.CurrentRevision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, current, err := st.Stamp(ctx); err != nil || !current {
		t.Errorf("the bootstrap database's stamp: current %v, %v; want current", current, err)
	}
	for _, key := range []string{"/registry/namespaces/kube-system", "/registry/clusterroles/admin"} {
		if _, err := st.Get(ctx, key, 0); err != nil {
			t.Errorf("%s: %v", key, err)
		}
	}
	sb, err := playground.Open(ctx, playground.Options{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	if err := settle(ctx, st); err != nil {
		t.Fatal(err)
	}
	if after, err := st.CurrentRevision(ctx); err != nil || after != before {
		t.Errorf("the sandbox wrote on a bootstrapped database: revision %d, then %d (%v)", before, after, err)
	}
}
