//go:build !js

package server_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"kubeplay/server"
)

// A watch in CBOR over a WebSocket sends each event as a binary message
// of the self-described event alone, without the newline of a JSON line,
// as kube-apiserver v1.35 does with CBORServingAndStorage on.
func TestWatch_WebSocketCBOR(t *testing.T) {
	gates, err := server.ParseFeatureGates("CBORServingAndStorage=true")
	if err != nil {
		t.Fatal(err)
	}
	srv := &target{URL: httptest.NewServer(newTestServerWith(t, server.Options{FeatureGates: gates})).URL}
	const cms = "/api/v1/namespaces/default/configmaps"
	if resp, b := call(t, srv, "POST", cms, `{"metadata":{"name":"first"}}`); resp.StatusCode != 201 {
		t.Fatalf("create: %d %s", resp.StatusCode, b)
	}
	d := websocket.Dialer{}
	conn, _, err := d.Dial("ws"+strings.TrimPrefix(srv.URL, "http")+cms+"?watch=true&timeoutSeconds=1",
		http.Header{"Origin": {"http://localhost"}, "Accept": {"application/cbor"}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetReadDeadline(time.Now().Add(waitLimit(t)))
	mt, b, err := conn.ReadMessage()
	if err != nil {
		t.Fatal(err)
	}
	if mt != websocket.BinaryMessage || !bytes.HasPrefix(b, []byte{0xd9, 0xd9, 0xf7}) {
		t.Fatalf("message type %d %x", mt, b)
	}
	var ev struct {
		Type   string `json:"type"`
		Object struct {
			Metadata struct{ Name string } `json:"metadata"`
		} `json:"object"`
	}
	if err := json.Unmarshal(cborAsJSON(t, b, false), &ev); err != nil || ev.Type != "ADDED" || ev.Object.Metadata.Name != "first" {
		t.Errorf("event %+v (%v)", ev, err)
	}
}
