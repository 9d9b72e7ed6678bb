// Package store is kubeplay's revisioned (MVCC) key-value store on SQLite:
// keys, values (bytes) and one global revision, as etcd keeps them for
// kube-apiserver. It knows nothing about Kubernetes objects. Store (store.go)
// is the contract; DB implements it; storetest checks any implementation
// against it.
//
// # Drivers
//
// The store logic (SQL, revisions, compaction, watch fan-out) is written once
// against database/sql. Only how SQL reaches SQLite differs, in paired
// build-tagged files defining openDB and translateErr:
//
//   - sqlite_cgo.go (cgo, native): github.com/mattn/go-sqlite3. A file gets a
//     pool of connections in WAL mode (synchronous=NORMAL, 5 s busy timeout),
//     so reads run beside the writer; ":memory:" gets a single connection.
//   - sqlite_js.go (js/wasm, browser and Node): the official SQLite WASM build
//     (npm @sqlite.org/sqlite-wasm 3.54.1-build1) through its synchronous oo1
//     API, behind our database/sql driver internal/sqlitejs, on one
//     connection. The host must await sqlite3InitModule() and set
//     globalThis.sqlite3 before starting Go (wasm/node/run.mjs does, for
//     tests).
//   - sqlite_nocgo.go: a native build without cgo compiles, and Open fails.
//
// Driver errors become store sentinels by SQLite result code, never by
// message (the builds word them differently).
//
// # Schema
//
//	kv(rev INTEGER PRIMARY KEY AUTOINCREMENT, key BLOB, value BLOB,
//	   create_rev, prev_rev, deleted, written_at)  -- index (key, rev, deleted)
//	meta(name, value)                             -- 'compact_rev': the horizon;
//	                                                 'stamp', 'stamp_rev': SetStamp's
//
// Every write appends one row at the next revision: create_rev is the
// revision that created this incarnation of the key (= rev for a create),
// prev_rev the key's previous row (0 for a create), deleted marks a tombstone
// (its value is empty: the deleted value is its prev row's), written_at is
// Unix milliseconds, for retention. A key's value at revision R is its newest
// row at or below R, unless that is a tombstone. The current revision is
// sqlite_sequence's, which AUTOINCREMENT keeps at the highest revision ever
// used, so compaction never makes revisions go back, and a reopened file
// continues where it stopped. Keys are BLOBs so that ranges compare
// byte-wise exactly as Go strings do, through either driver.
//
// Writes are serialised by a mutex in the process (one process per database
// file), so commit order is revision order is notification order. Each read
// runs as one snapshot (one statement, or one transaction), so a page of a
// List and its Remaining count agree, and a compaction cannot slip between
// checking a revision and reading at it.
//
// # Compaction
//
// Compact(h) drops each row superseded by a newer row of its key at or below
// h, and the tombstones at or below h; what remains at or below h is every
// key's value as of h. Reads at h and watches after h still work; below h
// they fail with ErrCompacted. A background compactor runs every
// Retention/10 (at least every second) and compacts up to the last revision
// before the oldest write younger than Retention (5 minutes by default), so
// history older than that is gone, as with kube-apiserver's compaction of
// etcd.
//
// # Watch
//
// Watch registers the watcher under the write lock at the current revision
// C, then its goroutine replays (afterRev, C] from the database in batches,
// then delivers live events, all of which are after C: no gap, no duplicate,
// in revision order. A compaction overtaking the replay ends the watch with
// ErrCompacted.
//
// Slow consumers: writers hand each event to every matching watcher without
// ever blocking, into a buffer of Options.WatchBuffer events (default 1024).
// A watcher whose buffer is full is ended at once with ErrWatcherTooSlow; its
// consumer resumes by watching again after the last revision it received.
// Events share their values between watchers: treat them as read-only.
//
// # Performance
//
// storetest.Benchmark, 512-byte values, operations per second on the
// development machine (AMD EPYC, 2 vCPUs shared with other work, so ±30%;
// Go 1.26.8, Node 20.20):
//
//	                      Create     Update     Get        List (100 of 1000)
//	native, file (WAL)    31k        25k        165k       4k
//	native, :memory:      130k       65k        240k       4k
//	sqlite-wasm in Node   13k        13k        26k        0.4k
//
//	go test -run '^$' -bench . ./store/
//	GOOS=js GOARCH=wasm go test -exec "$PWD/wasm/node/go_js_wasm_exec" -run '^$' -bench . ./store/
//
// Under Node the cost is the calls between Go and JavaScript (0.4 µs for a
// number, 2-4 µs for a string or a Uint8Array; a few dozen per operation) and
// the garbage their js.Values make, not SQLite: ample for a sandbox in a tab.
package store
