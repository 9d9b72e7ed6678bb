package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"
)

// replayBatch is how many history rows a replaying watcher reads per
// transaction: small enough not to hold a snapshot (or, in memory, the only
// connection) for long, large enough to amortise the query.
const replayBatch = 256

// Watch implements Store. See the package doc for the delivery and
// slow-consumer policy.
func (db *DB) Watch(ctx context.Context, prefix string, afterRev int64) (Watcher, error) {
	if err := db.check(ctx); err != nil {
		return nil, err
	}
	w := &watcher{
		db:     db,
		prefix: prefix,
		inbox:  make(chan Event, db.opts.WatchBuffer),
		done:   make(chan struct{}),
	}
	// Register under the write lock: every write after cur reaches the inbox,
	// every write up to cur is in the database for the replay.
	db.mu.Lock()
	if db.closed.Load() {
		db.mu.Unlock()
		return nil, ErrClosed
	}
	cur, horizon := db.rev.Load(), db.horizon.Load()
	switch {
	case afterRev > cur:
		db.mu.Unlock()
		return nil, fmt.Errorf("%w: %d > %d", ErrFutureRevision, afterRev, cur)
	case afterRev < horizon:
		db.mu.Unlock()
		return nil, fmt.Errorf("%w: %d < %d", ErrCompacted, afterRev, horizon)
	}
	// A watch from now has no history to replay: its consumer reads the
	// inbox itself, one goroutine hand-off less between a write and each of
	// its watchers.
	w.direct = afterRev == cur
	if w.direct {
		w.out = w.inbox
	} else {
		w.out = make(chan Event)
	}
	db.watchMu.Lock()
	db.watchers[w] = struct{}{}
	if w.direct {
		// Set under watchMu, where remove reads it; a context ended
		// already runs Stop in a goroutine of its own, after this.
		w.stopOnCancel = context.AfterFunc(ctx, w.Stop)
	}
	db.watchMu.Unlock()
	db.mu.Unlock()
	if w.direct {
		return w, nil
	}
	stop := context.AfterFunc(ctx, func() { w.end(nil) })
	go func() {
		defer stop()
		w.run(afterRev, cur)
	}()
	return w, nil
}

// watcher is one Watch. Writers put live events in its inbox without ever
// blocking; unless direct, its goroutine replays history, then forwards the
// inbox to out.
type watcher struct {
	db     *DB
	prefix string
	inbox  chan Event // live events, bounded: full means too slow
	out    chan Event // Events(); closed when the watch ends
	done   chan struct{}
	// direct: no history to replay, out is the inbox, closed when the
	// watcher is removed from db.watchers (under watchMu, so no write is
	// delivered after), and stopOnCancel undoes the context's hook.
	direct       bool
	stopOnCancel func() bool

	once sync.Once
	mu   sync.Mutex
	err  error
}

func (w *watcher) Events() <-chan Event { return w.out }

func (w *watcher) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

func (w *watcher) Stop() {
	if !w.direct {
		w.end(nil)
		return
	}
	w.db.watchMu.Lock()
	defer w.db.watchMu.Unlock()
	w.remove(nil)
}

// remove ends the watch with err and takes it out of db.watchers, once; the
// caller holds watchMu. A direct watcher's channel is closed here, after
// every event delivered to it; another's goroutine closes its own.
func (w *watcher) remove(err error) {
	if _, ok := w.db.watchers[w]; !ok {
		return
	}
	delete(w.db.watchers, w)
	w.end(err)
	if w.direct {
		close(w.inbox)
		w.stopOnCancel()
	}
}

// end ends the watch with err; the first call wins.
func (w *watcher) end(err error) {
	w.once.Do(func() {
		w.mu.Lock()
		w.err = err
		w.mu.Unlock()
		close(w.done)
	})
}

// run delivers history in (after, upTo], then live events, then closes out.
func (w *watcher) run(after, upTo int64) {
	defer close(w.out)
	defer w.db.unwatch(w)
	pos := after
	for pos < upTo {
		select {
		case <-w.done:
			return
		default:
		}
		evs, next, err := w.db.history(w.prefix, pos, upTo)
		if err != nil {
			w.end(err)
			return
		}
		for _, ev := range evs {
			if !w.send(ev) {
				return
			}
		}
		pos = next
	}
	for {
		select {
		case ev := <-w.inbox:
			if ev.Type == Progress {
				if !w.send(ev) {
					return
				}
				continue
			}
			if ev.KV.ModRevision <= pos {
				continue // replayed already; cannot happen, as registration splits at upTo
			}
			if !w.send(ev) {
				return
			}
			pos = ev.KV.ModRevision
		case <-w.done:
			return
		}
	}
}

// RequestProgress implements Watcher. The marker enters the inbox under the
// write lock, behind every event up to the revision it carries.
func (w *watcher) RequestProgress() {
	w.db.mu.Lock()
	defer w.db.mu.Unlock()
	w.db.watchMu.Lock()
	defer w.db.watchMu.Unlock()
	if _, ok := w.db.watchers[w]; !ok {
		return // ended
	}
	w.deliver(Event{Type: Progress, KV: KeyValue{ModRevision: w.db.rev.Load()}})
}

func (w *watcher) send(ev Event) bool {
	select {
	case w.out <- ev:
		return true
	case <-w.done:
		return false
	}
}

// publish hands a committed write's event to the watchers of its key. It runs
// under the write lock, so events arrive in revision order, and never blocks:
// a watcher whose inbox is full is ended with ErrWatcherTooSlow.
func (db *DB) publish(ev Event) {
	db.watchMu.Lock()
	defer db.watchMu.Unlock()
	for w := range db.watchers {
		if strings.HasPrefix(ev.KV.Key, w.prefix) {
			w.deliver(ev)
		}
	}
}

// deliver puts ev in the inbox without blocking, ending a watcher whose inbox
// is full. The caller holds watchMu.
func (w *watcher) deliver(ev Event) {
	select {
	case w.inbox <- ev:
	default:
		w.remove(ErrWatcherTooSlow)
	}
}

func (db *DB) unwatch(w *watcher) {
	db.watchMu.Lock()
	delete(db.watchers, w)
	db.watchMu.Unlock()
}

func (db *DB) endWatchers(err error) {
	db.watchMu.Lock()
	defer db.watchMu.Unlock()
	for w := range db.watchers {
		w.remove(err)
	}
}

// historySQL reads changes in a revision range with each one's predecessor.
// NOT INDEXED keeps SQLite on the rowid (revision) range, already in order,
// rather than the key index. %s is the key range condition.
const historySQL = `SELECT k.rev, k.key, k.value, k.create_rev, k.deleted, p.rev, p.value, p.create_rev
	FROM kv AS k NOT INDEXED
	LEFT JOIN kv AS p ON p.rev = k.prev_rev
	WHERE k.rev > ? AND k.rev <= ? AND %s
	ORDER BY k.rev LIMIT ?`

// history returns up to replayBatch events for keys starting with prefix in
// (after, upTo], and the revision the next batch starts after. ErrCompacted
// if compaction has overtaken after since the watch began.
func (db *DB) history(prefix string, after, upTo int64) ([]Event, int64, error) {
	var (
		evs  []Event
		next = upTo
	)
	err := db.read(context.Background(), func(tx *sql.Tx, _, horizon int64) error {
		if after < horizon {
			return fmt.Errorf("%w: %d < %d", ErrCompacted, after, horizon)
		}
		r := prefixRange(prefix)
		rows, err := tx.Query(fmt.Sprintf(historySQL, r.sql("k.key")),
			append([]any{after, upTo}, append(r.args(), replayBatch)...)...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var (
				key                 []byte
				kv                  KeyValue
				deleted             bool
				prevRev, prevCreate sql.NullInt64
				prevValue           []byte
			)
			if err := rows.Scan(&kv.ModRevision, &key, &kv.Value, &kv.CreateRevision, &deleted,
				&prevRev, &prevValue, &prevCreate); err != nil {
				return err
			}
			kv.Key = string(key)
			ev := Event{Type: Updated, KV: kv}
			if prevRev.Valid {
				ev.Prev = &KeyValue{Key: kv.Key, Value: prevValue, CreateRevision: prevCreate.Int64, ModRevision: prevRev.Int64}
			}
			switch {
			case deleted:
				ev.Type = Deleted
				if ev.Prev != nil {
					ev.KV.Value = ev.Prev.Value
				}
			case kv.CreateRevision == kv.ModRevision:
				ev.Type, ev.Prev = Created, nil
			}
			evs = append(evs, ev)
		}
		if len(evs) == replayBatch {
			next = evs[len(evs)-1].KV.ModRevision
		}
		return rows.Err()
	})
	return evs, next, err
}
