package cli

import (
	"fmt"
	"io"
	"net/http"
	"sync"
)

// handlerTransport is an http.RoundTripper that serves each request with an
// http.Handler in process, streaming the answer (watches) through a pipe.
type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	pr, pw := io.Pipe()
	w := &pipeWriter{header: http.Header{}, pw: pw, head: make(chan struct{})}
	r := req.Clone(req.Context())
	r.RequestURI = req.URL.RequestURI()
	r.RemoteAddr = "console"
	if r.Body == nil {
		r.Body = http.NoBody
	}
	go func() {
		defer func() {
			if p := recover(); p != nil {
				pw.CloseWithError(fmt.Errorf("the handler panicked: %v", p))
				w.sendHead()
				return
			}
			w.sendHead()
			pw.Close()
		}()
		t.h.ServeHTTP(w, r)
	}()
	select {
	case <-w.head:
	case <-req.Context().Done():
		pr.Close()
		return nil, req.Context().Err()
	}
	return &http.Response{
		Status:     fmt.Sprintf("%d %s", w.status, http.StatusText(w.status)),
		StatusCode: w.status,
		Proto:      "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:        w.sent,
		Body:          pr,
		ContentLength: -1,
		Request:       req,
	}, nil
}

// pipeWriter is the handler's ResponseWriter: the head is delivered at the
// first write or flush (or the end), the body through the pipe.
type pipeWriter struct {
	header http.Header
	sent   http.Header // the header as delivered
	status int
	pw     *io.PipeWriter
	once   sync.Once
	head   chan struct{}
}

func (w *pipeWriter) Header() http.Header { return w.header }

func (w *pipeWriter) WriteHeader(code int) {
	if w.status == 0 && code >= 200 {
		w.status = code
	}
}

func (w *pipeWriter) sendHead() {
	w.once.Do(func() {
		if w.status == 0 {
			w.status = http.StatusOK
		}
		w.sent = w.header.Clone()
		close(w.head)
	})
}

func (w *pipeWriter) Write(p []byte) (int, error) {
	w.sendHead()
	return w.pw.Write(p)
}

func (w *pipeWriter) Flush() { w.sendHead() }
