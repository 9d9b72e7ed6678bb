package playground

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"kubeplay/playground/journal"
	"kubeplay/server"
	"kubeplay/server/encoding"
)

// serve answers one request to the sandbox's API within its limits, as
// kube-apiserver answers a client over its limits: 429 with Retry-After
// for the request rate (and for watches over the cap), 413 for a body over
// the limit, 403 "exceeded quota" as ResourceQuota does for objects and
// bytes.
func (ms *Managed) serve(w http.ResponseWriter, r *http.Request) {
	ms.touch()
	defer ms.touch() // a long request is activity till its end
	sb := ms.Sandbox()
	if sb == nil {
		encoding.WriteError(w, r, apierrors.NewServiceUnavailable("the sandbox is being restored"))
		return
	}
	lim := ms.m.opts.Limits
	if !ms.limiter.allow() {
		tooManyRequests(w)
		return
	}
	if journal.IsWatch(r) {
		if lim.Watches >= 0 && ms.watches.Add(1) > lim.Watches {
			ms.watches.Add(-1)
			tooManyRequests(w)
			return
		}
		defer ms.watches.Add(-1)
	}
	switch r.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch:
		body, err := io.ReadAll(io.LimitReader(r.Body, lim.BodyBytes+1))
		if err != nil {
			encoding.WriteError(w, r, encoding.BadRequest("unable to read the request body: %v", err))
			return
		}
		if int64(len(body)) > lim.BodyBytes {
			encoding.WriteError(w, r, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("limit is %d", lim.BodyBytes)))
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if err := ms.checkQuota(r, sb, body); err != nil {
			encoding.WriteError(w, r, err)
			return
		}
	}
	sb.Handler().ServeHTTP(w, r)
}

// tooManyRequests is kube-apiserver's answer when a client exceeds the
// requests in flight or its priority level's share: plain text, not a
// Status, and a Retry-After that client-go honours by retrying.
func tooManyRequests(w http.ResponseWriter) {
	w.Header().Set("Retry-After", "1")
	http.Error(w, "Too many requests, please try again later.", http.StatusTooManyRequests)
}

// checkQuota refuses a write over the sandbox's bytes, and a create (a POST
// to a collection, or a Server-Side Apply of an object not there) over its
// objects.
func (ms *Managed) checkQuota(r *http.Request, sb *Sandbox, body []byte) error {
	lim := ms.m.opts.Limits
	gr, name, isCreate := writeTarget(r.URL.Path, body)
	mayCreate := isCreate && r.Method == http.MethodPost ||
		!isCreate && name != "" && r.Method == http.MethodPatch && strings.HasPrefix(r.Header.Get("Content-Type"), "application/apply-patch")
	db := ms.Store()
	if db == nil {
		return apierrors.NewServiceUnavailable("the sandbox is being restored")
	}
	if lim.Bytes >= 0 {
		size, err := db.Size(r.Context())
		if err != nil {
			return err
		}
		if size >= lim.Bytes {
			// History is kept within the limit: it goes before writes are
			// refused, as a store with less room would have compacted it.
			if _, err := ms.Compact(r.Context()); err != nil {
				return err
			}
			if size, err = db.Size(r.Context()); err != nil {
				return err
			}
		}
		if size >= lim.Bytes {
			return exceededQuota(gr, name, "bytes", 1, size, lim.Bytes)
		}
	}
	if mayCreate && lim.Objects >= 0 {
		n, err := CountObjects(r.Context(), db)
		if err != nil {
			return err
		}
		if n >= lim.Objects && !(r.Method == http.MethodPatch && exists(sb, r)) {
			return exceededQuota(gr, name, "count/objects", 1, n, lim.Objects)
		}
	}
	return nil
}

// exists reports whether the object an apply names is there (read
// straight from the API, so the journal does not show the check).
func exists(sb *Sandbox, r *http.Request) bool {
	get := httptest.NewRequestWithContext(r.Context(), http.MethodGet, r.URL.Path, nil)
	get.Header.Set("Authorization", r.Header.Get("Authorization")) // as the same user
	get.TLS = r.TLS
	rec := httptest.NewRecorder()
	sb.api.ServeHTTP(rec, get)
	return rec.Code == http.StatusOK
}

// exceededQuota is ResourceQuota's refusal, for the sandbox's own quota.
func exceededQuota(gr schema.GroupResource, name, what string, requested, used, limited int64) error {
	return apierrors.NewForbidden(gr, name, fmt.Errorf("exceeded quota: sandbox, requested: %s=%d, used: %s=%d, limited: %s=%d",
		what, requested, what, used, what, limited))
}

// writeTarget reads the resource and name a write to path is about, and
// whether it creates a stored object (a POST to a collection that is not
// a review, which is never stored).
func writeTarget(path string, body []byte) (gr schema.GroupResource, name string, isCreate bool) {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(segs) >= 2 && segs[0] == "api":
		segs = segs[2:]
	case len(segs) >= 3 && segs[0] == "apis":
		gr.Group = segs[1]
		segs = segs[3:]
	default:
		return gr, "", false
	}
	if len(segs) >= 3 && segs[0] == "namespaces" {
		segs = segs[2:]
	}
	if len(segs) == 0 {
		return gr, "", false
	}
	gr.Resource = segs[0]
	if len(segs) > 1 {
		return gr, segs[1], false
	}
	var meta struct {
		Metadata struct {
			Name         string `json:"name"`
			GenerateName string `json:"generateName"`
		} `json:"metadata"`
	}
	json.Unmarshal(body, &meta) // best effort: a name for the message
	name = meta.Metadata.Name
	if name == "" && meta.Metadata.GenerateName != "" {
		// kube-apiserver completes the name before its quota admission
		// runs, so its refusal names the object it would have made.
		name = server.GenerateName(meta.Metadata.GenerateName)
	}
	return gr, name, !strings.HasSuffix(gr.Resource, "reviews")
}

// limiter is a token bucket: rate tokens a second, bursts of twice as many.
type limiter struct {
	rate  float64
	now   func() time.Time
	mu    sync.Mutex
	level float64
	last  time.Time
}

func newLimiter(rate float64, now func() time.Time) *limiter {
	return &limiter{rate: rate, now: now, level: 2 * rate, last: now()}
}

// allow takes a token if there is one.
func (l *limiter) allow() bool {
	if l.rate < 0 {
		return true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	l.level = min(l.level+now.Sub(l.last).Seconds()*l.rate, 2*l.rate)
	l.last = now
	if l.level < 1 {
		return false
	}
	l.level--
	return true
}
