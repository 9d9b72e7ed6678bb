//go:build !js

// Tests that need files or WebSockets, which GOOS=js (SQLite WASM under
// Node, no WebSocket watches) does not have.

package api_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"kubeplay/playground"
	"kubeplay/playground/api"
)

func TestAPI_snapshot(t *testing.T) {
	base := serve(t, playground.ManagerOptions{InMemory: true})
	a := createSandbox(t, base)
	call(t, "POST", base+a.Server+"/api/v1/namespaces/default/configmaps", "application/json", []byte(`{"metadata":{"name":"x"}}`), 201, nil)
	var snap []byte
	h := call(t, "GET", base+"/playground/v1/sandboxes/"+a.ID+"/snapshot", "", nil, 200, &snap)
	if h.Get("Content-Type") != "application/vnd.sqlite3" || !bytes.HasPrefix(snap, []byte("SQLite format 3\x00")) {
		t.Fatalf("snapshot: %s, %d bytes", h.Get("Content-Type"), len(snap))
	}
	// A new sandbox from it.
	var b api.Sandbox
	call(t, "POST", base+"/playground/v1/sandboxes", "application/vnd.sqlite3", snap, 201, &b)
	call(t, "GET", base+b.Server+"/api/v1/namespaces/default/configmaps/x", "", nil, 200, nil)
	// Restored over a sandbox.
	c := createSandbox(t, base)
	call(t, "PUT", base+"/playground/v1/sandboxes/"+c.ID+"/snapshot", "application/vnd.sqlite3", snap, 200, nil)
	call(t, "GET", base+c.Server+"/api/v1/namespaces/default/configmaps/x", "", nil, 200, nil)

	var e apiError
	call(t, "PUT", base+"/playground/v1/sandboxes/"+c.ID+"/snapshot", "application/vnd.sqlite3", []byte(strings.Repeat("junk", 2000)), 400, &e)
	if !strings.Contains(e.Error.Message, "not a kubeplay snapshot") {
		t.Errorf("junk: %+v", e)
	}
	call(t, "PUT", base+"/playground/v1/sandboxes/"+c.ID+"/snapshot", "application/json", snap, 415, nil)
	call(t, "POST", base+"/playground/v1/sandboxes", "application/vnd.sqlite3", []byte("junk"), 400, nil)
	call(t, "GET", base+c.Server+"/api/v1/namespaces/default/configmaps/x", "", nil, 200, nil)
}

// TestIsolation_webSocket: a watch over a WebSocket through a sandbox's
// prefix sees that sandbox only.
func TestIsolation_webSocket(t *testing.T) {
	base := serve(t, playground.ManagerOptions{InMemory: true})
	a, b := createSandbox(t, base), createSandbox(t, base)
	ws, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(base, "http")+a.Server+"/api/v1/namespaces/default/configmaps?watch=true&"+notRootCA,
		http.Header{"Origin": {base}})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	call(t, "POST", base+b.Server+"/api/v1/namespaces/default/configmaps", "application/json", []byte(`{"metadata":{"name":"in-b"}}`), 201, nil)
	call(t, "POST", base+a.Server+"/api/v1/namespaces/default/configmaps", "application/json", []byte(`{"metadata":{"name":"in-a"}}`), 201, nil)
	ws.SetReadDeadline(time.Now().Add(time.Minute)) // only bounds a broken run
	var ev struct {
		Type   string
		Object struct{ Metadata struct{ Name string } }
	}
	if err := ws.ReadJSON(&ev); err != nil {
		t.Fatal(err)
	}
	if ev.Type != "ADDED" || ev.Object.Metadata.Name != "in-a" {
		t.Errorf("first event on a's WebSocket watch: %s %s", ev.Type, ev.Object.Metadata.Name)
	}
}

// TestAPI_emulationSurvivesRestart: the emulated release and gates set
// through the API are the sandbox's after a restart, whatever the new
// process's defaults.
func TestAPI_emulationSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	m, err := playground.NewManager(playground.ManagerOptions{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api.New(m))
	var sb api.Sandbox
	call(t, "POST", srv.URL+"/playground/v1/sandboxes", "application/json", []byte(`{"emulatedVersion":"1.28"}`), 201, &sb)
	call(t, "PATCH", srv.URL+"/playground/v1/sandboxes/"+sb.ID+"/settings", "application/json", []byte(`{"featureGates":{"WatchList":true}}`), 200, nil)
	srv.Close()
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}

	base := serve(t, playground.ManagerOptions{Dir: dir, Sandbox: playground.Options{Version: 33}})
	var s api.Settings
	call(t, "GET", base+"/playground/v1/sandboxes/"+sb.ID+"/settings", "", nil, 200, &s)
	if s.EmulatedVersion != "1.28" || !s.FeatureGates["WatchList"] {
		t.Errorf("after a restart: emulatedVersion %q, featureGates %v; want 1.28 with WatchList on", s.EmulatedVersion, s.FeatureGates)
	}
}
