package journal

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"strings"

	"kubeplay/server/audit"
)

// redacted is a copy of h whose credentials keep only their scheme: a
// journal is shown to learners, and a token in it (the playground admin's,
// say) would reach whoever reads it, as kube-apiserver's audit log leaves
// them out too.
func redacted(h http.Header) http.Header {
	h = h.Clone()
	for i, v := range h["Authorization"] {
		scheme, _, _ := strings.Cut(v, " ")
		h["Authorization"][i] = scheme + " <redacted>"
	}
	return h
}

// Handler returns api wrapped so that every request it serves is recorded
// (credentials redacted).
func (j *Journal) Handler(api http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := j.now()
		e := &Entry{
			Time: start, Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery,
			UserAgent: r.UserAgent(), Request: Message{Header: redacted(r.Header)},
		}
		j.begin(e)
		// The API fills rec in as it handles the request; the entry takes
		// a copy when the answer starts and when it ends.
		rec := &audit.Record{}
		r = r.WithContext(audit.NewContext(r.Context(), rec))
		body := &capture{limit: j.limits.BodyBytes}
		if r.Body != nil {
			r.Body = &teeBody{ReadCloser: r.Body, capture: body}
		}
		rw := &recorder{ResponseWriter: w, j: j, e: e, audit: rec, watch: IsWatch(r), body: capture{limit: j.limits.BodyBytes}}
		defer func() {
			rw.flushPartialEvent()
			j.update(e, true, func(e *Entry) {
				e.Request.Body, e.Request.Truncated = body.bytes(), body.truncated
				if e.Status == 0 { // the handler wrote nothing: net/http sends 200
					e.Status, e.Response.Header = http.StatusOK, w.Header().Clone()
				}
				e.Response.Body, e.Response.Truncated = rw.body.bytes(), rw.body.truncated
				e.Latency, e.Done = j.now().Sub(start), true
				e.Audit = rec.Copy()
			})
		}()
		api.ServeHTTP(rw, r)
	})
}

// capture keeps the first limit bytes written to it.
type capture struct {
	buf       bytes.Buffer
	limit     int
	truncated bool
}

func (c *capture) Write(p []byte) {
	if room := c.limit - c.buf.Len(); room < len(p) {
		p, c.truncated = p[:max(room, 0)], true
	}
	c.buf.Write(p)
}

func (c *capture) bytes() []byte {
	if c.buf.Len() == 0 {
		return nil
	}
	return bytes.Clone(c.buf.Bytes())
}

type teeBody struct {
	io.ReadCloser
	capture *capture
}

func (t *teeBody) Read(p []byte) (int, error) {
	n, err := t.ReadCloser.Read(p)
	t.capture.Write(p[:n])
	return n, err
}

// IsWatch reports whether r asks for a watch (?watch=true, or the
// deprecated /watch/ paths).
func IsWatch(r *http.Request) bool {
	w := r.URL.Query().Get("watch")
	return w == "true" || w == "1" || strings.Contains(r.URL.Path, "/watch/")
}

// recorder sees the response as the client does. A watch's JSON stream (one
// event per line) is recorded event by event, as it is sent; other bodies,
// and watches in other encodings, up to the body limit.
type recorder struct {
	http.ResponseWriter
	j       *Journal
	e       *Entry
	audit   *audit.Record
	watch   bool
	wrote   bool
	body    capture
	partial []byte // a watch event not yet ended by its newline
}

func (r *recorder) WriteHeader(code int) {
	if r.wrote {
		r.ResponseWriter.WriteHeader(code)
		return
	}
	r.wrote = true
	streaming := r.watch && code == http.StatusOK && strings.HasPrefix(r.Header().Get("Content-Type"), "application/json")
	r.j.update(r.e, streaming, func(e *Entry) {
		e.Status, e.Response.Header = code, r.Header().Clone()
		e.Audit = r.audit.Copy()
		if streaming {
			e.Watch = &Stream{}
		}
	})
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(p []byte) (int, error) {
	if !r.wrote {
		r.WriteHeader(http.StatusOK)
	}
	switch {
	case r.e.Watch == nil:
		r.body.Write(p)
	case len(r.partial) == 0 && len(p) > 0 && bytes.IndexByte(p, '\n') == len(p)-1:
		// One whole event, as the API writes them: no need to gather it.
		if line := p[:len(p)-1]; len(bytes.TrimSpace(line)) > 0 {
			r.j.event(r.e, bytes.Clone(line))
		}
	default:
		r.partial = append(r.partial, p...)
		for {
			line, rest, ok := bytes.Cut(r.partial, []byte{'\n'})
			if !ok {
				break
			}
			if len(bytes.TrimSpace(line)) > 0 {
				r.j.event(r.e, bytes.Clone(line))
			}
			r.partial = rest
		}
		r.partial = bytes.Clone(r.partial)
	}
	return r.ResponseWriter.Write(p)
}

// flushPartialEvent records an event the stream ended without a newline.
func (r *recorder) flushPartialEvent() {
	if r.e.Watch != nil && len(bytes.TrimSpace(r.partial)) > 0 {
		r.j.event(r.e, r.partial)
	}
}

// Flush lets watches stream through the recorder.
func (r *recorder) Flush() {
	http.NewResponseController(r.ResponseWriter).Flush()
}

// Hijack lets WebSocket upgrades through; the journal then records only
// the upgrade, not the frames.
func (r *recorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, rw, err := http.NewResponseController(r.ResponseWriter).Hijack()
	if err == nil {
		r.wrote = true
		r.j.update(r.e, false, func(e *Entry) {
			e.Status, e.Response.Header = http.StatusSwitchingProtocols, r.Header().Clone()
		})
	}
	return conn, rw, err
}

// Unwrap gives http.ResponseController the underlying writer.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
