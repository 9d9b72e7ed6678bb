package cli

import (
	"errors"
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

// do answers req as an http.Client with this transport would, following
// redirects (the engine redirects an outdated /openapi/v3 ?hash=) with the
// requests the client would make: up to 10; after a 301, 302 or 303 a GET
// (HEAD stays HEAD) without the body and its Content-* headers, after a 307
// or 308 the same request again; the original headers and a Referer. Not
// an http.Client, because using one links its network transport (TLS,
// HTTP/2: 2 MB of wasm) into the browser's engine, which never needs it.
// The in-process console sends no credentials, which the client would drop
// on the way to another host.
func (t handlerTransport) do(req *http.Request) (*http.Response, error) {
	first, withBody := req, true
	for hops := 0; ; hops++ {
		res, err := t.RoundTrip(req)
		if err != nil {
			return nil, err
		}
		method := req.Method
		switch res.StatusCode {
		case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther:
			if method != http.MethodHead {
				method = http.MethodGet
			}
			withBody = false
		case http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		default:
			return res, nil
		}
		loc := res.Header.Get("Location")
		if loc == "" {
			return res, nil
		}
		res.Body.Close()
		if hops == 10 {
			return nil, errors.New("stopped after 10 redirects")
		}
		u, err := req.URL.Parse(loc)
		if err != nil {
			return nil, fmt.Errorf("failed to parse Location header %q: %v", loc, err)
		}
		next, err := http.NewRequestWithContext(first.Context(), method, u.String(), nil)
		if err != nil {
			return nil, err
		}
		for k, v := range first.Header {
			switch http.CanonicalHeaderKey(k) {
			case "Content-Encoding", "Content-Language", "Content-Location", "Content-Type":
				if !withBody {
					continue // they describe the body
				}
			}
			next.Header[k] = v
		}
		if withBody && first.GetBody != nil {
			if next.Body, err = first.GetBody(); err != nil {
				return nil, err
			}
			next.GetBody, next.ContentLength = first.GetBody, first.ContentLength
		}
		if next.Header.Get("Referer") == "" {
			next.Header.Set("Referer", req.URL.String())
		}
		req = next
	}
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
