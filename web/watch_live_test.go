//go:build !js

package web_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"kubeplay/playground"
	"kubeplay/store"
	"kubeplay/web"
)

// liveMessage is what the watch view's WebSocket sends.
type liveMessage struct {
	Type, ResourceVersion, HTML string
	Code                        int
}

func openSandbox(t *testing.T) (*playground.Sandbox, store.Store) {
	t.Helper()
	st, err := store.Open(t.Context(), ":memory:", store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sb, err := playground.Open(t.Context(), playground.Options{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	// Until its controllers have set it up (the nodes, the default
	// ServiceAccounts, kube-root-ca.crt in every namespace), their writes
	// would interleave with a test's.
	for {
		idle, err := sb.Idle(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if idle {
			return sb, st
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func dialWatch(t *testing.T, srv *httptest.Server, query string, origin string) (*websocket.Conn, *http.Response, error) {
	t.Helper()
	h := http.Header{}
	if origin != "" {
		h.Set("Origin", origin)
	}
	return websocket.DefaultDialer.DialContext(t.Context(), "ws"+strings.TrimPrefix(srv.URL, "http")+"/ui/watch/live?"+query, h)
}

// waitLimit bounds a wait for something that must happen. It only ends a
// broken run, so it is generous: a loaded machine (CI) can be many times
// slower than an idle one. It leaves a margin before the test binary's
// -timeout for the test to fail with its own message.
func waitLimit(t *testing.T) time.Duration {
	if d, ok := t.Deadline(); ok {
		return max(time.Until(d)-30*time.Second, time.Until(d)/2)
	}
	return 2 * time.Minute
}

func next(t *testing.T, c *websocket.Conn) liveMessage {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(waitLimit(t)))
	var m liveMessage
	if err := c.ReadJSON(&m); err != nil {
		t.Fatalf("reading a watch event: %v", err)
	}
	return m
}

func create(t *testing.T, h http.Handler, name string) string {
	t.Helper()
	rec := httptest.NewRecorder()
	req := httptest.NewRequestWithContext(t.Context(), "POST", "/api/v1/namespaces/default/configmaps",
		strings.NewReader(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"`+name+`"}}`))
	req.Header.Set("Content-Type", "application/json")
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusCreated {
		t.Fatalf("create %s: %d %s", name, rec.Code, rec.Body)
	}
	var obj struct {
		Metadata struct{ ResourceVersion string }
	}
	_ = json.Unmarshal(rec.Body.Bytes(), &obj)
	return obj.Metadata.ResourceVersion
}

func TestWatchLive(t *testing.T) {
	sb, st := openSandbox(t)
	srv := httptest.NewServer(web.New(sb))
	defer srv.Close()

	t.Run("events, resume and the request log", func(t *testing.T) {
		rv := create(t, sb.Handler(), "first")
		c, _, err := dialWatch(t, srv, "r=v1/configmaps&ns=default&resourceVersion="+rv, "")
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		rv2 := create(t, sb.Handler(), "second")
		m := next(t, c)
		if m.Type != "ADDED" || m.ResourceVersion != rv2 || !strings.Contains(m.HTML, "default/second") {
			t.Errorf("first event %+v", m)
		}
		// The UI's watch is an ordinary API request, in the request log.
		found := false
		entries, _ := sb.Journal().Page(0, 0)
		for _, e := range entries {
			found = found || strings.Contains(e.Query, "watch=1") && e.UserAgent == "kubeplay-ui"
		}
		if !found {
			t.Error("the UI's watch is not in the request log")
		}
	})

	t.Run("410 Gone", func(t *testing.T) {
		old := create(t, sb.Handler(), "old")
		rv := create(t, sb.Handler(), "newer")
		n, _ := strconv.ParseInt(rv, 10, 64)
		if err := st.Compact(t.Context(), n); err != nil {
			t.Fatal(err)
		}
		c, _, err := dialWatch(t, srv, "r=v1/configmaps&resourceVersion="+old, "")
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		m := next(t, c)
		if m.Type != "ERROR" || m.Code != http.StatusGone || !strings.Contains(m.HTML, "too old") || !strings.Contains(m.HTML, "compacted") {
			t.Errorf("watch from a compacted resourceVersion: %+v", m)
		}
	})

	t.Run("origin checked", func(t *testing.T) {
		_, resp, err := dialWatch(t, srv, "r=v1/configmaps", "https://evil.example")
		if err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
			t.Errorf("cross-origin WebSocket: err %v, response %v", err, resp)
		}
	})

	t.Run("bad request shown", func(t *testing.T) {
		c, _, err := dialWatch(t, srv, "r=v1/configmaps&labelSelector="+`a%20in%20(`, "")
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if m := next(t, c); m.Type != "ERROR" || m.Code != http.StatusBadRequest {
			t.Errorf("bad selector: %+v", m)
		}
	})
}
