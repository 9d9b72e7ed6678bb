package store

import (
	"strings"
	"sync"
)

// listCache keeps the current listings of key prefixes: what the API
// server's admission reads on every write (webhook configurations,
// admission policies, quotas, limit ranges), which seldom change, so that
// those reads cost no query, and, within Options.ListCacheBytes, whole
// collections listed again and again. A write clears the listings of the
// prefixes its key is under before the store's revision moves past it (see
// committed), so a listing found here is the prefix's current state.
type listCache struct {
	mu      sync.Mutex
	entries map[string]*listEntry
	bytes   int // of the listings held, at most budget
	// budget bounds the keys and values held, all listings together, and
	// a quarter of it one listing, so that one collection cannot take the
	// room of the others: a larger one is listed from the database each
	// time.
	budget int
}

// listEntry is one prefix's listing, tracked from the entry's making on.
type listEntry struct {
	items []KeyValue // nil: none held (too big, or cleared by a write)
	bytes int        // of items' keys and values
	rev   int64      // the revision items were read at
	// changed is the revision of the newest write under the prefix since
	// the entry was made: a listing read before it is out of date.
	changed int64
}

const (
	// maxCachedLists bounds the prefixes tracked; beyond it one is dropped.
	maxCachedLists = 64
	// DefaultListCacheBytes is Options.ListCacheBytes unless set: small, as
	// a process may hold many stores (sandboxes).
	DefaultListCacheBytes = 64 << 10
)

// get returns prefix's listing, copied, at the current revision (current
// is read under the cache's lock: no write under prefix is between the
// listing and it). When it has none, it returns the entry that tracks the
// writes under prefix from now on, for put.
func (c *listCache) get(prefix string, current func() int64) (items []KeyValue, rev int64, miss *listEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entries[prefix]
	if e == nil {
		if c.entries == nil {
			c.entries = make(map[string]*listEntry)
		}
		if len(c.entries) >= maxCachedLists {
			for p, old := range c.entries {
				c.bytes -= old.bytes
				delete(c.entries, p)
				break
			}
		}
		e = &listEntry{}
		c.entries[prefix] = e
	}
	if e.items == nil {
		return nil, 0, e
	}
	// Callers own what List returns: they get their own copy.
	return cloneValues(e.items, e.bytes), max(e.rev, current()), nil
}

// cloneValues copies items with their values in one allocation of size
// bytes (at least the values' total length), each value's capacity its length, so that an append to one
// cannot write into the next.
func cloneValues(items []KeyValue, size int) []KeyValue {
	out := make([]KeyValue, len(items))
	slab := make([]byte, 0, size)
	for i, kv := range items {
		n := len(slab)
		slab = append(slab, kv.Value...)
		kv.Value = slab[n:len(slab):len(slab)]
		out[i] = kv
	}
	return out
}

// put keeps items, prefix's listing read at rev after get returned e, unless
// a write under prefix came after rev, e was dropped since (the writes in
// between were not tracked), or it is too big.
func (c *listCache) put(prefix string, e *listEntry, items []KeyValue, rev int64) {
	size := 0
	for _, kv := range items {
		size += len(kv.Key) + len(kv.Value)
	}
	if size > c.budget/4 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries[prefix] != e || e.changed > rev || c.bytes-e.bytes+size > c.budget {
		return
	}
	kept := cloneValues(items, size)
	c.bytes += size - e.bytes
	e.items, e.bytes, e.rev = kept, size, rev
}

// written clears the listings of the prefixes key is under, written at rev.
func (c *listCache) written(key string, rev int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for p, e := range c.entries {
		if strings.HasPrefix(key, p) {
			c.bytes -= e.bytes
			e.items, e.bytes, e.changed = nil, 0, rev
		}
	}
}
