package playground

import (
	"sync/atomic"
	"time"
)

// Clock is a sandbox's time: real time plus an offset that Advance grows,
// so that a scenario can skip a grace period or a finalizer bot's delay
// instead of waiting for it. The API server's timestamps and the
// controllers' delays all read it.
type Clock struct {
	offset atomic.Int64
}

// Now returns the sandbox's current time.
func (c *Clock) Now() time.Time { return time.Now().Add(time.Duration(c.offset.Load())) }

// Offset returns how far the clock is ahead of real time.
func (c *Clock) Offset() time.Duration { return time.Duration(c.offset.Load()) }

// advance moves the clock forward by d (never back).
func (c *Clock) advance(d time.Duration) { c.offset.Add(int64(max(d, 0))) }
