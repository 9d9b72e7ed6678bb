package handlertransport_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"kubeplay/internal/handlertransport"
)

func roundTrip(t *testing.T, ctx context.Context, h http.Handler, method, target string, body io.Reader) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, target, body)
	if err != nil {
		t.Fatal(err)
	}
	return handlertransport.Transport{Handler: h}.RoundTrip(req)
}

func readAll(t *testing.T, r io.Reader) string {
	t.Helper()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("reading the body: %v", err)
	}
	return string(b)
}

func TestTransport_RoundTrip(t *testing.T) {
	tests := []struct {
		name       string
		handler    http.HandlerFunc
		wantStatus string
		wantHeader string
		wantBody   string
	}{
		{"nothing written", func(w http.ResponseWriter, r *http.Request) {}, "200 OK", "", ""},
		{"the server's request", func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			io.WriteString(w, r.Method+" "+r.RequestURI+" "+string(b))
		}, "200 OK", "", "PUT /api/v1/namespaces/a?dryRun=All {}"},
		{"header committed by WriteHeader", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Seen", "before")
			w.WriteHeader(http.StatusContinue) // informational: not the answer
			w.WriteHeader(http.StatusCreated)
			w.Header().Set("X-Seen", "after")
			w.WriteHeader(http.StatusOK)
			io.WriteString(w, "made")
		}, "201 Created", "before", "made"},
		{"header committed by Write", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Seen", "before")
			io.WriteString(w, "x")
			w.Header().Set("X-Seen", "after")
		}, "200 OK", "before", "x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := roundTrip(t, t.Context(), tt.handler, http.MethodPut, "http://kubeplay/api/v1/namespaces/a?dryRun=All", strings.NewReader("{}"))
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			if res.Status != tt.wantStatus || res.Header.Get("X-Seen") != tt.wantHeader {
				t.Errorf("status %q, X-Seen %q; want %q, %q", res.Status, res.Header.Get("X-Seen"), tt.wantStatus, tt.wantHeader)
			}
			if got := readAll(t, res.Body); got != tt.wantBody {
				t.Errorf("body %q, want %q", got, tt.wantBody)
			}
		})
	}
}

// A watch's events arrive while the handler still runs.
func TestTransport_RoundTrip_streams(t *testing.T) {
	next := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		for _, ev := range []string{"ADDED\n", "MODIFIED\n"} {
			<-next
			io.WriteString(w, ev)
			w.(http.Flusher).Flush()
		}
	})
	res, err := roundTrip(t, t.Context(), h, http.MethodGet, "/api/v1/pods?watch=1", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	buf := make([]byte, 64)
	for _, want := range []string{"ADDED\n", "MODIFIED\n"} {
		next <- struct{}{}
		if n, err := res.Body.Read(buf); err != nil || string(buf[:n]) != want {
			t.Fatalf("read %q, %v; want %q", buf[:n], err, want)
		}
	}
	if n, err := res.Body.Read(buf); n != 0 || err != io.EOF {
		t.Errorf("after the last event: %q, %v; want io.EOF", buf[:n], err)
	}
}

// Closing the body ends the handler's context, as closing a connection does;
// ending the request's context ends the body.
func TestTransport_RoundTrip_ends(t *testing.T) {
	ended := make(chan struct{})
	watch := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		close(ended)
	})
	res, err := roundTrip(t, t.Context(), watch, http.MethodGet, "/api/v1/pods?watch=1", nil)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	<-ended

	ctx, cancel := context.WithCancel(t.Context())
	quiet := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	res, err = roundTrip(t, ctx, quiet, http.MethodGet, "/api/v1/pods?watch=1", nil)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	if _, err := res.Body.Read(make([]byte, 1)); !errors.Is(err, context.Canceled) {
		t.Errorf("reading after the context ended: %v, want context.Canceled", err)
	}
	res.Body.Close()

	// Before the header, RoundTrip itself returns the context's error.
	ctx, cancel = context.WithCancel(t.Context())
	cancel()
	release := make(chan struct{})
	defer close(release)
	held := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release })
	if _, err := roundTrip(t, ctx, held, http.MethodGet, "/", nil); !errors.Is(err, context.Canceled) {
		t.Errorf("RoundTrip with an ended context: %v, want context.Canceled", err)
	}
}

func TestTransport_RoundTrip_panics(t *testing.T) {
	before := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { panic("boom") })
	if _, err := roundTrip(t, t.Context(), before, http.MethodGet, "/api", nil); err == nil || !strings.Contains(err.Error(), "GET /api: the handler panicked: boom") {
		t.Errorf("a panic before the header: %v", err)
	}
	after := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "partial")
		panic("boom")
	})
	res, err := roundTrip(t, t.Context(), after, http.MethodGet, "/api", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if string(b) != "partial" || err == nil || !strings.Contains(err.Error(), "the handler panicked: boom") {
		t.Errorf("a panic after the header: body %q, error %v", b, err)
	}
}
