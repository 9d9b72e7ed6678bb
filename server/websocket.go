//go:build !js

package server

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"kubeplay/server/encoding"
)

// webSocketStream sends watch events as WebSocket messages, as
// kube-apiserver does for a watch request that asks to upgrade: one text
// message per event (the same JSON line as the HTTP stream, in every
// subprotocol; a binary message per CBOR event), and a normal closure when
// the watch ends.
type webSocketStream struct {
	w      http.ResponseWriter
	r      *http.Request
	conv   *converter
	conn   *websocket.Conn
	cancel context.CancelFunc
	once   sync.Once
	failed bool
}

func newWebSocketStream(w http.ResponseWriter, r *http.Request, conv *converter) watchStream {
	return &webSocketStream{w: w, r: r, conv: conv, cancel: func() {}}
}

// webSocketUpgrader accepts what kube-apiserver accepts: a handshake with an
// Origin header (any origin: API clients authenticate by token, not cookie)
// and at most one subprotocol, which is echoed back. Refusals carry no body.
var webSocketUpgrader = websocket.Upgrader{
	CheckOrigin: func(r *http.Request) bool { return r.Header.Get("Origin") != "" },
	Error: func(w http.ResponseWriter, _ *http.Request, status int, _ error) {
		w.WriteHeader(status)
	},
}

// context returns the watch's context, cancelled when the client goes away.
func (s *webSocketStream) context(parent context.Context) context.Context {
	ctx, cancel := context.WithCancel(parent)
	s.cancel = cancel
	return ctx
}

func (s *webSocketStream) start() {
	s.once.Do(func() {
		protocols := websocket.Subprotocols(s.r)
		if len(protocols) > 1 {
			s.w.WriteHeader(http.StatusBadRequest)
			s.failed = true
			return
		}
		var h http.Header
		if len(protocols) == 1 {
			h = http.Header{"Sec-Websocket-Protocol": protocols}
		}
		conn, err := webSocketUpgrader.Upgrade(s.w, s.r, h)
		if err != nil {
			s.failed = true // the upgrader has answered
			return
		}
		s.conn = conn
		// The client sends nothing but control frames; reading notices
		// when it closes the connection.
		go func() {
			for {
				if _, _, err := conn.NextReader(); err != nil {
					s.cancel()
					return
				}
			}
		}()
	})
}

func (s *webSocketStream) send(ev watchEvent) bool {
	s.start()
	if s.failed {
		return false
	}
	b, err := s.conv.encodeEvent(ev)
	if err != nil {
		return false
	}
	if s.conv.as.MediaType == encoding.CBOR || s.conv.as.MediaType == encoding.Protobuf {
		return s.conn.WriteMessage(websocket.BinaryMessage, b) == nil // one event per message
	}
	return s.conn.WriteMessage(websocket.TextMessage, append(b, '\n')) == nil
}

// finish closes the connection with a normal closure.
func (s *webSocketStream) finish() {
	s.cancel()
	if s.conn == nil {
		return
	}
	msg := websocket.FormatCloseMessage(websocket.CloseNormalClosure, "")
	s.conn.WriteControl(websocket.CloseMessage, msg, time.Now().Add(time.Second))
	s.conn.Close()
}
