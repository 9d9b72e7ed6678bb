package watch

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
)

// event is one watch event as the API streams it.
type event struct {
	Type   string         `json:"type"`
	Object map[string]any `json:"object"`
}

// pipeWriter streams a handler's answer to a reader, in process: the API's
// watch writes (and flushes) events while the page reads them.
type pipeWriter struct {
	header http.Header
	code   chan int
	w      *io.PipeWriter
	wrote  bool
}

func (p *pipeWriter) Header() http.Header { return p.header }

func (p *pipeWriter) WriteHeader(code int) {
	if !p.wrote {
		p.wrote = true
		p.code <- code
	}
}

func (p *pipeWriter) Write(b []byte) (int, error) {
	p.WriteHeader(http.StatusOK)
	return p.w.Write(b)
}

// Flush is a no-op: every Write reaches the reader at once.
func (p *pipeWriter) Flush() {}

// openWatch starts the watch request path (with query) against api and
// returns its status code, and a decoder of its events when the code is 200;
// otherwise the body (a Status) is in errBody. The watch ends when ctx does.
func openWatch(ctx context.Context, api http.Handler, path string) (code int, dec *json.Decoder, errBody []byte, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, path, nil)
	if err != nil {
		return 0, nil, nil, err
	}
	req.RequestURI = path
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", userAgent)
	pr, pw := io.Pipe()
	w := &pipeWriter{header: http.Header{}, code: make(chan int, 1), w: pw}
	go func() {
		defer func() {
			if p := recover(); p != nil {
				pw.CloseWithError(fmt.Errorf("the API handler panicked: %v", p))
			}
		}()
		api.ServeHTTP(w, req)
		w.WriteHeader(http.StatusOK)
		pw.Close()
	}()
	select {
	case code = <-w.code:
	case <-ctx.Done():
		return 0, nil, nil, ctx.Err()
	}
	if code != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(pr, 1<<20))
		return code, nil, body, nil
	}
	go func() { <-ctx.Done(); pr.CloseWithError(ctx.Err()) }()
	return code, json.NewDecoder(pr), nil, nil
}

// statusMessage is a Status body as "Reason (code): message".
func statusMessage(code int, body []byte) string {
	var st struct {
		Reason, Message string
	}
	if json.Unmarshal(body, &st) == nil && st.Message != "" {
		return st.Reason + " (" + strconv.Itoa(code) + "): " + st.Message
	}
	return strconv.Itoa(code) + ": " + string(body)
}
