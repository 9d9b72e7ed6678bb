package server

import (
	"context"
	"net/http"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"kubeplay/server/catalog"
	"kubeplay/server/encoding"
	"kubeplay/store"
)

// Whole lists sent again.
//
// A list of a whole collection at the latest revision, sent as stored with
// no selector, is the list's metadata around the collection's items, and
// the items' bytes depend only on which version of which key each one is
// (a stored value never changes under its key and revision). So the items
// of the last such list of each large collection are kept, encoded and,
// once asked for, compressed, with the keys and revisions they were made
// from: a list that reads the same keys at the same revisions from the
// store sends them again, without decoding, scanning or compressing
// anything. The store's read stays what makes the list consistent: what is
// kept is only a function of what it returned.

// storedLists keeps the items of the whole lists of large collections, by
// collection.
type storedLists struct {
	mu      sync.Mutex
	entries map[storedListKey]*storedListItems
	bytes   int // held by entries, at most maxStoredListBytes
}

type storedListKey struct {
	res    *catalog.Resource
	prefix string
}

// storedListItems are a list's items as sent, made from the listed keys at
// revs.
type storedListItems struct {
	keys []string
	revs []int64
	part *encoding.Part
}

const (
	// minStoredListBytes: the items of smaller lists are not kept, as
	// making them again costs little (and a process may hold many
	// servers: sandboxes).
	minStoredListBytes = 64 << 10
	// maxStoredListBytes bounds what one server keeps, all collections
	// together; beyond it, the others are dropped.
	maxStoredListBytes = 64 << 20
)

// madeFrom reports whether e was made from items.
func (e *storedListItems) madeFrom(items []store.KeyValue) bool {
	if len(items) != len(e.keys) {
		return false
	}
	for i, kv := range items {
		if kv.Key != e.keys[i] || kv.ModRevision != e.revs[i] {
			return false
		}
	}
	return true
}

func (c *storedLists) get(k storedListKey, items []store.KeyValue) *encoding.Part {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.entries[k]; e != nil && e.madeFrom(items) {
		return e.part
	}
	return nil
}

func (c *storedLists) put(k storedListKey, items []store.KeyValue, part *encoding.Part) {
	if part.Len() < minStoredListBytes || part.Len() > maxStoredListBytes/4 {
		return
	}
	e := &storedListItems{keys: make([]string, len(items)), revs: make([]int64, len(items)), part: part}
	for i, kv := range items {
		e.keys[i], e.revs[i] = kv.Key, kv.ModRevision
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.entries[k]; old != nil {
		c.bytes -= old.part.Size()
	}
	// The compressed form, made later, is counted as the items' size
	// again: it is smaller.
	if c.bytes+2*part.Size() > maxStoredListBytes || c.entries == nil {
		c.entries, c.bytes = map[storedListKey]*storedListItems{}, 0
	}
	c.entries[k] = e
	c.bytes += 2 * part.Size()
}

// writeWholeStoredList answers a list of all of res's objects in ns at the
// latest revision, with no selector, sent as stored.
func (s *Server) writeWholeStoredList(ctx context.Context, w http.ResponseWriter, r *http.Request, res *catalog.Resource, ns string) {
	prefix := collectionPrefix(res, ns)
	var kvs []store.KeyValue
	md, err := s.reg.readList(ctx, res, prefix, listOptions{}, func(page []store.KeyValue) (int, error) {
		kvs = page // with no limit, the store answers in one page
		return len(page), nil
	})
	if err != nil {
		writeError(w, r, err)
		return
	}
	head, tail, err := storedListHead(res, md)
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	k := storedListKey{res: res, prefix: prefix}
	part := s.storedLists.get(k, kvs)
	if part == nil {
		stored := make([]storedObject, len(kvs))
		size := max(len(stored)-1, 0) // the commas
		for i, kv := range kvs {
			if stored[i], err = readStored(res, kv); err != nil {
				writeError(w, r, apierrors.NewInternalError(err))
				return
			}
			size += len(kv.Value) + 20 // a resourceVersion, unless decoded
		}
		items := make([]byte, 0, size)
		for i := range stored {
			if i > 0 {
				items = append(items, ',')
			}
			if items, err = stored[i].appendJSON(items, false); err != nil {
				encoding.WriteError(w, r, err)
				return
			}
		}
		part = encoding.NewPart(items)
		s.storedLists.put(k, kvs, part)
	}
	encoding.WriteJSONAround(w, r, http.StatusOK, head, part, tail)
}

// storedListHead is the JSON of a list with metadata md, sent as stored,
// before and after its items.
func storedListHead(res *catalog.Resource, md listMeta) (head, tail []byte, err error) {
	body, err := encoding.MarshalObject((&objectList{listMeta: md}).encode(res)) // items: []
	if err != nil {
		return nil, nil, err
	}
	tail = []byte("]}")
	return body[:len(body)-len(tail)], tail, nil
}
