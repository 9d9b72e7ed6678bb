//go:build !js

// Tests that need files or WebSockets, which GOOS=js (SQLite WASM under
// Node, no WebSocket watches) does not have.

package playground_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"kubeplay/playground"
	"kubeplay/server"
	"kubeplay/server/releases"
)

func TestManager_lifecycle(t *testing.T) {
	dir := t.TempDir()
	m := newManager(t, playground.ManagerOptions{Dir: dir})
	// No controllers: nothing writes but the test.
	quiet := playground.CreateOptions{Controllers: playground.Controllers{}.Without(playground.ControllerNames()...)}
	a, err := m.Create(t.Context(), quiet)
	if err != nil {
		t.Fatal(err)
	}
	b, err := m.Create(t.Context(), quiet)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{a.ID(), b.ID()} {
		if !regexp.MustCompile(`^[a-z2-7]{26}$`).MatchString(id) {
			t.Errorf("id %q: want 26 characters of [a-z2-7] (128 random bits)", id)
		}
	}
	if a.ID() == b.ID() {
		t.Fatalf("two sandboxes with id %s", a.ID())
	}
	if l := m.List(); len(l) != 2 || l[0] != a || l[1] != b {
		t.Errorf("List = %v, want a and b, oldest first", l)
	}
	if got, err := m.Get(a.ID()); err != nil || got != a {
		t.Errorf("Get(a) = %v, %v", got, err)
	}
	dbFile := filepath.Join(dir, "sandbox-"+a.ID()+".db")
	if _, err := os.Stat(dbFile); err != nil {
		t.Errorf("a's database: %v", err)
	}

	// Each has its own objects and its own revisions.
	mustDo(t, a.Handler(), 201, "POST", "/api/v1/namespaces/default/configmaps", `{"metadata":{"name":"only-in-a"}}`)
	mustDo(t, b.Handler(), 404, "GET", "/api/v1/namespaces/default/configmaps/only-in-a", "")
	revA, _ := a.Store().CurrentRevision(t.Context())
	revB, _ := b.Store().CurrentRevision(t.Context())
	if revA != revB+1 {
		t.Errorf("revisions: a at %d, b at %d; want a one write ahead", revA, revB)
	}

	// Reset empties the sandbox, same id.
	if err := a.Reset(t.Context()); err != nil {
		t.Fatal(err)
	}
	mustDo(t, a.Handler(), 404, "GET", "/api/v1/namespaces/default/configmaps/only-in-a", "")
	mustDo(t, a.Handler(), 200, "GET", "/api/v1/namespaces/default", "")

	if err := m.Delete(a.ID()); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Get(a.ID()); !errors.Is(err, playground.ErrNoSandbox) {
		t.Errorf("Get after Delete: %v", err)
	}
	if err := m.Delete(a.ID()); !errors.Is(err, playground.ErrNoSandbox) {
		t.Errorf("second Delete: %v", err)
	}
	if _, err := os.Stat(dbFile); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a's database after Delete: %v", err)
	}
}

func TestManager_snapshotRestore(t *testing.T) {
	dir := t.TempDir()
	m := newManager(t, playground.ManagerOptions{Dir: dir, InMemory: true})
	a := create(t, m)
	mustDo(t, a.Handler(), 201, "POST", "/api/v1/namespaces/default/configmaps", `{"metadata":{"name":"kept"}}`)
	snap := filepath.Join(t.TempDir(), "snap.db")
	if err := a.Snapshot(t.Context(), snap); err != nil {
		t.Fatal(err)
	}
	mustDo(t, a.Handler(), 201, "POST", "/api/v1/namespaces/default/configmaps", `{"metadata":{"name":"after"}}`)

	b, err := m.Create(t.Context(), playground.CreateOptions{Snapshot: snap})
	if err != nil {
		t.Fatal(err)
	}
	kept := mustDo(t, b.Handler(), 200, "GET", "/api/v1/namespaces/default/configmaps/kept", "")
	mustDo(t, b.Handler(), 404, "GET", "/api/v1/namespaces/default/configmaps/after", "")
	if uid := uidOf(kept); uid == "" {
		t.Errorf("restored object without uid: %v", kept)
	}

	// Restore over a: back to the snapshot (Create moved the first away).
	if err := b.Snapshot(t.Context(), snap); err != nil {
		t.Fatal(err)
	}
	if err := a.Restore(t.Context(), snap); err != nil {
		t.Fatal(err)
	}
	mustDo(t, a.Handler(), 404, "GET", "/api/v1/namespaces/default/configmaps/after", "")
	mustDo(t, a.Handler(), 200, "GET", "/api/v1/namespaces/default/configmaps/kept", "")

	junk := filepath.Join(t.TempDir(), "junk.db")
	os.WriteFile(junk, []byte(strings.Repeat("not sqlite", 500)), 0o644)
	if err := a.Restore(t.Context(), junk); err == nil || !strings.Contains(err.Error(), "not a kubeplay snapshot") {
		t.Errorf("Restore(junk) = %v", err)
	}
	mustDo(t, a.Handler(), 200, "GET", "/api/v1/namespaces/default/configmaps/kept", "")
}

// TestManager_reopen: sandboxes kept in files survive a restart.
func TestManager_reopen(t *testing.T) {
	dir := t.TempDir()
	m, err := playground.NewManager(playground.ManagerOptions{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	ms := create(t, m)
	mustDo(t, ms.Handler(), 201, "POST", "/api/v1/namespaces/default/configmaps", `{"metadata":{"name":"kept"}}`)
	os.WriteFile(filepath.Join(dir, "snapshot-left-over.db"), []byte("x"), 0o644)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}

	m2 := newManager(t, playground.ManagerOptions{Dir: dir})
	again, err := m2.Get(ms.ID())
	if err != nil {
		t.Fatal(err)
	}
	mustDo(t, again.Handler(), 200, "GET", "/api/v1/namespaces/default/configmaps/kept", "")
	if _, err := os.Stat(filepath.Join(dir, "snapshot-left-over.db")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("left-over snapshot: %v", err)
	}
}

// TestManager_reopenEmulation: a sandbox's emulated release and feature
// gates survive a restart, whatever the new process's defaults; a sandbox
// that never switched keeps the release it was created with, and a deleted
// sandbox leaves nothing behind.
func TestManager_reopenEmulation(t *testing.T) {
	dir := t.TempDir()
	m, err := playground.NewManager(playground.ManagerOptions{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	switched, created, deleted := create(t, m), create(t, m), create(t, m)
	if err := switched.SetVersion(28); err != nil {
		t.Fatal(err)
	}
	if err := switched.SetFeatureGates(server.FeatureGates{server.WatchList: true}); err != nil {
		t.Fatal(err)
	}
	if err := m.Delete(deleted.ID()); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}

	// The new process defaults to another release.
	m2 := newManager(t, playground.ManagerOptions{Dir: dir, Sandbox: playground.Options{Version: 30}})
	again, err := m2.Get(switched.ID())
	if err != nil {
		t.Fatal(err)
	}
	if v := again.Sandbox().Version(); v != 28 {
		t.Errorf("switched sandbox emulates 1.%d after a restart, want 1.28", v)
	}
	if on := again.Sandbox().FeatureGates()[server.WatchList]; !on {
		t.Errorf("WatchList off after a restart, want on as switched (off by default in 1.28)")
	}
	// What the API serves follows.
	if v := mustDo(t, again.Handler(), 200, "GET", "/version", ""); v["minor"] != "28" {
		t.Errorf("/version after a restart: %v, want minor 28", v)
	}
	other, err := m2.Get(created.ID())
	if err != nil {
		t.Fatal(err)
	}
	if v := other.Sandbox().Version(); v != releases.Newest {
		t.Errorf("sandbox created emulating 1.%d emulates 1.%d after a restart", releases.Newest, v)
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*.emulation.json")); len(files) != 2 {
		t.Errorf("emulation files %v, want the two sandboxes'", files)
	}
}

// TestManager_reopenHosted: a sandbox's token survives a restart; that of a
// sandbox kept in memory goes with it, and a deleted sandbox's with it.
func TestManager_reopenHosted(t *testing.T) {
	dir := t.TempDir()
	opts := playground.ManagerOptions{Dir: dir, AdminToken: "admin"}
	m, err := playground.NewManager(opts)
	if err != nil {
		t.Fatal(err)
	}
	kept, gone := create(t, m), create(t, m)
	if kept.Token() == "" || kept.Token() == gone.Token() {
		t.Fatalf("tokens %q, %q", kept.Token(), gone.Token())
	}
	if err := m.Delete(gone.ID()); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	inMemory := newManager(t, playground.ManagerOptions{Dir: dir, AdminToken: "admin", InMemory: true})
	again, err := inMemory.Get(kept.ID())
	if err != nil || again.Token() != kept.Token() {
		t.Fatalf("after a restart: %v, token %q, want %q", err, again.Token(), kept.Token())
	}
	fleeting := create(t, inMemory)
	inMemory.Close()
	files, _ := filepath.Glob(filepath.Join(dir, "*.token"))
	newManager(t, opts)
	after, _ := filepath.Glob(filepath.Join(dir, "*.token"))
	if len(files) != 2 || len(after) != 1 || filepath.Base(after[0]) != "sandbox-"+kept.ID()+".token" {
		t.Errorf("token files %v, then %v (the in-memory one %s)", files, after, fleeting.ID())
	}
}

// BenchmarkManager_Create measures creating a sandbox (database, bootstrap
// objects, controllers started) and the heap an idle one holds.
func BenchmarkManager_Create(b *testing.B) {
	for _, inMemory := range []bool{true, false} {
		name := "file"
		if inMemory {
			name = "memory"
		}
		b.Run(name, func(b *testing.B) {
			m := newManager(b, playground.ManagerOptions{InMemory: inMemory, MaxSandboxes: b.N + 1, IdleExpiry: -1})
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			rssBefore := rss()
			b.ResetTimer()
			for range b.N {
				if _, err := m.Create(context.Background(), playground.CreateOptions{}); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			for _, ms := range m.List() {
				waitIdle(b, ms.Sandbox()) // the controllers' first passes
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(b.N), "heap-bytes/sandbox")
			if r := rss(); r > 0 {
				b.ReportMetric(float64(r-rssBefore)/float64(b.N), "rss-bytes/sandbox")
			}
		})
	}
}

// BenchmarkManager_IdleSandboxes holds 1,000 sandboxes with every
// controller running, each with a namespace stuck in Terminating on an
// object's finalizer, and measures what they cost while nothing happens:
// CPU time over a second of wall time (the Go runtime's included), and
// memory.
func BenchmarkManager_IdleSandboxes(b *testing.B) {
	const n = 1000
	m := newManager(b, playground.ManagerOptions{InMemory: true, MaxSandboxes: n, IdleExpiry: -1})
	runtime.GC()
	rssBefore := rss()
	for range n {
		ms, err := m.Create(context.Background(), playground.CreateOptions{})
		if err != nil {
			b.Fatal(err)
		}
		h := ms.Handler()
		mustDo(b, h, 201, "POST", "/api/v1/namespaces", `{"metadata":{"name":"stuck"}}`)
		createCM(b, h, "stuck", "held", `"finalizers":["example.com/hold"]`)
		mustDo(b, h, 200, "DELETE", "/api/v1/namespaces/stuck", "")
	}
	for _, ms := range m.List() {
		waitIdle(b, ms.Sandbox())
		// As once the retention window (5 minutes) has passed: the history
		// is compacted, and the compactor sleeps until the next write.
		db := ms.Store()
		rev, err := db.CurrentRevision(b.Context())
		if err != nil {
			b.Fatal(err)
		}
		if err := db.Compact(b.Context(), rev); err != nil {
			b.Fatal(err)
		}
	}
	// Collect the setup's garbage and give its pages back now: the
	// runtime's scavenger would otherwise be returning them during the
	// measurement, which is all a profile of it shows.
	debug.FreeOSMemory()
	var heap runtime.MemStats
	runtime.ReadMemStats(&heap)
	b.ResetTimer()
	var cpu time.Duration
	for b.Loop() {
		before := cpuTime()
		time.Sleep(time.Second)
		cpu += cpuTime() - before
	}
	b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/idle-s")
	b.ReportMetric(float64(rss()-rssBefore)/n/1e6, "rss-MB/sandbox")
	b.ReportMetric(float64(heap.HeapAlloc)/n/1e6, "heap-MB/sandbox")
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// rss is the process's resident memory (0 where /proc is missing): it
// counts SQLite's memory too, which the Go heap does not.
func rss() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}
