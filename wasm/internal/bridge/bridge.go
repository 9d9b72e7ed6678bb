// Package bridge serves one HTTP request to an http.Handler in memory and
// streams the answer to a Sink: the part of the browser entrypoint that does
// not depend on syscall/js, so that it is tested natively.
//
// It stands in for net/http's server: a ResponseWriter that buffers until
// Flush or the end of the handler (no net/http/httptest in the wasm binary),
// backpressure from the consumer, cancellation, and panics recovered into a
// 500 Status instead of ending the WebAssembly module.
package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net/http"
	"runtime/debug"
	"strconv"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// Sink receives one answer. Its methods are called from the goroutine serving
// the request, one at a time, in the order Head, Chunk..., End; they must not
// block.
type Sink interface {
	// Head delivers the status code and header, once, before any Chunk.
	// The header is not used by the exchange afterwards.
	Head(status int, header http.Header)
	// Chunk delivers the next piece of the body (never empty); p is reused
	// after Chunk returns. Chunk returns false when the consumer's queue is
	// full: it must then call Exchange.Resume once it wants more, and the
	// exchange sends no further chunk until it does (or is cancelled).
	Chunk(p []byte) (more bool)
	// End is called once, last. err is nil when the body is complete; when it
	// is not nil the body (or, before Head, the whole answer) was cut short,
	// as a network error would cut it, because the exchange was cancelled or
	// the handler aborted with http.ErrAbortHandler or panicked mid-stream.
	End(err error)
}

// Exchange is one request in flight.
type Exchange struct {
	req    *http.Request
	sink   Sink
	cancel context.CancelFunc
	done   <-chan struct{} // closed by cancel
	resume chan struct{}

	mu     sync.Mutex
	hijack *conn // set once the handler hijacked the exchange
}

// New prepares an exchange of r (whose context it wraps to make it
// cancellable) with sink. Serve it once.
func New(r *http.Request, sink Sink) *Exchange {
	ctx, cancel := context.WithCancel(r.Context())
	return &Exchange{
		req:    r.WithContext(ctx),
		sink:   sink,
		cancel: cancel,
		done:   ctx.Done(),
		resume: make(chan struct{}, 1),
	}
}

// Cancel cancels the request's context: the handler sees ctx.Done, further
// writes fail, and End is called with the cancellation error unless the answer
// was already complete. Safe to call at any time, any number of times.
func (e *Exchange) Cancel() { e.cancel() }

// Resume tells a stalled exchange that the consumer wants more (see
// Sink.Chunk). It never blocks; extra calls are harmless.
func (e *Exchange) Resume() {
	select {
	case e.resume <- struct{}{}:
	default:
	}
}

// Serve runs h on the request and delivers the answer to the sink; it
// returns after calling End. A panic in h becomes a 500 answer carrying an
// InternalError Status when nothing was sent yet, else cuts the body short;
// either way it is logged with its stack and goes no further.
func (e *Exchange) Serve(h http.Handler) {
	w := &responseWriter{ex: e, header: make(http.Header), discard: e.req.Method == http.MethodHead}
	defer e.cancel()
	err := serve(h, w, e.req)
	if c := e.hijacked(); c != nil {
		c.close()
		return
	}
	if err != nil {
		w.fail(err)
		return
	}
	w.finish()
}

// serve calls h, recovering a panic into an error.
func serve(h http.Handler, w http.ResponseWriter, r *http.Request) (err error) {
	defer func() {
		p := recover()
		switch {
		case p == nil:
		case p == http.ErrAbortHandler:
			err = http.ErrAbortHandler
		default:
			log.Printf("kubeplay: panic serving %s %s: %v\n%s", r.Method, r.RequestURI, p, debug.Stack())
			err = &panicError{value: p}
		}
	}()
	h.ServeHTTP(w, r)
	return nil
}

type panicError struct{ value any }

func (p *panicError) Error() string { return fmt.Sprintf("the handler panicked: %v", p.value) }

// responseWriter is the http.ResponseWriter and http.Flusher handed to the
// handler. Like net/http's, it must not be used concurrently nor after the
// handler returns; unlike net/http's, it buffers the body until Flush or the
// end of the handler, since nothing is gained by sending pieces in memory.
type responseWriter struct {
	ex      *Exchange
	header  http.Header
	status  int  // 0 until WriteHeader
	sent    bool // Head delivered
	discard bool // a HEAD request: no body
	stalled bool // the sink's queue is full: wait for Resume before the next chunk
	buf     []byte
	err     error // sticky: the exchange was cancelled or the answer is over
}

var (
	_ http.ResponseWriter = (*responseWriter)(nil)
	_ http.Flusher        = (*responseWriter)(nil)
)

// errFinished is returned by writes after the handler returned.
var errFinished = errors.New("kubeplay: write after the handler returned")

func (w *responseWriter) Header() http.Header { return w.header }

// WriteHeader records the status code; the first final (non-1xx) code wins.
// Informational codes are dropped: there is no connection to send them on.
func (w *responseWriter) WriteHeader(code int) {
	if code < 100 || code > 999 {
		panic(fmt.Sprintf("invalid WriteHeader code %v", code)) // as net/http
	}
	if w.status != 0 || code < 200 {
		return
	}
	w.status = code
}

func (w *responseWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	if w.err != nil {
		return 0, w.err
	}
	if err := w.ex.req.Context().Err(); err != nil {
		return 0, err
	}
	if w.discard {
		return len(p), nil
	}
	w.buf = append(w.buf, p...)
	return len(p), nil
}

// Flush sends the header (if not yet sent) and the body buffered so far.
func (w *responseWriter) Flush() { _ = w.FlushError() }

// FlushError is Flush reporting failure; http.ResponseController uses it.
func (w *responseWriter) FlushError() error {
	if w.err != nil {
		return w.err
	}
	if err := w.ex.req.Context().Err(); err != nil {
		return err
	}
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	w.sendHead()
	return w.sendBody()
}

// sendHead delivers the status and header once, setting Content-Type from
// the first bytes of the body if the handler set none (as net/http does;
// a present but empty Content-Type suppresses it).
func (w *responseWriter) sendHead() {
	if w.sent {
		return
	}
	w.sent = true
	if _, ok := w.header["Content-Type"]; !ok && len(w.buf) > 0 && !w.discard {
		w.header.Set("Content-Type", http.DetectContentType(w.buf))
	}
	w.ex.sink.Head(w.status, w.header.Clone())
}

// sendBody delivers the buffered body as one chunk, first waiting for the
// consumer if it asked for a pause.
func (w *responseWriter) sendBody() error {
	if len(w.buf) == 0 {
		return nil
	}
	ctx := w.ex.req.Context()
	if w.stalled {
		select {
		case <-w.ex.resume:
			w.stalled = false
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	w.stalled = !w.ex.sink.Chunk(w.buf)
	if !w.stalled {
		// A Resume that came before this chunk answers nothing.
		select {
		case <-w.ex.resume:
		default:
		}
	}
	w.buf = w.buf[:0]
	return nil
}

// finish completes the answer after the handler returned normally.
func (w *responseWriter) finish() {
	if w.err != nil {
		return
	}
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	if !w.sent && !w.discard && w.header.Get("Content-Length") == "" && w.header.Get("Transfer-Encoding") == "" {
		w.header.Set("Content-Length", strconv.Itoa(len(w.buf)))
	}
	if err := w.ex.req.Context().Err(); err != nil {
		w.fail(err)
		return
	}
	w.sendHead()
	if err := w.sendBody(); err != nil {
		w.fail(err)
		return
	}
	w.err = errFinished
	w.ex.sink.End(nil)
}

// fail ends the answer with err: a 500 Status if nothing was sent and err is
// a panic, else a cut-short answer.
func (w *responseWriter) fail(err error) {
	if w.err == errFinished {
		return
	}
	w.err = errFinished
	var p *panicError
	if !w.sent && errors.As(err, &p) && w.ex.req.Context().Err() == nil {
		w.internalError(p)
		return
	}
	w.ex.sink.End(err)
}

// internalError answers 500 with the Status kube-apiserver would send for an
// internal error.
func (w *responseWriter) internalError(p *panicError) {
	st := apierrors.NewInternalError(p).ErrStatus
	st.Kind, st.APIVersion = "Status", "v1"
	body, err := json.Marshal(st)
	if err != nil {
		body = []byte(`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","reason":"InternalError","code":500}`)
	}
	h := make(http.Header)
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-cache, private")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.sent = true
	w.ex.sink.Head(http.StatusInternalServerError, h)
	if !w.discard {
		w.ex.sink.Chunk(body)
	}
	w.ex.sink.End(nil)
}
