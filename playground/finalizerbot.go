package playground

import (
	"context"
	"log/slog"
	"time"
)

// FinalizerBot is a simulated actor that removes one finalizer from every
// object being deleted once Delay has passed since its deletion was
// requested (its deletionTimestamp, minus its grace period), so that the
// phases of a deletion can be watched unfolding, as when a real
// controller finishes its clean-up.
type FinalizerBot struct {
	Finalizer string        `json:"finalizer"`
	Delay     time.Duration `json:"delay"`
}

// finalizerBots runs the bots of a sandbox, with the garbage collector's
// view of the store and its way of updating objects.
type finalizerBots struct {
	bots []FinalizerBot
	gc   *garbageCollector
	now  func() time.Time
}

// sync removes the finalizers that are due and asks to run again when the
// next one is.
func (b *finalizerBots) sync(ctx context.Context) time.Duration {
	g, err := b.gc.snapshot(ctx)
	if err != nil {
		if ctx.Err() == nil {
			slog.Warn("finalizer bot", "err", err)
		}
		return retryInterval
	}
	var next time.Duration
	for _, n := range g.nodes {
		if !n.deleting {
			continue
		}
		for _, bot := range b.bots {
			if !n.has(bot.Finalizer) {
				continue
			}
			if wait := n.deletionRequested.Add(bot.Delay).Sub(b.now()); wait > 0 {
				if next == 0 || wait < next {
					next = wait
				}
				continue
			}
			err := b.gc.update(ctx, n, func(obj map[string]any) bool { return removeFinalizer(obj, bot.Finalizer) })
			if err != nil && ctx.Err() == nil {
				slog.Debug("finalizer bot", "object", n.path(), "err", err)
				return retryInterval / 10
			}
		}
	}
	return next
}
