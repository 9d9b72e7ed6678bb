//go:build !js

package server_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gorilla/websocket"
)

// The simulated kubelet's answers, past kube-apiserver's checks (which the
// pods-streaming scenario holds to the oracle's): a started container has
// a log saying it is simulated, and an exec over a WebSocket gets a Status
// on the error channel, as a failed exec does, then a closed connection.
func TestPodStreams_SimulatedKubelet(t *testing.T) {
	h := newTestServer(t)
	createDefaultServiceAccount(t, h, "default")
	do := func(method, path, contentType, body string) *httptest.ResponseRecorder {
		t.Helper()
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("Content-Type", contentType)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	pods := "/api/v1/namespaces/default/pods"
	if rec := do("POST", pods, "application/json", `{"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"nginx"}]}}`); rec.Code != http.StatusCreated {
		t.Fatalf("create: %d %s", rec.Code, rec.Body)
	}
	// Scheduled to a node that exists, its container not started yet.
	do("POST", "/api/v1/nodes", "application/json", `{"metadata":{"name":"n"}}`)
	do("PATCH", "/api/v1/nodes/n/status", "application/merge-patch+json", `{"status":{"addresses":[{"type":"InternalIP","address":"10.0.0.2"}]}}`)
	if rec := do("POST", pods+"/p/binding", "application/json", `{"metadata":{"name":"p"},"target":{"name":"n"}}`); rec.Code != http.StatusCreated {
		t.Fatalf("binding: %d %s", rec.Code, rec.Body)
	}
	rec := do("GET", pods+"/p/log", "", "")
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), `container \"c\" in pod \"p\" is waiting to start: ContainerCreating`) {
		t.Errorf("log of a container not started: %d %s", rec.Code, rec.Body)
	}
	do("PATCH", pods+"/p/status", "application/merge-patch+json",
		`{"status":{"phase":"Running","containerStatuses":[{"name":"c","image":"nginx","imageID":"","ready":true,"restartCount":0,"state":{"running":{"startedAt":"2026-01-01T00:00:00Z"}}}]}}`)
	rec = do("GET", pods+"/p/log", "", "")
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "text/plain" || !strings.Contains(rec.Body.String(), "is simulated") {
		t.Errorf("log of a running container: %d %q %s", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
	}
	if rec := do("GET", pods+"/p/exec?command=ls", "", ""); rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "Upgrade request required") {
		t.Errorf("exec without an upgrade: %d %s", rec.Code, rec.Body)
	}

	srv := httptest.NewServer(h)
	defer srv.Close()
	dialer := websocket.Dialer{Subprotocols: []string{"v5.channel.k8s.io", "v4.channel.k8s.io"}}
	conn, resp, err := dialer.Dial("ws"+strings.TrimPrefix(srv.URL, "http")+pods+"/p/exec?command=ls&stdout=true", nil)
	if err != nil {
		t.Fatalf("dial: %v (%v)", err, resp)
	}
	defer conn.Close()
	if p := resp.Header.Get("Sec-Websocket-Protocol"); p != "v5.channel.k8s.io" {
		t.Errorf("protocol %q", p)
	}
	_, msg, err := conn.ReadMessage()
	if err != nil || len(msg) == 0 || msg[0] != 3 {
		t.Fatalf("first message %q, %v: want the error channel's", msg, err)
	}
	var status struct{ Status, Message string }
	if err := json.Unmarshal(msg[1:], &status); err != nil || status.Status != "Failure" || !strings.Contains(status.Message, "nothing to exec") {
		t.Errorf("status %s (%v)", msg[1:], err)
	}
	if _, _, err := conn.ReadMessage(); !websocket.IsCloseError(err, websocket.CloseNormalClosure) {
		t.Errorf("after the status: %v, want a normal closure", err)
	}
}
