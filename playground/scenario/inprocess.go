package scenario

import (
	"context"
	"io"
	"net/http"
	"sync"
	"time"

	"kubeplay/playground"
	"kubeplay/server/releases"
)

// SandboxTarget runs scenarios in ms, in process (with its token, in
// hosted mode).
func SandboxTarget(ms *playground.Managed) Target {
	return Target{Server: "http://sandbox", Client: HandlerClient(ms.Handler()), Token: ms.Token(),
		AdvanceClock: func(d time.Duration) error { return ms.AdvanceClock(context.Background(), d) },
		Compact: func() error {
			_, err := ms.Compact(context.Background())
			return err
		},
		SetControllers: func(a ControllerAction) error {
			c := a.Apply(ms.Controllers())
			if a.FinalizerBots != nil {
				c.FinalizerBots = nil
				for _, b := range *a.FinalizerBots {
					d, _ := time.ParseDuration(b.Delay) // checked by Parse
					c.FinalizerBots = append(c.FinalizerBots, playground.FinalizerBot{Finalizer: b.Finalizer, Delay: d})
				}
			}
			ms.SetControllers(c)
			return nil
		},
		SetEmulatedVersion: func(v string) error {
			minor, err := releases.Parse(v)
			if err != nil {
				return err
			}
			return ms.SetVersion(minor)
		}}
}

// HandlerClient returns an HTTP client whose requests h serves in process,
// streaming included (a watch's events arrive as h writes them), so that a
// scenario runs against a sandbox without a network round trip.
func HandlerClient(h http.Handler) *http.Client {
	return &http.Client{Transport: handlerTransport{h}}
}

type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	pr, pw := io.Pipe()
	w := &pipeWriter{header: http.Header{}, pw: pw, ready: make(chan struct{})}
	req = req.Clone(req.Context())
	req.RequestURI = req.URL.RequestURI()
	if req.Body == nil {
		req.Body = http.NoBody
	}
	go func() {
		defer pw.Close()
		t.h.ServeHTTP(w, req)
		w.WriteHeader(http.StatusOK) // a handler that wrote nothing
	}()
	select {
	case <-w.ready:
	case <-req.Context().Done():
		pr.Close()
		return nil, req.Context().Err()
	}
	return &http.Response{StatusCode: w.code, Status: http.StatusText(w.code), Header: w.sent, Body: pr,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, ContentLength: -1, Request: req}, nil
}

// pipeWriter hands the response to RoundTrip once its header is written,
// and its body through a pipe.
type pipeWriter struct {
	header http.Header
	sent   http.Header
	code   int
	pw     *io.PipeWriter
	once   sync.Once
	ready  chan struct{}
}

func (w *pipeWriter) Header() http.Header { return w.header }

func (w *pipeWriter) WriteHeader(code int) {
	w.once.Do(func() {
		w.code, w.sent = code, w.header.Clone()
		close(w.ready)
	})
}

func (w *pipeWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.pw.Write(p)
}

// Flush: the pipe delivers each write as it happens.
func (w *pipeWriter) Flush() {}
