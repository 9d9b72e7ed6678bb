package workqueue

import (
	"slices"
	"sync"
	"testing"
	"time"
)

// fakeClock runs timers only when the test advances it.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
}

type fakeTimer struct {
	at      time.Time
	f       func()
	stopped bool
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Unix(1_000_000, 0)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) AfterFunc(d time.Duration, f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{at: c.now.Add(d), f: f}
	c.timers = append(c.timers, t)
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		was := !t.stopped
		t.stopped = true
		return was
	}
}

// advance moves the clock and runs, in the caller's goroutine, the timers
// that came due.
func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	var due []*fakeTimer
	c.timers = slices.DeleteFunc(c.timers, func(t *fakeTimer) bool {
		if t.stopped || !t.at.After(c.now) {
			if !t.stopped {
				due = append(due, t)
			}
			return true
		}
		return false
	})
	c.mu.Unlock()
	for _, t := range due {
		t.f()
	}
}

func (c *fakeClock) pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, t := range c.timers {
		if !t.stopped {
			n++
		}
	}
	return n
}

func get(t *testing.T, q *Queue[string]) string {
	t.Helper()
	if q.Len() == 0 {
		t.Fatal("no key is ready")
	}
	k, ok := q.Get()
	if !ok {
		t.Fatal("queue shut down")
	}
	return k
}

func TestQueue_Add(t *testing.T) {
	t.Run("a key is queued once however often it is added", func(t *testing.T) {
		q := New[string](newFakeClock(), nil)
		q.Add("a")
		q.Add("b")
		q.Add("a")
		if got := []string{get(t, q), get(t, q)}; !slices.Equal(got, []string{"a", "b"}) || q.Len() != 0 {
			t.Fatalf("got %v, %d left", got, q.Len())
		}
	})
	t.Run("a key added while held comes back once it is done", func(t *testing.T) {
		q := New[string](newFakeClock(), nil)
		q.Add("a")
		k := get(t, q)
		q.Add("a")
		q.Add("a")
		if q.Len() != 0 {
			t.Fatal("a held key was handed out twice")
		}
		q.Done(k)
		if got := get(t, q); got != "a" || q.Len() != 0 {
			t.Fatalf("got %q, %d left", got, q.Len())
		}
	})
	t.Run("a key not added again while held is gone once done", func(t *testing.T) {
		q := New[string](newFakeClock(), nil)
		q.Add("a")
		q.Done(get(t, q))
		if q.Len() != 0 {
			t.Fatal("the key came back unasked")
		}
	})
}

func TestQueue_AddAfter(t *testing.T) {
	clock := newFakeClock()
	q := New[string](clock, nil)
	q.AddAfter("a", 10*time.Second)
	q.AddAfter("a", 5*time.Second) // the earliest wins
	q.AddAfter("a", 20*time.Second)
	clock.advance(4 * time.Second)
	if q.Len() != 0 {
		t.Fatal("ready before its delay")
	}
	clock.advance(time.Second)
	if got := get(t, q); got != "a" || q.Len() != 0 || q.Waiting() != 0 {
		t.Fatalf("got %q, %d ready, %d waiting", got, q.Len(), q.Waiting())
	}
	clock.advance(time.Minute) // the stopped timers queue nothing
	if q.Len() != 0 {
		t.Fatal("a superseded delay queued the key again")
	}

	q.AddAfter("b", time.Hour)
	q.Add("b")
	if get(t, q) != "b" || q.Waiting() != 0 || clock.pending() != 0 {
		t.Fatalf("an Add left the delayed copy of the key waiting (%d timers)", clock.pending())
	}
}

func TestQueue_AddRateLimited(t *testing.T) {
	clock := newFakeClock()
	q := New[string](clock, nil)
	// Each failure doubles the wait: 5 ms, 10 ms, 20 ms, ...
	want := 5 * time.Millisecond
	for i := range 12 {
		q.AddRateLimited("a")
		clock.advance(want - time.Millisecond)
		if q.Len() != 0 {
			t.Fatalf("failure %d: retried before %v", i+1, want)
		}
		clock.advance(time.Millisecond)
		q.Done(get(t, q))
		want *= 2
	}
	if q.NumRequeues("a") != 12 {
		t.Fatalf("NumRequeues %d", q.NumRequeues("a"))
	}
	// Another key is not slowed by a's failures.
	q.AddRateLimited("b")
	clock.advance(5 * time.Millisecond)
	if get(t, q) != "b" {
		t.Fatal("b waited for a's backoff")
	}
	q.Forget("a")
	q.AddRateLimited("a")
	clock.advance(5 * time.Millisecond)
	if get(t, q) != "a" {
		t.Fatal("a forgotten still backs off")
	}
}

func TestRateLimiter_When(t *testing.T) {
	clock := newFakeClock()
	r := NewRateLimiter[int](clock, time.Millisecond, time.Second, 10, 2)
	// Keys 0, 1, 2 each fail once: the bucket's burst of 2 lets two through
	// after the key's own 1 ms, the third waits for a token (100 ms at 10/s).
	for i, want := range []time.Duration{time.Millisecond, time.Millisecond, 100 * time.Millisecond} {
		if got := r.When(i); got != want {
			t.Errorf("key %d: %v, want %v", i, got, want)
		}
	}
	for range 20 {
		clock.advance(time.Hour) // the bucket refills
		r.When(7)
	}
	if got := r.When(7); got != time.Second {
		t.Errorf("capped backoff %v, want 1s", got)
	}
}

func TestQueue_ShutDown(t *testing.T) {
	clock := newFakeClock()
	q := New[string](clock, nil)
	q.AddAfter("later", time.Hour)
	done := make(chan bool)
	go func() {
		_, ok := q.Get()
		done <- ok
	}()
	q.ShutDown()
	if <-done {
		t.Fatal("Get handed out a key after ShutDown")
	}
	if clock.pending() != 0 {
		t.Fatal("a timer outlived the queue")
	}
	q.Add("a")
	if q.Len() != 0 {
		t.Fatal("Add after ShutDown queued a key")
	}
}
