package store

import (
	"strings"
	"sync"
)

// prefixWrites keeps, for each key prefix a reader asked about (see
// DB.LastWriteUnder), the revision of the newest write under it since.
// Readers that keep what they decoded (the authorizer's roles and
// bindings) ask it whether anything under their prefix changed, rather
// than dropping it at every write anywhere.
type prefixWrites struct {
	mu   sync.RWMutex
	revs map[string]int64
}

// written records a write to key at rev; callers hold DB.mu.
func (p *prefixWrites) written(key string, rev int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for prefix := range p.revs {
		if strings.HasPrefix(key, prefix) {
			p.revs[prefix] = rev
		}
	}
}

// LastWriteUnder implements Store. A prefix is tracked from its first
// question on, when the answer is the current revision: the writes before
// are not known.
func (db *DB) LastWriteUnder(prefix string) int64 {
	p := &db.prefixWrites
	p.mu.RLock()
	rev, ok := p.revs[prefix]
	p.mu.RUnlock()
	if ok {
		return rev
	}
	// No write commits while the prefix starts to be tracked.
	db.mu.Lock()
	defer db.mu.Unlock()
	p.mu.Lock()
	defer p.mu.Unlock()
	if rev, ok := p.revs[prefix]; ok {
		return rev
	}
	if p.revs == nil {
		p.revs = map[string]int64{}
	}
	rev = db.rev.Load()
	p.revs[prefix] = rev
	return rev
}
