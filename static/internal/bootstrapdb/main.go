//go:build !js

// Command bootstrapdb writes the database a new browser sandbox starts from
// (static/build.sh puts it in static/dist/bootstrap.sqlite3): a sandbox's
// store right after it opened, holding what every cluster starts with (the
// system namespaces, the RBAC bootstrap policy). static/worker.js copies it
// into a new saved database, so the engine's first start in a browser reads
// those objects instead of making them, which takes seconds in WebAssembly.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"kubeplay/playground"
	"kubeplay/store"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: bootstrapdb FILE")
		os.Exit(2)
	}
	if err := run(context.Background(), os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "bootstrapdb:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, path string) error {
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		return err
	}
	st, err := store.Open(ctx, ":memory:", store.Options{})
	if err != nil {
		return err
	}
	sb, err := playground.Open(ctx, playground.Options{Store: st})
	if err != nil {
		st.Close()
		return err
	}
	defer sb.Close() // and the store
	if err := settle(ctx, st); err != nil {
		return err
	}
	// The engine then skips, at its first start, the check for missing
	// objects, the local APIServices' sync and the reading of CRDs.
	if err := sb.StampBootstrap(ctx); err != nil {
		return err
	}
	return st.Snapshot(ctx, path)
}

// settle waits until the sandbox's controllers are done (the cluster role
// aggregation writes admin, edit and view): the store's revision stays put for
// quiet. A controller's write at the engine's start costs it seconds in a
// browser (its first write builds the field manager's types).
func settle(ctx context.Context, st *store.DB) error {
	const quiet, limit = 500 * time.Millisecond, 30 * time.Second
	last, since, start := int64(-1), time.Now(), time.Now()
	for time.Since(since) < quiet {
		if time.Since(start) > limit {
			return fmt.Errorf("the sandbox still writes after %v", limit)
		}
		rev, err := st.CurrentRevision(ctx)
		if err != nil {
			return err
		}
		if rev != last {
			last, since = rev, time.Now()
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil
}
