package playground_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"kubeplay/playground"
)

func newManager(t testing.TB, opts playground.ManagerOptions) *playground.Manager {
	t.Helper()
	m, err := playground.NewManager(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := m.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return m
}

func create(t testing.TB, m *playground.Manager) *playground.Managed {
	t.Helper()
	ms, err := m.Create(t.Context(), playground.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

func TestManager_lifecycle(t *testing.T) {
	dir := t.TempDir()
	m := newManager(t, playground.ManagerOptions{Dir: dir})
	// No controllers: nothing writes but the test.
	quiet := playground.CreateOptions{Controllers: playground.Controllers{DisableNamespace: true,
		DisableGarbageCollector: true, DisableKubelet: true, DisableClusterRoleAggregation: true}}
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

func TestManager_cap(t *testing.T) {
	m := newManager(t, playground.ManagerOptions{InMemory: true, MaxSandboxes: 3})
	var wg sync.WaitGroup
	errs := make(chan error, 6)
	for range 6 {
		wg.Go(func() {
			_, err := m.Create(context.Background(), playground.CreateOptions{})
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	refused := 0
	for err := range errs {
		if errors.Is(err, playground.ErrTooManySandboxes) {
			refused++
		} else if err != nil {
			t.Error(err)
		}
	}
	if refused != 3 || len(m.List()) != 3 {
		t.Errorf("%d refused, %d sandboxes; want 3 and 3", refused, len(m.List()))
	}
}

func TestManager_idleExpiry(t *testing.T) {
	m := newManager(t, playground.ManagerOptions{InMemory: true, IdleExpiry: 500 * time.Millisecond})
	idle, busy := create(t, m), create(t, m)
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		mustDo(t, busy.Handler(), 200, "GET", "/api/v1/namespaces/default", "")
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := m.Get(idle.ID()); !errors.Is(err, playground.ErrNoSandbox) {
		t.Errorf("the idle sandbox is still there (%v)", err)
	}
	if _, err := m.Get(busy.ID()); err != nil {
		t.Errorf("the busy sandbox expired: %v", err)
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

func TestManaged_SetControllers(t *testing.T) {
	m := newManager(t, playground.ManagerOptions{InMemory: true})
	ms, err := m.Create(t.Context(), playground.CreateOptions{Controllers: playground.Controllers{DisableNamespace: true}})
	if err != nil {
		t.Fatal(err)
	}
	h := ms.Handler()
	mustDo(t, h, 201, "POST", "/api/v1/namespaces", `{"metadata":{"name":"stuck"}}`)
	mustDo(t, h, 200, "DELETE", "/api/v1/namespaces/stuck", "")
	time.Sleep(200 * time.Millisecond)
	mustDo(t, h, 200, "GET", "/api/v1/namespaces/stuck", "") // Terminating: no controller
	ms.SetControllers(playground.Controllers{})
	waitFor(t, "the namespace controller to remove the namespace", gone(t, h, "/api/v1/namespaces/stuck"))
}

// limited serves a sandbox with small limits.
func limited(t *testing.T, l playground.Limits) http.Handler {
	m := newManager(t, playground.ManagerOptions{InMemory: true, Limits: l})
	return create(t, m).Handler()
}

func TestLimits_requestRate(t *testing.T) {
	h := limited(t, playground.Limits{RequestsPerSecond: 5})
	codes := map[int]int{}
	var last *httptest.ResponseRecorder
	for range 30 {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/namespaces", nil))
		codes[rec.Code]++
		if rec.Code == 429 {
			last = rec
		}
	}
	// A burst of twice the rate passes (and a little refill meanwhile).
	if codes[200] < 10 || codes[200] > 12 || codes[429] == 0 {
		t.Fatalf("answers: %v", codes)
	}
	// kube-apiserver's answer over its in-flight limits: plain text.
	if got := last.Body.String(); got != "Too many requests, please try again later.\n" {
		t.Errorf("429 body %q", got)
	}
	if last.Header().Get("Retry-After") != "1" {
		t.Errorf("Retry-After %q", last.Header().Get("Retry-After"))
	}
}

func TestLimits_watches(t *testing.T) {
	h := limited(t, playground.Limits{Watches: 2})
	srv := httptest.NewServer(h)
	defer srv.Close()
	var open []*http.Response
	defer func() {
		for _, r := range open {
			r.Body.Close()
		}
	}()
	for i := range 3 {
		resp, err := http.Get(srv.URL + "/api/v1/namespaces?watch=true")
		if err != nil {
			t.Fatal(err)
		}
		open = append(open, resp)
		want := 200
		if i == 2 {
			want = 429
		}
		if resp.StatusCode != want {
			t.Errorf("watch %d: %d, want %d", i+1, resp.StatusCode, want)
		}
	}
	if ra := open[2].Header.Get("Retry-After"); ra != "1" {
		t.Errorf("Retry-After %q", ra)
	}
	// Once one ends, another may start.
	open[0].Body.Close()
	waitFor(t, "a watch slot", func() bool {
		resp, err := http.Get(srv.URL + "/api/v1/namespaces?watch=true&timeoutSeconds=1")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	})
}

func TestLimits_body(t *testing.T) {
	h := limited(t, playground.Limits{BodyBytes: 1000})
	body := `{"metadata":{"name":"big"},"data":{"a":"` + strings.Repeat("x", 1000) + `"}}`
	got := mustDo(t, h, 413, "POST", "/api/v1/namespaces/default/configmaps", body)
	if got["message"] != "Request entity too large: limit is 1000" || got["reason"] != "RequestEntityTooLarge" {
		t.Errorf("413: %v", got)
	}
	// By default, kube-apiserver's 3 MiB, with its message.
	h = limited(t, playground.Limits{})
	body = `{"metadata":{"name":"big"},"data":{"a":"` + strings.Repeat("x", 3<<20) + `"}}`
	got = mustDo(t, h, 413, "POST", "/api/v1/namespaces/default/configmaps", body)
	if got["message"] != "Request entity too large: limit is 3145728" {
		t.Errorf("413: %v", got["message"])
	}
}

func TestLimits_objects(t *testing.T) {
	m := newManager(t, playground.ManagerOptions{InMemory: true})
	probe := create(t, m)
	n, err := probe.Store().Count(t.Context(), "/registry/")
	if err != nil {
		t.Fatal(err)
	}
	h := limited(t, playground.Limits{Objects: n + 1})
	mustDo(t, h, 201, "POST", "/api/v1/namespaces/default/configmaps", `{"metadata":{"name":"a"}}`)
	got := mustDo(t, h, 403, "POST", "/api/v1/namespaces/default/configmaps", `{"metadata":{"name":"b"}}`)
	want := `configmaps "b" is forbidden: exceeded quota: sandbox, requested: count/objects=1, used: count/objects=` +
		strconv.FormatInt(n+1, 10) + `, limited: count/objects=` + strconv.FormatInt(n+1, 10)
	if got["message"] != want || got["reason"] != "Forbidden" {
		t.Errorf("403: %v\nwant message %s", got, want)
	}
	// Server-Side Apply creates count too; applying to an existing object
	// does not.
	apply := func(name string, want int) {
		t.Helper()
		req := httptest.NewRequest("PATCH", "/api/v1/namespaces/default/configmaps/"+name+"?fieldManager=test",
			strings.NewReader(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"`+name+`"},"data":{"k":"v"}}`))
		req.Header.Set("Content-Type", "application/apply-patch+yaml")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != want {
			t.Errorf("apply %s: %d %s, want %d", name, rec.Code, rec.Body, want)
		}
	}
	apply("c", 403)
	apply("a", 200)
	// Updates and deletes still work, so a full sandbox can be tidied.
	mustDo(t, h, 200, "PUT", "/api/v1/namespaces/default/configmaps/a", `{"metadata":{"name":"a"},"data":{"k":"w"}}`)
	mustDo(t, h, 200, "DELETE", "/api/v1/namespaces/default/configmaps/a", "")
	mustDo(t, h, 201, "POST", "/api/v1/namespaces/default/configmaps", `{"metadata":{"name":"b"}}`)
}

func TestLimits_bytes(t *testing.T) {
	h := limited(t, playground.Limits{Bytes: 1})
	got := mustDo(t, h, 403, "POST", "/api/v1/namespaces/default/configmaps", `{"metadata":{"name":"a"}}`)
	if msg, _ := got["message"].(string); !strings.HasPrefix(msg, `configmaps "a" is forbidden: exceeded quota: sandbox, requested: bytes=1, used: bytes=`) {
		t.Errorf("403: %v", got)
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
			time.Sleep(100 * time.Millisecond) // the controllers' first passes
			runtime.GC()
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(b.N), "heap-bytes/sandbox")
			if r := rss(); r > 0 {
				b.ReportMetric(float64(r-rssBefore)/float64(b.N), "rss-bytes/sandbox")
			}
		})
	}
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
