package server

import (
	"context"
	"net/http"
	"strconv"
	"sync"
)

// warningsKey keys a request's warning recorder in its context.
type warningsKey struct{}

// warningRecorder adds a request's warnings to its response headers as they
// are raised, each text once, as kube-apiserver's recorder does: a write
// retried on a conflict warns once, and nothing carries warnings by hand.
type warningRecorder struct {
	mu     sync.Mutex
	header http.Header
	seen   map[string]bool
}

// withWarnings gives r a warning recorder writing into w's headers.
func withWarnings(w http.ResponseWriter, r *http.Request) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), warningsKey{}, &warningRecorder{header: w.Header(), seen: map[string]bool{}}))
}

// warn adds the warnings msgs to the response of ctx's request; without a
// recorder (an internal write), they go nowhere.
func warn(ctx context.Context, msgs ...string) {
	rec, _ := ctx.Value(warningsKey{}).(*warningRecorder)
	if rec == nil {
		return
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, msg := range msgs {
		if !rec.seen[msg] {
			rec.seen[msg] = true
			rec.header.Add("Warning", "299 - "+strconv.Quote(msg))
		}
	}
}

// withoutWarnings is ctx for a write the server makes on its own while
// answering a request (a deleted CRD's objects): its warnings are not the
// request's.
func withoutWarnings(ctx context.Context) context.Context {
	return context.WithValue(ctx, warningsKey{}, (*warningRecorder)(nil))
}
