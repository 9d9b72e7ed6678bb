package playground

import (
	"testing"
	"time"
)

// A pod that keeps failing is replaced at once the first time, then after
// 1 s doubling up to 5 minutes.
func TestReplacements_wait(t *testing.T) {
	for count, want := range map[int]time.Duration{0: 0, 1: 0, 2: time.Second, 3: 2 * time.Second, 4: 4 * time.Second, 10: 256 * time.Second, 11: 5 * time.Minute, 40: 5 * time.Minute} {
		if got := (replacements{count: count}).wait(); got != want {
			t.Errorf("after %d: %v, want %v", count, got, want)
		}
	}
}
