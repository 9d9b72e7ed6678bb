package server

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"kubeplay/server/catalog"
	"kubeplay/server/encoding"
	"kubeplay/store"
)

// minRequestTimeout is kube-apiserver's default --min-request-timeout: a watch
// without timeoutSeconds lasts a random time between it and twice it.
const minRequestTimeout = 30 * time.Minute

// bookmarkInterval is how often a watch that allows bookmarks gets one;
// bookmarkBeforeDeadline how long before its end it gets a last one.
const (
	bookmarkInterval       = time.Minute
	bookmarkBeforeDeadline = 2 * time.Second
)

// watchEvent is one event of a watch stream: its object, or the whole
// event already encoded.
type watchEvent struct {
	Type    string
	Object  any
	encoded []byte
}

func (s *Server) watch(w http.ResponseWriter, r *http.Request, req *request) {
	res := req.res
	sel, err := parseQuery(r, res, true, s.enabled(WatchList))
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	conv, err := s.newConverter(r, req)
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	stream := newEventStream(w, r, conv)
	defer stream.finish()
	if req.name != "" {
		sel.field = fields.AndSelectors(sel.field, fields.OneTermEqualSelector("metadata.name", req.name))
	}
	q := r.URL.Query()
	timeout := minRequestTimeout + time.Duration(rand.Int64N(int64(minRequestTimeout)))
	if v := q.Get("timeoutSeconds"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			encoding.WriteError(w, r, encoding.BadRequest("%v", err))
			return
		}
		if n != 0 { // 0 is the default, as in kube-apiserver; a negative timeout ends the watch at once
			timeout = time.Duration(n) * time.Second
		}
	}
	bookmarks := QueryBool(q, "allowWatchBookmarks")
	fromRev, err := parseResourceVersion(q.Get("resourceVersion"))
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	// Initial events (the current state as ADDED, then, with bookmarks, the
	// initial-events-end bookmark) come with sendInitialEvents=true, or by
	// default when no resourceVersion (or "0") is given.
	initialEvents := QueryBool(q, "sendInitialEvents") || (!q.Has("sendInitialEvents") && fromRev == 0)
	ctx, cancel := context.WithTimeout(stream.context(r.Context()), timeout)
	defer cancel()

	asStored := conv.sendsStored() && !s.decodeReads
	var initial *objectList
	if initialEvents {
		if err := s.reg.awaitRevision(r.Context(), fromRev); err != nil {
			// The real server has accepted the watch by then: the 504 comes as an event.
			stream.send(watchEvent{Type: "ERROR", Object: statusObject(err)})
			return
		}
		list, err := s.reg.listObjects(r.Context(), res, req.namespace, sel, listOptions{}, asStored)
		if err != nil {
			writeError(w, r, err)
			return
		}
		initial, fromRev = list, list.rev
	}

	// A watch from a revision the store has not reached is accepted, as by
	// kube-apiserver: it delivers the changes after that revision when they
	// come. Without initial events, "0" and unset start from now.
	after := fromRev
	if cur := s.reg.currentRevision(r.Context()); after > cur || !initialEvents && fromRev == 0 {
		after = cur
	}
	watcher, err := s.reg.watch(r.Context(), res, req.namespace, after)
	switch {
	case errors.Is(err, store.ErrCompacted):
		// kube-apiserver accepts the watch, then reports 410 Gone as an event.
		stream.send(watchEvent{Type: "ERROR", Object: statusObject(apierrors.NewResourceExpired("The resourceVersion for the provided watch is too old."))})
		return
	case err != nil:
		encoding.WriteError(w, r, storeError(res, req.name, err))
		return
	}
	defer watcher.Stop()

	stream.start()
	if initial != nil {
		for _, obj := range initial.items {
			if !stream.send(watchEvent{Type: "ADDED", Object: obj}) {
				return
			}
		}
		for i := range initial.stored {
			if !stream.send(initial.stored[i].event("ADDED")) {
				return
			}
		}
	}
	lastRev := after
	if bookmarks && initialEvents {
		if !stream.send(bookmark(res, lastRev, true)) {
			return
		}
	}
	// Timers only for a watch that takes bookmarks: each channel in the
	// select below is locked for every event, and a collection's watchers
	// all take each of its events at once.
	var tick, lastCall <-chan time.Time
	if bookmarks {
		ticker := time.NewTicker(bookmarkInterval)
		defer ticker.Stop()
		tick = ticker.C
		// kube-apiserver also sends a bookmark 2 s before the watch's
		// deadline, so that the client resumes from a recent revision.
		if timeout > bookmarkBeforeDeadline {
			t := time.NewTimer(timeout - bookmarkBeforeDeadline)
			defer t.Stop()
			lastCall = t.C
		}
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick:
			watcher.RequestProgress()
		case <-lastCall:
			watcher.RequestProgress()
		case ev, ok := <-watcher.Events():
			if !ok {
				return // ended (slow consumer, store closed): the client resumes from lastRev
			}
			if ev.Type == store.Progress {
				// Like kube-apiserver's watch cache, a bookmark carries the
				// store's current revision, not the last change delivered.
				lastRev = max(lastRev, ev.KV.ModRevision)
				if !stream.send(bookmark(res, lastRev, false)) {
					return
				}
				continue
			}
			if ev.KV.ModRevision <= fromRev {
				continue // before the future revision the watch started from
			}
			lastRev = ev.KV.ModRevision
			if conv.as.As == "" && !s.decodeReads {
				out, ok := s.sharedWatchEvent(conv, sel, ev, asStored)
				if ok && !stream.send(out) {
					return
				}
				continue
			}
			out, ok := s.translateEvent(res, sel, ev)
			if ok && !stream.send(out) {
				return
			}
		}
	}
}

// translateEvent turns a store event into the watch event a client with
// selectors sees: an object entering the selection is ADDED, one leaving it
// is DELETED, carrying (as kube-apiserver's) the object as it was before the
// update, at the update's resourceVersion.
func (s *Server) translateEvent(res *catalog.Resource, sel selectors, ev store.Event) (watchEvent, bool) {
	obj, err := decodeStored(res, ev.KV)
	if err != nil {
		return watchEvent{Type: "ERROR", Object: statusObject(apierrors.NewInternalError(err))}, true
	}
	now := sel.matches(res, obj)
	var prev object
	before := ev.Prev != nil && sel.empty() // without selectors the previous version need not be decoded
	if ev.Prev != nil && !sel.empty() {
		if prev, err = decodeStored(res, *ev.Prev); err == nil {
			before = sel.matches(res, prev)
		}
	}
	switch {
	case ev.Type == store.Deleted:
		return watchEvent{Type: "DELETED", Object: obj}, now
	case ev.Type == store.Created || !before:
		return watchEvent{Type: "ADDED", Object: obj}, now
	case !now:
		metadata(prev)["resourceVersion"] = metadata(obj)["resourceVersion"]
		return watchEvent{Type: "DELETED", Object: prev}, true
	default:
		return watchEvent{Type: "MODIFIED", Object: obj}, true
	}
}

func bookmark(res *catalog.Resource, rev int64, initialEventsEnd bool) watchEvent {
	md := map[string]any{"resourceVersion": strconv.FormatInt(rev, 10)}
	if initialEventsEnd {
		md["annotations"] = map[string]any{"k8s.io/initial-events-end": "true"}
	}
	return watchEvent{Type: "BOOKMARK", Object: object{"kind": res.Kind, "apiVersion": res.APIVersion(), "metadata": md}}
}

func statusObject(err error) *metav1.Status {
	st := encoding.StatusOf(err)
	return &st
}
