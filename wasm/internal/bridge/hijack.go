package bridge

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"time"
)

// A handler may hijack the exchange, as it would a net/http connection, to
// speak another protocol over it: the WebSocket of the request log's live
// view does (gorilla/websocket's Upgrader). The sink then gets Head with
// status 101 (Switching Protocols) and an empty header at once, every byte
// the handler writes on the connection — the protocol's own response head
// included — as chunks, and End(nil) when the handler closes the connection
// or returns, or the client cancels the exchange. Bytes from the client come
// in through Exchange.Receive.

var _ http.Hijacker = (*responseWriter)(nil)

// Hijack hands the exchange over to the handler as a net.Conn. It fails once
// the head was sent.
func (w *responseWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	if w.sent || w.err != nil {
		return nil, nil, errors.New("kubeplay: hijack after the answer started")
	}
	w.sent = true
	w.err = errHijacked
	w.ex.sink.Head(http.StatusSwitchingProtocols, http.Header{})
	c := w.ex.conn()
	return c, bufio.NewReadWriter(bufio.NewReader(c), bufio.NewWriter(c)), nil
}

// errHijacked is returned by the ResponseWriter's writes after Hijack.
var errHijacked = http.ErrHijacked

// Receive delivers bytes the client sent on a hijacked exchange to the
// handler's reads; before a hijack, or once the connection is closed, they
// are dropped. It never blocks and keeps no reference to p.
func (e *Exchange) Receive(p []byte) {
	c := e.hijacked()
	if c == nil || len(p) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	c.in = append(c.in, p...)
	c.signal()
}

// conn creates the exchange's hijacked connection.
func (e *Exchange) conn() *conn {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.hijack = &conn{ex: e, wake: make(chan struct{}, 1)}
	return e.hijack
}

func (e *Exchange) hijacked() *conn {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.hijack
}

// conn is a hijacked exchange. Writes go to the sink as they come (with the
// sink's flow control); reads take what Receive delivered. Cancelling the
// exchange (the client went away) closes it.
type conn struct {
	ex *Exchange

	mu       sync.Mutex
	in       []byte        // received, not yet read
	wake     chan struct{} // signalled when in grows, the deadline moves or the conn closes
	deadline time.Time     // for reads; zero: none
	closed   bool
	writing  sync.Mutex // one Write at a time, as the sink requires
	stalled  bool       // the sink's queue is full: wait for Resume before the next chunk
}

var _ net.Conn = (*conn)(nil)

// signal wakes a waiting Read; c.mu is held.
func (c *conn) signal() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

func (c *conn) Read(p []byte) (int, error) {
	for {
		c.mu.Lock()
		if len(c.in) > 0 {
			n := copy(p, c.in)
			c.in = c.in[n:]
			c.mu.Unlock()
			return n, nil
		}
		if c.closed {
			c.mu.Unlock()
			return 0, io.EOF
		}
		deadline := c.deadline
		c.mu.Unlock()
		var timer *time.Timer
		var timeout <-chan time.Time
		if !deadline.IsZero() {
			d := time.Until(deadline)
			if d <= 0 {
				return 0, os.ErrDeadlineExceeded
			}
			timer = time.NewTimer(d)
			timeout = timer.C
		}
		select {
		case <-c.wake:
		case <-timeout:
		case <-c.ex.done:
			c.close()
		}
		if timer != nil {
			timer.Stop()
		}
	}
}

// Write sends p to the client, first waiting for the consumer if it asked
// for a pause. Write deadlines are not kept: only a consumer that stops
// reading holds a write, and cancelling the exchange ends that.
func (c *conn) Write(p []byte) (int, error) {
	c.writing.Lock()
	defer c.writing.Unlock()
	if c.isClosed() {
		return 0, net.ErrClosed
	}
	if len(p) == 0 {
		return 0, nil
	}
	if c.stalled {
		select {
		case <-c.ex.resume:
			c.stalled = false
		case <-c.ex.done:
			return 0, net.ErrClosed
		}
	}
	c.stalled = !c.ex.sink.Chunk(p)
	return len(p), nil
}

func (c *conn) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// Close ends the exchange: the sink gets End(nil) (once).
func (c *conn) Close() error {
	if !c.close() {
		return net.ErrClosed
	}
	return nil
}

// close marks the conn closed and ends the exchange, reporting whether it
// was open.
func (c *conn) close() bool {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return false
	}
	c.closed = true
	c.signal()
	c.mu.Unlock()
	c.ex.Cancel()    // a stalled Write gives up
	c.writing.Lock() // no Chunk after End
	defer c.writing.Unlock()
	c.ex.sink.End(nil)
	return true
}

func (c *conn) SetDeadline(t time.Time) error { return c.SetReadDeadline(t) }

func (c *conn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.deadline = t
	c.signal()
	return nil
}

func (c *conn) SetWriteDeadline(time.Time) error { return nil }

func (c *conn) LocalAddr() net.Addr  { return addr("kubeplay") }
func (c *conn) RemoteAddr() net.Addr { return addr(c.ex.req.RemoteAddr) }

// addr is a net.Addr for the in-memory connection.
type addr string

func (a addr) Network() string { return "memory" }
func (a addr) String() string  { return string(a) }
