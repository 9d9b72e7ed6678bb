package server

import (
	"encoding/json"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"kubeplay/server/catalog"
	"kubeplay/server/encoding"
	"kubeplay/store"
)

// Objects sent as they are stored.
//
// An object is stored as encoding.MarshalObject writes it, without its
// resourceVersion (the store's revision). When the client wants JSON, the
// object itself (no Table, no metadata only) and the version it is stored
// in (nothing converted on read), the answer is the stored bytes with the
// resourceVersion spliced in (and, in a list, without kind and apiVersion):
// the bytes that decoding and encoding again would give, without doing it.
// A stored value not in that canonical form (written by something else, or
// corrupt) is decoded as before, so it reads, or fails, as it always has.

// readsAsStored reports whether r's objects are served in the form they
// are stored in: a built-in type stored in its own version, nothing
// converted on read.
func readsAsStored(r *catalog.Resource) bool {
	st := catalog.StorageOf(r)
	return !convertsOnRead(r) && st.Group == r.Group && st.Version == r.Version && st.Kind == r.Kind
}

// sendsStored reports whether c's representation is the stored one: JSON,
// the objects themselves, of a type served as stored.
func (c *converter) sendsStored() bool {
	return c.as.MediaType == encoding.JSON && c.as.As == "" && readsAsStored(c.res)
}

// sendsStored reports whether the answer to a get, a list or a create is
// sent as stored: not pretty JSON, and not a representation that cannot be
// negotiated, whose error is reported where it always was.
func (s *Server) sendsStored(r *http.Request, req *request) bool {
	c, err := s.newConverter(r, req)
	return err == nil && !s.decodeReads && c.sendsStored() && !encoding.Pretty(r)
}

// storedObject is an object read from the store, not decoded when its
// bytes are canonical (obj nil), else decoded.
type storedObject struct {
	kv     store.KeyValue
	layout encoding.Layout
	obj    object
}

// readStored reads a stored value of r's: its layout when it is canonical
// and of r's kind and version, else decoded (an error when it cannot be).
func readStored(r *catalog.Resource, kv store.KeyValue) (storedObject, error) {
	if o, ok := canonicalStored(r, kv); ok {
		return o, nil
	}
	o := storedObject{kv: kv}
	obj, err := decodeStored(r, kv)
	if err != nil {
		return o, err
	}
	o.obj = obj
	return o, nil
}

// canonicalStored returns a stored value of r's with its layout, if it is
// canonical and of r's kind and version.
func canonicalStored(r *catalog.Resource, kv store.KeyValue) (storedObject, bool) {
	if l, ok := encoding.Canonical(kv.Value); ok && quotedIs(l.Kind(kv.Value), r.Kind) && quotedIs(l.APIVersion(kv.Value), r.APIVersion()) {
		return storedObject{kv: kv, layout: l}, true
	}
	return storedObject{}, false
}

// quotedIs reports whether the JSON string q is s (which needs no escaping).
func quotedIs(q []byte, s string) bool {
	return len(q) == len(s)+2 && string(q[1:len(q)-1]) == s
}

// appendJSON appends the object as served, with kind and apiVersion or, as
// list items of built-in types, without.
func (o *storedObject) appendJSON(dst []byte, withTypeMeta bool) ([]byte, error) {
	if o.obj == nil {
		return o.layout.Append(dst, o.kv.Value, o.kv.ModRevision, withTypeMeta), nil
	}
	obj := o.obj
	if !withTypeMeta {
		obj = make(object, len(o.obj))
		for k, v := range o.obj {
			if k != "kind" && k != "apiVersion" {
				obj[k] = v
			}
		}
	}
	b, err := encoding.MarshalObject(obj)
	if err != nil {
		return dst, err
	}
	return append(dst, b...), nil
}

// matchesStored is matches for a stored object: a label selector alone
// decodes only the labels.
func (s selectors) matchesStored(r *catalog.Resource, o *storedObject) (bool, error) {
	switch {
	case s.empty():
		return true, nil
	case o.obj != nil:
		return s.matches(r, o.obj), nil
	case s.field.Empty():
		var l any
		if b := o.layout.Labels(o.kv.Value); b != nil {
			if err := json.Unmarshal(b, &l); err != nil {
				return false, err
			}
		}
		return s.label.Matches(labelSet(l)), nil
	}
	obj, err := decodeStored(r, o.kv)
	if err != nil {
		return false, err
	}
	return s.matches(r, obj), nil
}

// writeStoredObject answers with one stored object.
func writeStoredObject(w http.ResponseWriter, r *http.Request, code int, o *storedObject) {
	body, err := o.appendJSON(nil, true)
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	encoding.WriteJSON(w, r, code, len(body), func(yield func([]byte) bool) { yield(body) })
}

// writeStoredList answers with a list read with its objects as stored,
// streaming them from their stored bytes.
func writeStoredList(w http.ResponseWriter, r *http.Request, res *catalog.Resource, list *objectList) {
	head, tail, err := storedListHead(res, list.listMeta)
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	// Decoded objects are encoded first: an error is still an answer.
	size := len(head) + len(tail) + max(len(list.stored)-1, 0)
	encoded := map[int][]byte{}
	for i := range list.stored {
		o := &list.stored[i]
		if o.obj == nil {
			size += o.layout.Len(o.kv.Value, o.kv.ModRevision, false)
			continue
		}
		b, err := o.appendJSON(nil, false)
		if err != nil {
			encoding.WriteError(w, r, err)
			return
		}
		encoded[i] = b
		size += len(b)
	}
	encoding.WriteJSON(w, r, http.StatusOK, size, func(yield func([]byte) bool) {
		if !yield(head) {
			return
		}
		var buf []byte
		for i := range list.stored {
			o := &list.stored[i]
			buf = buf[:0]
			if i > 0 {
				buf = append(buf, ',')
			}
			if b, ok := encoded[i]; ok {
				buf = append(buf, b...)
			} else {
				buf, _ = o.appendJSON(buf, false)
			}
			if !yield(buf) {
				return
			}
		}
		yield(tail)
	})
}

// event is the watch event of type typ whose object is o: encoded already
// when o is sent as stored.
func (o *storedObject) event(typ string) watchEvent {
	if o.obj != nil {
		return watchEvent{Type: typ, Object: o.obj}
	}
	b := make([]byte, 0, len(o.kv.Value)+64)
	b = append(b, `{"type":"`...)
	b = append(b, typ...)
	b = append(b, `","object":`...)
	b = o.layout.Append(b, o.kv.Value, o.kv.ModRevision, true)
	// Shared by watchers: a full slice, that no append writes into.
	return watchEvent{Type: typ, encoded: slices.Clip(append(b, '}'))}
}

// sharedWatchEvent is translateEvent for a watch of the objects themselves
// (JSON or CBOR, no Table): every watcher of the collection in the same
// format shares one encoding of each event; without selectors nothing is
// decoded to choose the event's type, and when the objects are sent as
// stored, nothing at all.
func (s *Server) sharedWatchEvent(conv *converter, sel selectors, ev store.Event, asStored bool) (watchEvent, bool) {
	res := conv.res
	read := func(kv store.KeyValue) (storedObject, error) {
		if asStored {
			return readStored(res, kv)
		}
		obj, err := decodeStored(res, kv)
		return storedObject{kv: kv, obj: obj}, err
	}
	now, before := true, ev.Prev != nil
	var cur, prev *storedObject
	var prevKV store.KeyValue
	if !sel.empty() {
		c, err := read(ev.KV)
		if err == nil {
			now, err = sel.matchesStored(res, &c)
		}
		if err != nil {
			return errorEvent(err), true
		}
		cur, before = &c, false
		if ev.Prev != nil {
			// Sent when the object leaves the selection, at the update's
			// resourceVersion.
			prevKV = *ev.Prev
			prevKV.ModRevision = ev.KV.ModRevision
			if p, err := read(prevKV); err == nil {
				if m, err := sel.matchesStored(res, &p); err == nil {
					before, prev = m, &p
				}
			}
		}
	}
	typ, obj, kv := "MODIFIED", cur, ev.KV
	switch {
	case ev.Type == store.Deleted:
		typ = "DELETED"
	case ev.Type == store.Created || !before:
		typ = "ADDED"
	case !now:
		typ, obj, kv, now = "DELETED", prev, prevKV, true
	}
	if !now {
		return watchEvent{}, false
	}
	b, err := s.events.get(res, conv.as.MediaType, typ, kv, func() ([]byte, error) {
		if obj == nil {
			o, err := read(kv)
			if err != nil {
				return nil, err
			}
			obj = &o
		}
		e := obj.event(typ)
		if e.encoded != nil {
			return e.encoded, nil
		}
		b, err := conv.encodeEvent(e)
		return slices.Clip(b), err
	})
	if err != nil {
		return errorEvent(err), true
	}
	return watchEvent{Type: typ, encoded: b}, true
}

func errorEvent(err error) watchEvent {
	return watchEvent{Type: "ERROR", Object: statusObject(apierrors.NewInternalError(err))}
}

// eventCache keeps the last watch events encoded, so that the watchers of
// one collection share one encoding of each event. The store never changes
// the value of a key at a revision, so (resource, media type, event type,
// key, revision) names an event's bytes for good.
type eventCache struct {
	// last is the event put last, read without the lock: the one the
	// watchers of a collection all ask for at once after a write.
	last    atomic.Pointer[cachedEvent]
	mu      sync.Mutex
	entries [64]cachedEvent
	next    int
}

type cachedEvent struct {
	res  *catalog.Resource
	mt   string
	typ  string
	key  string
	rev  int64
	body []byte
}

// get returns the event's encoding, computing it (outside the lock) when
// it is not cached.
func (c *eventCache) get(res *catalog.Resource, mt, typ string, kv store.KeyValue, encode func() ([]byte, error)) ([]byte, error) {
	if e := c.last.Load(); e != nil && e.is(res, mt, typ, kv) {
		return e.body, nil
	}
	c.mu.Lock()
	for i := range c.entries {
		if e := &c.entries[i]; e.is(res, mt, typ, kv) {
			b := e.body
			c.mu.Unlock()
			return b, nil
		}
	}
	c.mu.Unlock()
	b, err := encode()
	if err != nil {
		return nil, err
	}
	e := &cachedEvent{res: res, mt: mt, typ: typ, key: kv.Key, rev: kv.ModRevision, body: b}
	c.mu.Lock()
	c.entries[c.next] = *e
	c.next = (c.next + 1) % len(c.entries)
	c.mu.Unlock()
	c.last.Store(e)
	return b, nil
}

func (e *cachedEvent) is(res *catalog.Resource, mt, typ string, kv store.KeyValue) bool {
	return e.rev == kv.ModRevision && e.res == res && e.mt == mt && e.typ == typ && e.key == kv.Key
}
