package workqueue

import (
	"sync"
	"time"
)

// RateLimiter decides how long a failed key waits before it is retried:
// the longer of a per-key exponential backoff and an overall token bucket,
// as client-go's default controller rate limiter (5 ms doubling to 1,000 s
// per key; 10 retries a second, in bursts of 100, over all keys).
type RateLimiter[K comparable] struct {
	clock          Clock
	base, maxDelay time.Duration
	qps            float64
	burst          float64

	mu       sync.Mutex
	failures map[K]int
	tokens   float64
	last     time.Time // when tokens was last brought up to date
}

// DefaultRateLimiter is the rate limiter kube-controller-manager's
// controllers use by default.
func DefaultRateLimiter[K comparable](clock Clock) *RateLimiter[K] {
	return NewRateLimiter[K](clock, 5*time.Millisecond, 1000*time.Second, 10, 100)
}

// NewRateLimiter backs off each key from base, doubling per failure up to
// maxDelay, and lets qps retries a second through overall, burst at once.
func NewRateLimiter[K comparable](clock Clock, base, maxDelay time.Duration, qps float64, burst int) *RateLimiter[K] {
	if clock == nil {
		clock = realClock{}
	}
	return &RateLimiter[K]{clock: clock, base: base, maxDelay: maxDelay, qps: qps, burst: float64(burst),
		failures: map[K]int{}, tokens: float64(burst), last: clock.Now()}
}

// When records one more failure of k and returns how long to wait before
// retrying it.
func (r *RateLimiter[K]) When(k K) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := r.failures[k]
	r.failures[k] = n + 1
	backoff := r.maxDelay
	if n < 62 { // beyond that the shift overflows; the cap applies anyway
		if d := r.base << n; d > 0 && d < r.maxDelay {
			backoff = d
		}
	}
	return max(backoff, r.reserve())
}

// reserve takes a token from the bucket, going into debt if it is empty,
// and returns how long until that token exists. Requires r.mu.
func (r *RateLimiter[K]) reserve() time.Duration {
	now := r.clock.Now()
	r.tokens = min(r.burst, r.tokens+now.Sub(r.last).Seconds()*r.qps)
	r.last = now
	r.tokens--
	if r.tokens >= 0 {
		return 0
	}
	return time.Duration(-r.tokens / r.qps * float64(time.Second))
}

// Forget clears k's failures.
func (r *RateLimiter[K]) Forget(k K) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.failures, k)
}

// NumRequeues is how many failures of k are on record.
func (r *RateLimiter[K]) NumRequeues(k K) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failures[k]
}
