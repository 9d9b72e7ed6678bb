// Package inproc calls the Kubernetes API in process: it hands the API's
// http.Handler a request built in memory, records the answer in memory, and
// decodes it the way client-go would. No network, listener or goroutine is
// involved, so it works the same natively and inside the WebAssembly build.
package inproc

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Client sends requests to a Kubernetes API handler.
type Client struct {
	api       http.Handler
	userAgent string
}

// New returns a Client for api that identifies itself as userAgent.
func New(api http.Handler, userAgent string) *Client {
	return &Client{api: api, userAgent: userAgent}
}

// Get sends GET path (an absolute path, optionally with a query, such as
// "/api/v1/namespaces?limit=500") to the API and decodes a 2xx JSON answer
// into out with encoding/json (so out may implement json.Unmarshaler, as
// unstructured.UnstructuredList does).
//
// Any failure is returned as a *apierrors.StatusError, so callers show one
// kind of error: the API's own metav1.Status when it answered with one
// (message, reason and code as the server wrote them); otherwise a Status
// derived from the HTTP code and body, as client-go derives it; for an
// undecodable success body or a panicking handler, an InternalError. Get never
// panics, whatever the handler does.
func (c *Client) Get(ctx context.Context, path string, out any) error {
	return c.Do(ctx, http.MethodGet, path, nil, out)
}

// Do sends method path with in (if not nil) encoded as a JSON body and
// decodes a 2xx answer into out (if not nil); errors as for Get.
func (c *Client) Do(ctx context.Context, method, path string, in, out any) error {
	return c.send(ctx, method, path, "application/json", in, out)
}

// Patch sends a PATCH of path with patch, of patchType (a patch media type
// such as "application/strategic-merge-patch+json"), encoded as JSON;
// answers as for Do.
func (c *Client) Patch(ctx context.Context, path, patchType string, patch, out any) error {
	return c.send(ctx, http.MethodPatch, path, patchType, patch, out)
}

func (c *Client) send(ctx context.Context, method, path, contentType string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return apierrors.NewBadRequest(fmt.Sprintf("%s %s: encoding body: %v", method, path, err))
		}
		body = bytes.NewReader(b)
	}
	header := http.Header{"Accept": {"application/json"}}
	if in != nil {
		header.Set("Content-Type", contentType)
	}
	rec, err := c.exchange(ctx, method, path, header, body)
	if err != nil {
		return err
	}
	if rec.code < 200 || rec.code > 299 {
		return statusError(rec.code, rec.body.Bytes(), method, path)
	}
	if out == nil {
		return nil
	}
	if ct := rec.header.Get("Content-Type"); ct != "" {
		if mt, _, _ := mime.ParseMediaType(ct); mt != "application/json" {
			return apierrors.NewInternalError(fmt.Errorf("%s %s: expected application/json, got %q", method, path, ct))
		}
	}
	if err := json.Unmarshal(rec.body.Bytes(), out); err != nil {
		return apierrors.NewInternalError(fmt.Errorf("%s %s: decoding response: %w", method, path, err))
	}
	return nil
}

// Response is an answer as the API wrote it.
type Response struct {
	Code   int
	Header http.Header
	Body   []byte
}

// Raw sends method path with header (User-Agent is the client's) and body
// (nil for none) and returns the answer whatever its code, for callers that
// show the exchange itself. The error is a *apierrors.StatusError only for an
// invalid path or a panicking handler.
func (c *Client) Raw(ctx context.Context, method, path string, header http.Header, body []byte) (Response, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	rec, err := c.exchange(ctx, method, path, header, r)
	if err != nil {
		return Response{}, err
	}
	return Response{Code: rec.code, Header: rec.header, Body: rec.body.Bytes()}, nil
}

// Err is nil for a 2xx answer, else the error Get would return for it.
func (r Response) Err(method, path string) error {
	if r.Code >= 200 && r.Code <= 299 {
		return nil
	}
	return statusError(r.Code, r.Body, method, path)
}

func (c *Client) exchange(ctx context.Context, method, path string, header http.Header, body io.Reader) (*recorder, error) {
	req, err := http.NewRequestWithContext(ctx, method, path, body)
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid API path %q: %v", path, err))
	}
	req.RequestURI = path
	if req.Body == nil { // as a server's request, whose Body is never nil
		req.Body = http.NoBody
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("User-Agent", c.userAgent)
	rec := newRecorder()
	if err := c.serve(rec, req); err != nil {
		return nil, err
	}
	return rec, nil
}

// serve runs the handler, turning a panic into an error: natively net/http
// would recover it, but in the browser a panic ends the whole module.
func (c *Client) serve(w http.ResponseWriter, r *http.Request) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = apierrors.NewInternalError(fmt.Errorf("%s %s: the API handler panicked: %v", r.Method, r.RequestURI, p))
		}
	}()
	c.api.ServeHTTP(w, r)
	return nil
}

// statusError turns a non-2xx answer into a StatusError: the body's Status if
// it is one, else a generic error for the code (client-go's behaviour).
func statusError(code int, b []byte, method, path string) error {
	var status metav1.Status
	if json.Unmarshal(b, &status) == nil && status.Kind == "Status" && status.Message != "" {
		if status.Code == 0 {
			status.Code = int32(code)
		}
		return &apierrors.StatusError{ErrStatus: status}
	}
	body := string(b)
	if len(body) > 512 {
		body = body[:512] + "…"
	}
	return apierrors.NewGenericServerResponse(code, strings.ToLower(method), schema.GroupResource{}, "", body, 0, false)
}

// recorder is an in-memory http.ResponseWriter (net/http/httptest.ResponseRecorder
// would do, but pulls test-server code into the binary).
type recorder struct {
	header      http.Header
	code        int
	wroteHeader bool
	body        bytes.Buffer
}

func newRecorder() *recorder {
	return &recorder{header: http.Header{}, code: http.StatusOK}
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(code int) {
	if r.wroteHeader {
		return
	}
	r.wroteHeader = true
	r.code = code
}

func (r *recorder) Write(p []byte) (int, error) {
	r.WriteHeader(http.StatusOK)
	return r.body.Write(p)
}

// Flush is a no-op: the whole answer is read once the handler returns.
func (r *recorder) Flush() {}

var _ http.Flusher = (*recorder)(nil)
