package playground_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"regexp"
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
	// The busy sandbox is used every 20 ms, a hundred times less than its
	// expiry, so only a machine stalled for 2 s could expire it.
	m := newManager(t, playground.ManagerOptions{InMemory: true, IdleExpiry: 2 * time.Second})
	idle, busy := create(t, m), create(t, m)
	waitFor(t, "the idle sandbox to expire", func() bool {
		mustDo(t, busy.Handler(), 200, "GET", "/api/v1/namespaces/default", "")
		_, err := m.Get(idle.ID())
		return errors.Is(err, playground.ErrNoSandbox)
	})
	if _, err := m.Get(busy.ID()); err != nil {
		t.Errorf("the busy sandbox expired: %v", err)
	}
}

func TestManaged_SetControllers(t *testing.T) {
	m := newManager(t, playground.ManagerOptions{InMemory: true})
	ms, err := m.Create(t.Context(), playground.CreateOptions{Controllers: playground.Controllers{}.Without("namespace")})
	if err != nil {
		t.Fatal(err)
	}
	h := ms.Handler()
	mustDo(t, h, 201, "POST", "/api/v1/namespaces", `{"metadata":{"name":"stuck"}}`)
	mustDo(t, h, 200, "DELETE", "/api/v1/namespaces/stuck", "")
	waitIdle(t, ms.Sandbox())
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
	// Counted once the controllers have made what a new sandbox holds
	// (nodes, leases, ServiceAccounts, kube-root-ca.crt...), in both.
	m := newManager(t, playground.ManagerOptions{InMemory: true})
	probe := create(t, m)
	waitIdle(t, probe.Sandbox())
	n, err := probe.Store().Count(t.Context(), "/registry/")
	if err != nil {
		t.Fatal(err)
	}
	// The limit leaves room for a few objects more than the probe made (on
	// a loaded machine, the events of a controller's retried write).
	limit := n + 10
	lm := create(t, newManager(t, playground.ManagerOptions{InMemory: true, Limits: playground.Limits{Objects: limit}}))
	waitIdle(t, lm.Sandbox())
	h := lm.Handler()
	used, err := lm.Store().Count(t.Context(), "/registry/")
	if err != nil {
		t.Fatal(err)
	}
	if used >= limit {
		t.Fatalf("a new sandbox holds %d objects, the probe %d", used, n)
	}
	mustDo(t, h, 201, "POST", "/api/v1/namespaces/default/configmaps", `{"metadata":{"name":"a"}}`)
	for used++; used < limit; used++ {
		mustDo(t, h, 201, "POST", "/api/v1/namespaces/default/configmaps", `{"metadata":{"generateName":"fill-"}}`)
	}
	got := mustDo(t, h, 403, "POST", "/api/v1/namespaces/default/configmaps", `{"metadata":{"name":"b"}}`)
	want := `configmaps "b" is forbidden: exceeded quota: sandbox, requested: count/objects=1, used: count/objects=` +
		strconv.FormatInt(limit, 10) + `, limited: count/objects=` + strconv.FormatInt(limit, 10)
	if got["message"] != want || got["reason"] != "Forbidden" {
		t.Errorf("403: %v\nwant message %s", got, want)
	}
	// kube-apiserver names the object a generateName would have made.
	got = mustDo(t, h, 403, "POST", "/api/v1/namespaces/default/configmaps", `{"metadata":{"generateName":"gen-"}}`)
	if msg, _ := got["message"].(string); !regexp.MustCompile(`^configmaps "gen-[a-z0-9]{5}" is forbidden: exceeded quota: sandbox, `).MatchString(msg) {
		t.Errorf("403 for a generateName: %v", msg)
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

// A sandbox keeps an hour of history by default, but within its byte
// limit: history goes before a write is refused for size.
func TestLimits_bytesCompactHistory(t *testing.T) {
	m := newManager(t, playground.ManagerOptions{InMemory: true})
	probe := create(t, m)
	fresh, err := probe.Store().Size(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	m = newManager(t, playground.ManagerOptions{InMemory: true, Limits: playground.Limits{Bytes: fresh + 1<<20}})
	ms := create(t, m)
	h := ms.Handler()
	value := strings.Repeat("x", 100<<10)
	mustDo(t, h, 201, "POST", "/api/v1/namespaces/default/configmaps", `{"metadata":{"name":"big"},"data":{"v":"0`+value+`"}}`)
	// Thirty versions of 100 KiB are three times the room left.
	for i := range 30 {
		mustDo(t, h, 200, "PUT", "/api/v1/namespaces/default/configmaps/big", `{"metadata":{"name":"big"},"data":{"v":"`+strconv.Itoa(i)+value+`"}}`)
	}
	if horizon, err := ms.Store().CompactedRevision(t.Context()); err != nil || horizon == 0 {
		t.Errorf("no history was dropped (horizon %d, %v)", horizon, err)
	}
}
