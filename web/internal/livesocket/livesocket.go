// Package livesocket is what the UI's live views share about their
// WebSockets (github.com/gorilla/websocket): the Origin check, the
// keepalive, write deadlines and the close that asks a client to reconnect.
package livesocket

import (
	"context"
	"net/http"
	"time"

	"github.com/gorilla/websocket"
)

const (
	// PingInterval is how often the server pings; a connection silent
	// (no pong, no message) for twice that is closed.
	PingInterval = 30 * time.Second
	writeTimeout = 10 * time.Second
)

// upgrader checks the Origin header against the Host (gorilla's default),
// so other sites cannot read a live view through a visitor's browser.
var upgrader = websocket.Upgrader{}

// Conn is one client's connection.
type Conn struct {
	ws *websocket.Conn
}

// Open answers a WebSocket handshake (400 for a plain request, 403 for
// another origin) and returns the connection and a context that ends when
// the client leaves or goes silent; ok is false when there is no
// connection (Open answered the request). Close the Conn when done.
func Open(w http.ResponseWriter, r *http.Request) (c *Conn, ctx context.Context, cancel context.CancelFunc, ok bool) {
	if !websocket.IsWebSocketUpgrade(r) {
		http.Error(w, "this is a WebSocket endpoint", http.StatusBadRequest)
		return nil, nil, nil, false
	}
	ws, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return nil, nil, nil, false // Upgrade answered the client
	}
	ctx, cancel = context.WithCancel(r.Context())
	ws.SetReadDeadline(time.Now().Add(2 * PingInterval))
	ws.SetPongHandler(func(string) error { return ws.SetReadDeadline(time.Now().Add(2 * PingInterval)) })
	go func() { // reads only to process pongs and notice the client leaving
		defer cancel()
		for {
			if _, _, err := ws.ReadMessage(); err != nil {
				return
			}
		}
	}()
	return &Conn{ws: ws}, ctx, cancel, true
}

// Ping sends a keepalive ping; false when the connection is broken.
func (c *Conn) Ping() bool {
	return c.ws.WriteControl(websocket.PingMessage, nil, time.Now().Add(writeTimeout)) == nil
}

// WriteJSON sends v as one text frame; false when the connection is broken.
func (c *Conn) WriteJSON(v any) bool {
	c.ws.SetWriteDeadline(time.Now().Add(writeTimeout))
	return c.ws.WriteJSON(v) == nil
}

// CloseTryAgain closes with code 1013 ("try again later"): the client is
// to reconnect and resume.
func (c *Conn) CloseTryAgain(reason string) {
	msg := websocket.FormatCloseMessage(websocket.CloseTryAgainLater, reason)
	c.ws.WriteControl(websocket.CloseMessage, msg, time.Now().Add(writeTimeout))
}

// Close closes the connection.
func (c *Conn) Close() error { return c.ws.Close() }
