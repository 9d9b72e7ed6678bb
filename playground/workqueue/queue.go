package workqueue

import (
	"sync"
	"time"
)

// Clock is the time a queue delays keys by: the real one outside tests.
type Clock interface {
	Now() time.Time
	// AfterFunc calls f in its own goroutine once d has passed; the
	// returned function stops it if it has not run yet.
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }
func (realClock) AfterFunc(d time.Duration, f func()) func() bool {
	return time.AfterFunc(d, f).Stop
}

// Queue is a rate-limited work queue of keys. Its zero value is not usable;
// New makes one.
type Queue[K comparable] struct {
	clock   Clock
	limiter *RateLimiter[K]

	mu         sync.Mutex
	cond       *sync.Cond
	order      []K            // keys ready for a worker, oldest first
	dirty      map[K]struct{} // keys waiting in order, or to be queued again when Done
	processing map[K]struct{} // keys a worker holds
	waiting    map[K]delayed  // keys that become ready later
	shutDown   bool
}

type delayed struct {
	at   time.Time
	stop func() bool
}

// New returns an empty queue that delays keys by clock (real time if nil)
// and backs off failing keys as limiter says (DefaultRateLimiter if nil).
func New[K comparable](clock Clock, limiter *RateLimiter[K]) *Queue[K] {
	if clock == nil {
		clock = realClock{}
	}
	if limiter == nil {
		limiter = DefaultRateLimiter[K](clock)
	}
	q := &Queue[K]{clock: clock, limiter: limiter, dirty: map[K]struct{}{}, processing: map[K]struct{}{}, waiting: map[K]delayed{}}
	q.cond = sync.NewCond(&q.mu)
	return q
}

// Add queues k unless it is already queued. A key a worker holds is queued
// again when the worker is Done with it, so a change that arrives during a
// reconcile is never lost and never reconciled concurrently.
func (q *Queue[K]) Add(k K) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.add(k)
}

// add requires q.mu.
func (q *Queue[K]) add(k K) {
	if q.shutDown {
		return
	}
	if w, ok := q.waiting[k]; ok {
		// Ready now: the delayed copy would only reconcile it again.
		w.stop()
		delete(q.waiting, k)
	}
	if _, ok := q.dirty[k]; ok {
		return
	}
	q.dirty[k] = struct{}{}
	if _, ok := q.processing[k]; ok {
		return
	}
	q.order = append(q.order, k)
	q.cond.Signal()
}

// AddAfter queues k once d has passed (at once if d <= 0). Of several
// delays asked for one key, the earliest wins.
func (q *Queue[K]) AddAfter(k K, d time.Duration) {
	if d <= 0 {
		q.Add(k)
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.shutDown {
		return
	}
	at := q.clock.Now().Add(d)
	if w, ok := q.waiting[k]; ok {
		if !w.at.After(at) {
			return
		}
		w.stop()
	}
	var stop func() bool
	stop = q.clock.AfterFunc(d, func() {
		q.mu.Lock()
		defer q.mu.Unlock()
		// Only the timer still on record may queue the key: a stopped one
		// can have fired already.
		if w, ok := q.waiting[k]; ok && w.at.Equal(at) {
			delete(q.waiting, k)
			q.add(k)
		}
	})
	q.waiting[k] = delayed{at: at, stop: stop}
}

// AddRateLimited queues k after the backoff its failures so far call for.
func (q *Queue[K]) AddRateLimited(k K) { q.AddAfter(k, q.limiter.When(k)) }

// Forget clears k's failures: its next AddRateLimited waits the least.
func (q *Queue[K]) Forget(k K) { q.limiter.Forget(k) }

// NumRequeues is how many times k failed since it was last forgotten.
func (q *Queue[K]) NumRequeues(k K) int { return q.limiter.NumRequeues(k) }

// Get blocks until a key is ready and hands it to the caller, who must call
// Done with it. ok is false once the queue is shut down.
func (q *Queue[K]) Get() (k K, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.order) == 0 && !q.shutDown {
		q.cond.Wait()
	}
	if q.shutDown {
		return k, false
	}
	k, q.order = q.order[0], q.order[1:]
	delete(q.dirty, k)
	q.processing[k] = struct{}{}
	return k, true
}

// Done releases a key Get handed out, queuing it again if it was added
// meanwhile.
func (q *Queue[K]) Done(k K) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.processing, k)
	if _, ok := q.dirty[k]; ok && !q.shutDown {
		q.order = append(q.order, k)
		q.cond.Signal()
	}
}

// Len is how many keys are ready for a worker.
func (q *Queue[K]) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.order)
}

// Waiting is how many keys wait for a delay to pass.
func (q *Queue[K]) Waiting() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.waiting)
}

// Idle reports whether no key is ready, held by a worker or waiting.
func (q *Queue[K]) Idle() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.order) == 0 && len(q.processing) == 0 && len(q.waiting) == 0
}

// ShutDown stops the queue's timers and wakes every Get, which then
// reports ok false.
func (q *Queue[K]) ShutDown() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.shutDown = true
	for k, w := range q.waiting {
		w.stop()
		delete(q.waiting, k)
	}
	q.cond.Broadcast()
}
