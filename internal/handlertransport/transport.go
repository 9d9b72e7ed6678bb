package handlertransport

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
)

// Transport is an http.RoundTripper that serves each request with Handler,
// in a goroutine of its own, the body flowing through a pipe.
type Transport struct {
	Handler http.Handler
}

var _ http.RoundTripper = Transport{}

// RoundTrip hands Handler a server's copy of req and returns the answer once
// the handler has committed its header: by WriteHeader, by its first Write
// or Flush, or by returning (200 for a handler that wrote nothing). As over
// a network, ending req's context ends the body (reads fail with the
// context's error), and closing the body ends the handler's context.
//
// A handler's panic is an error: from RoundTrip before the header, from the
// body's Read after it. Natively net/http would recover it, but in the
// browser a panic ends the whole module. RoundTrip closes req.Body once the
// handler returns.
func (t Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancel(req.Context())
	r := req.Clone(ctx)
	r.RequestURI = req.URL.RequestURI()
	if r.Body == nil { // as a server's request, whose Body is never nil
		r.Body = http.NoBody
	}
	pr, pw := io.Pipe()
	w := &responseWriter{header: http.Header{}, body: pw, committed: make(chan struct{})}
	// The body's reads fail with the context's error, and the handler's
	// writes with io.ErrClosedPipe, once the context ends.
	stop := context.AfterFunc(ctx, func() { pw.CloseWithError(ctx.Err()) })
	go func() {
		defer cancel()
		defer stop() // the body is closed by then: cancel has nothing to end
		defer r.Body.Close()
		defer func() {
			if p := recover(); p != nil {
				w.fail(fmt.Errorf("%s %s: the handler panicked: %v", r.Method, r.RequestURI, p))
			}
		}()
		t.Handler.ServeHTTP(w, r)
		w.commit(http.StatusOK)
		pw.CloseWithError(ctx.Err()) // io.EOF unless the context ended
	}()
	select {
	case <-w.committed:
	case <-req.Context().Done():
		return nil, req.Context().Err() // the handler's writes fail and it ends
	}
	if w.err != nil {
		return nil, w.err
	}
	return &http.Response{
		Status:     fmt.Sprintf("%d %s", w.code, http.StatusText(w.code)),
		StatusCode: w.code,
		Proto:      "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:        w.sent,
		Body:          body{pr, cancel},
		ContentLength: -1,
		Request:       req,
	}, nil
}

// body is the response body the client reads.
type body struct {
	*io.PipeReader
	cancel context.CancelFunc
}

// Close ends the handler's context, as a client closing its connection
// does: a watch stops, rather than waiting for its next event to find no
// reader.
func (b body) Close() error {
	b.cancel()
	return b.PipeReader.Close()
}

// responseWriter is the handler's http.ResponseWriter. Its header is
// committed once, as net/http's is: changes after WriteHeader are not sent.
type responseWriter struct {
	header http.Header
	body   *io.PipeWriter

	once      sync.Once
	committed chan struct{} // closed once code and sent, or err, are set
	code      int
	sent      http.Header
	err       error
}

var _ http.Flusher = (*responseWriter)(nil)

func (w *responseWriter) Header() http.Header { return w.header }

// WriteHeader commits code, unless it is informational (1xx): net/http
// sends those ahead of the answer, which here has no use for them.
func (w *responseWriter) WriteHeader(code int) {
	if code >= 200 {
		w.commit(code)
	}
}

func (w *responseWriter) Write(p []byte) (int, error) {
	w.commit(http.StatusOK)
	return w.body.Write(p)
}

// Flush commits the header; the body needs no flushing, each Write reaching
// the reader as it happens.
func (w *responseWriter) Flush() { w.commit(http.StatusOK) }

func (w *responseWriter) commit(code int) {
	w.once.Do(func() {
		w.code, w.sent = code, w.header.Clone()
		close(w.committed)
	})
}

// fail ends the answer with err: RoundTrip returns it if the header is not
// committed yet, the body's Read after what was written otherwise.
func (w *responseWriter) fail(err error) {
	w.once.Do(func() {
		w.err = err
		close(w.committed)
	})
	w.body.CloseWithError(err)
}
