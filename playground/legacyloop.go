// TEMPORARY while the controllers move to runController.
package playground

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"kubeplay/store"
)

// runLoop runs sync once, then again after every batch of store changes that
// holds one relevant says matters (nil: any change), and whenever the
// interval sync asked for has passed (0: only on changes). Changes that
// arrive while sync runs are folded into the next pass, so a burst of writes
// costs a few passes, not one per write.
func runLoop(ctx context.Context, name string, st store.Store, relevant func(store.Event) bool, sync func(context.Context) time.Duration) {
	for ctx.Err() == nil {
		// A watch that fell behind during a long pass is simply restarted:
		// the next pass reads the current state anyway.
		if err := watchLoop(ctx, st, relevant, sync); err != nil && ctx.Err() == nil && !errors.Is(err, store.ErrWatcherTooSlow) {
			slog.Warn(name, "err", err)
			sleep(ctx, retryInterval)
		}
	}
}

func watchLoop(ctx context.Context, st store.Store, relevant func(store.Event) bool, sync func(context.Context) time.Duration) error {
	rev, err := st.CurrentRevision(ctx)
	if err != nil {
		return err
	}
	w, err := st.Watch(ctx, "/registry/", rev)
	if err != nil {
		return err
	}
	defer w.Stop()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	arm := func(d time.Duration) {
		timer.Stop()
		if d > 0 {
			timer.Reset(d)
		}
	}
	arm(sync(ctx))
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.Events():
			if !ok {
				return w.Err()
			}
			if drain(w.Events(), relevant, relevant == nil || relevant(ev)) {
				arm(sync(ctx))
			}
		case <-timer.C:
			arm(sync(ctx))
		}
	}
}

// drain takes every event already waiting; it reports whether any of them
// (or an earlier one: seen) is relevant.
func drain(ch <-chan store.Event, relevant func(store.Event) bool, seen bool) bool {
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				return seen
			}
			seen = seen || relevant == nil || relevant(ev)
		default:
			return seen
		}
	}
}


const retryInterval = time.Second

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
