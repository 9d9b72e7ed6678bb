package bridge_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"kubeplay/wasm/internal/bridge"
)

// recorder is a Sink that records what it receives as lines of text.
type recorder struct {
	mu     sync.Mutex
	events []string
	body   strings.Builder
	header http.Header
	more   func(n int) bool // Chunk's answer for the n-th chunk (from 1); nil: always true
	chunks int
	ended  chan struct{}
}

func newRecorder() *recorder { return &recorder{ended: make(chan struct{})} }

func (r *recorder) Head(status int, h http.Header) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.header = h
	r.events = append(r.events, fmt.Sprintf("head %d", status))
}

func (r *recorder) Chunk(p []byte) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.chunks++
	r.body.Write(p)
	r.events = append(r.events, fmt.Sprintf("chunk %q", p))
	return r.more == nil || r.more(r.chunks)
}

func (r *recorder) End(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, fmt.Sprintf("end %v", err))
	close(r.ended)
}

func (r *recorder) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.events, "\n")
}

// waitChunks waits until the recorder has received n chunks. The bound only
// ends a broken run: a loaded machine may take long to get there.
func waitChunks(t *testing.T, r *recorder, n int) {
	t.Helper()
	limit := 2 * time.Minute
	if d, ok := t.Deadline(); ok {
		limit = max(time.Until(d)-30*time.Second, time.Until(d)/2)
	}
	for deadline := time.Now().Add(limit); ; time.Sleep(time.Millisecond) {
		r.mu.Lock()
		chunks := r.chunks
		r.mu.Unlock()
		if chunks >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %d chunks:\n%s", n, r)
		}
	}
}

func newRequest(t *testing.T, method, target string) *http.Request {
	t.Helper()
	r, err := http.NewRequestWithContext(t.Context(), method, target, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestExchange_Serve(t *testing.T) {
	tests := []struct {
		name    string
		method  string
		handler http.HandlerFunc
		want    []string
		header  map[string]string // expected header values ("" = absent)
	}{{
		name:    "whole body sent at the end, type sniffed, length set",
		handler: func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hello "); io.WriteString(w, "world") },
		want:    []string{"head 200", `chunk "hello world"`, "end <nil>"},
		header:  map[string]string{"Content-Type": "text/plain; charset=utf-8", "Content-Length": "11"},
	}, {
		name: "flushes stream chunks, the first one sending the head",
		handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			io.WriteString(w, "{}\n")
			w.(http.Flusher).Flush()
			io.WriteString(w, "[]\n")
			http.NewResponseController(w).Flush()
		},
		want:   []string{"head 200", `chunk "{}\n"`, `chunk "[]\n"`, "end <nil>"},
		header: map[string]string{"Content-Type": "application/json", "Content-Length": ""},
	}, {
		name:    "empty answer",
		handler: func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) },
		want:    []string{"head 204", "end <nil>"},
		header:  map[string]string{"Content-Type": ""},
	}, {
		name: "first final code wins, 1xx dropped",
		handler: func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusContinue)
			w.WriteHeader(http.StatusCreated)
			w.WriteHeader(http.StatusConflict)
		},
		want: []string{"head 201", "end <nil>"},
	}, {
		name:    "HEAD has no body",
		method:  http.MethodHead,
		handler: func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ignored") },
		want:    []string{"head 200", "end <nil>"},
	}, {
		name: "panic mid-stream cuts the body short",
		handler: func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "partial")
			w.(http.Flusher).Flush()
			panic("boom")
		},
		want: []string{"head 200", `chunk "partial"`, "end the handler panicked: boom"},
	}, {
		name:    "ErrAbortHandler ends without an answer",
		handler: func(w http.ResponseWriter, r *http.Request) { panic(http.ErrAbortHandler) },
		want:    []string{"end net/http: abort Handler"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := newRecorder()
			method := tt.method
			if method == "" {
				method = http.MethodGet
			}
			bridge.New(newRequest(t, method, "/x"), rec).Serve(tt.handler)
			if got, want := rec.String(), strings.Join(tt.want, "\n"); got != want {
				t.Errorf("events:\n%s\nwant:\n%s", got, want)
			}
			for k, v := range tt.header {
				if got := rec.header.Get(k); got != v {
					t.Errorf("header %s = %q, want %q", k, got, v)
				}
			}
		})
	}
}

func TestExchange_Serve_panicBecomesInternalErrorStatus(t *testing.T) {
	rec := newRecorder()
	bridge.New(newRequest(t, http.MethodGet, "/api/v1/pods"), rec).Serve(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Dropped", "1")
		io.WriteString(w, "not sent")
		panic(errors.New("boom"))
	}))
	if !strings.HasPrefix(rec.String(), "head 500\n") || !strings.HasSuffix(rec.String(), "end <nil>") {
		t.Fatalf("events:\n%s", rec)
	}
	if got := rec.header.Get("Content-Type"); got != "application/json" {
		t.Errorf("Content-Type = %q", got)
	}
	if rec.header.Get("X-Dropped") != "" {
		t.Errorf("the handler's header leaked into the 500 answer")
	}
	var st metav1.Status
	if err := json.Unmarshal([]byte(rec.body.String()), &st); err != nil {
		t.Fatal(err)
	}
	if st.Kind != "Status" || st.APIVersion != "v1" || st.Status != metav1.StatusFailure ||
		st.Reason != metav1.StatusReasonInternalError || st.Code != 500 ||
		st.Message != "Internal error occurred: the handler panicked: boom" {
		t.Errorf("status = %+v", st)
	}
}

// stream returns a handler that sends n flushed chunks "0", "1", ... and then
// reports the error of a last flush on done.
func stream(n int, done chan<- error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := range n {
			fmt.Fprint(w, i)
			if err := http.NewResponseController(w).Flush(); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}
}

func TestExchange_Resume(t *testing.T) {
	rec := newRecorder()
	rec.more = func(n int) bool { return n != 2 } // the queue is full after chunk 2
	done := make(chan error, 1)
	ex := bridge.New(newRequest(t, http.MethodGet, "/"), rec)
	go ex.Serve(stream(4, done))

	// Once chunk "1" filled the queue, the handler must stay held back.
	waitChunks(t, rec, 2)
	select {
	case <-done:
		t.Fatalf("the handler was not held back after a full queue:\n%s", rec)
	case <-time.After(50 * time.Millisecond):
	}
	if got, want := rec.String(), "head 200\nchunk \"0\"\nchunk \"1\""; got != want {
		t.Fatalf("before Resume:\n%s\nwant:\n%s", got, want)
	}
	ex.Resume()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	<-rec.ended
	if got, want := rec.String(), "head 200\nchunk \"0\"\nchunk \"1\"\nchunk \"2\"\nchunk \"3\"\nend <nil>"; got != want {
		t.Fatalf("after Resume:\n%s\nwant:\n%s", got, want)
	}
}

func TestExchange_Cancel(t *testing.T) {
	t.Run("while stalled", func(t *testing.T) {
		rec := newRecorder()
		rec.more = func(int) bool { return false }
		done := make(chan error, 1)
		ex := bridge.New(newRequest(t, http.MethodGet, "/"), rec)
		go ex.Serve(stream(3, done))
		waitChunks(t, rec, 1) // stalled after chunk "0"
		ex.Cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("flush error = %v, want context.Canceled", err)
		}
		<-rec.ended
		if got, want := rec.String(), "head 200\nchunk \"0\"\nend context canceled"; got != want {
			t.Errorf("events:\n%s\nwant:\n%s", got, want)
		}
	})
	t.Run("before the head", func(t *testing.T) {
		rec := newRecorder()
		ex := bridge.New(newRequest(t, http.MethodGet, "/"), rec)
		ex.Serve(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ex.Cancel()
			<-r.Context().Done()
			if _, err := io.WriteString(w, "late"); err == nil {
				t.Error("write after cancel succeeded")
			}
		}))
		if got, want := rec.String(), "end context canceled"; got != want {
			t.Errorf("events:\n%s\nwant:\n%s", got, want)
		}
	})
	t.Run("after the end is harmless", func(t *testing.T) {
		rec := newRecorder()
		ex := bridge.New(newRequest(t, http.MethodGet, "/"), rec)
		ex.Serve(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
		ex.Cancel()
		ex.Resume()
		if got, want := rec.String(), "head 200\nend <nil>"; got != want {
			t.Errorf("events:\n%s\nwant:\n%s", got, want)
		}
	})
}

func TestExchange_Hijack(t *testing.T) {
	got := make(chan string, 1)
	hijacked := make(chan struct{}) // bytes sent before are dropped
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, _, err := http.NewResponseController(w).Hijack()
		close(hijacked)
		if err != nil {
			t.Errorf("Hijack: %v", err)
			return
		}
		defer c.Close()
		if _, err := w.Write([]byte("x")); err != http.ErrHijacked {
			t.Errorf("Write after Hijack: %v, want http.ErrHijacked", err)
		}
		io.WriteString(c, "hello")
		buf := make([]byte, 4)
		if _, err := io.ReadFull(c, buf); err != nil {
			t.Errorf("Read: %v", err)
		}
		io.WriteString(c, "got "+string(buf))
		c.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
		_, err = c.Read(buf)
		got <- fmt.Sprint(err)
	})
	rec := newRecorder()
	ex := bridge.New(newRequest(t, "GET", "/live"), rec)
	go ex.Serve(h)
	<-hijacked
	ex.Receive([]byte("pi"))
	ex.Receive([]byte("ng"))
	if err := <-got; err != os.ErrDeadlineExceeded.Error() {
		t.Errorf("Read past the deadline: %v", err)
	}
	<-rec.ended
	want := "head 101\nchunk \"hello\"\nchunk \"got ping\"\nend <nil>"
	if rec.String() != want {
		t.Errorf("got\n%s\nwant\n%s", rec, want)
	}
}

func TestExchange_HijackCancelled(t *testing.T) {
	read := make(chan error, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Errorf("Hijack: %v", err)
			return
		}
		defer c.Close()
		_, err = c.Read(make([]byte, 1))
		read <- err
	})
	rec := newRecorder()
	ex := bridge.New(newRequest(t, "GET", "/live"), rec)
	go ex.Serve(h)
	ex.Cancel()
	if err := <-read; err != io.EOF {
		t.Errorf("Read after the client cancelled: %v, want EOF", err)
	}
	<-rec.ended
	if want := "head 101\nend <nil>"; rec.String() != want {
		t.Errorf("got\n%s\nwant\n%s", rec, want)
	}
}
