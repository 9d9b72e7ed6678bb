//go:build !js

package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// The handshake rules and framing are the oracle's (the test passes against
// it with -oracle, on a fresh one): a watch upgrades when the request has an
// Origin and at most one subprotocol (echoed back, any name); each event is
// a text message holding the JSON line of the HTTP stream; the end of the
// watch is a normal closure.
func TestWatch_WebSocket(t *testing.T) {
	srv := kubeplayOrOracle(t)
	cms := namespace(t, srv, "repr-websocket")
	call(t, srv, "POST", cms, `{"metadata":{"name":"first"}}`)
	wsURL := "ws" + strings.TrimPrefix(srv.URL, "http") + cms + "?watch=true&timeoutSeconds=2"
	dialURL := func(url string, h http.Header, protocols ...string) (*websocket.Conn, *http.Response, error) {
		d := websocket.Dialer{Subprotocols: protocols, TLSClientConfig: insecureTLS}
		full := srv.header()
		for k, v := range h {
			full[k] = v
		}
		return d.Dial(url, full)
	}
	dial := func(h http.Header, protocols ...string) (*websocket.Conn, *http.Response, error) {
		return dialURL(wsURL, h, protocols...)
	}
	origin := http.Header{"Origin": {"http://localhost"}}

	t.Run("events", func(t *testing.T) {
		// A watch that outlasts the change below however slow the machine;
		// the end of a watch is checked on a short one after it.
		long := strings.Replace(wsURL, "timeoutSeconds=2", fmt.Sprintf("timeoutSeconds=%d", int(waitLimit(t).Seconds())+1), 1)
		conn, resp, err := dialURL(long, origin, "base64.binary.k8s.io")
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if p := resp.Header.Get("Sec-Websocket-Protocol"); p != "base64.binary.k8s.io" {
			t.Errorf("subprotocol %q", p)
		}
		read := func() (string, string) {
			t.Helper()
			conn.SetReadDeadline(time.Now().Add(waitLimit(t)))
			mt, b, err := conn.ReadMessage()
			if err != nil {
				t.Fatal(err)
			}
			if mt != websocket.TextMessage || !bytes.HasSuffix(b, []byte("\n")) {
				t.Fatalf("message type %d %q", mt, b)
			}
			var ev struct {
				Type   string
				Object struct{ Metadata struct{ Name string } }
			}
			if err := json.Unmarshal(b, &ev); err != nil {
				t.Fatal(err)
			}
			return ev.Type, ev.Object.Metadata.Name
		}
		if typ, name := read(); typ != "ADDED" || name != "first" {
			t.Errorf("got %s %s", typ, name)
		}
		call(t, srv, "POST", cms, `{"metadata":{"name":"second"}}`)
		if typ, name := read(); typ != "ADDED" || name != "second" {
			t.Errorf("got %s %s", typ, name)
		}
		conn.Close()
		// The short watch: its initial events, then a normal closure.
		conn, _, err = dial(origin, "base64.binary.k8s.io")
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		for _, want := range []string{"first", "second"} {
			if typ, name := read(); typ != "ADDED" || name != want {
				t.Errorf("got %s %s, want ADDED %s", typ, name, want)
			}
		}
		_, _, err = conn.ReadMessage()
		if !websocket.IsCloseError(err, websocket.CloseNormalClosure) {
			t.Errorf("end of watch: %v", err)
		}
	})
	t.Run("table", func(t *testing.T) {
		h := origin.Clone()
		h.Set("Accept", "application/json;as=Table;g=meta.k8s.io;v=v1")
		conn, _, err := dial(h)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_, b, err := conn.ReadMessage()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(b, []byte(`"kind":"Table"`)) || !bytes.Contains(b, []byte(`"cells":["first",0,`)) {
			t.Errorf("not a Table event: %s", b)
		}
	})
	t.Run("refused", func(t *testing.T) {
		for _, tc := range []struct {
			name      string
			header    http.Header
			protocols []string
			code      int
		}{
			{"no origin", nil, nil, http.StatusForbidden},
			{"two subprotocols", origin, []string{"foo", "base64.binary.k8s.io"}, http.StatusBadRequest},
		} {
			_, resp, err := dial(tc.header, tc.protocols...)
			if err == nil || resp == nil || resp.StatusCode != tc.code {
				t.Errorf("%s: %v %v", tc.name, err, resp)
				continue
			}
			if b, _ := io.ReadAll(resp.Body); len(b) != 0 {
				t.Errorf("%s: body %q", tc.name, b)
			}
		}
	})
	t.Run("bad request before the upgrade", func(t *testing.T) {
		h := origin.Clone()
		h.Set("Accept", "application/json;as=Table;g=meta.k8s.io;v=v1")
		for k, v := range srv.header() {
			h[k] = v
		}
		d := websocket.Dialer{TLSClientConfig: insecureTLS}
		_, resp, err := d.Dial(wsURL+"&includeObject=Bogus", h)
		if err == nil || resp == nil || resp.StatusCode != http.StatusBadRequest {
			t.Fatalf("%v %v", err, resp)
		}
	})
}
