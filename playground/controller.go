package playground

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"kubeplay/server/authn"
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

// controllerUser is the ServiceAccount in kube-system that the
// kube-controller-manager controller name acts as; the default RBAC roles
// (system:controller:<name>) grant it what the controller needs.
func controllerUser(name string) *authn.User {
	return &authn.User{
		Name:   "system:serviceaccount:kube-system:" + name,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:kube-system", authn.Authenticated},
	}
}

// simulatorUser is who kubeplay's own stand-ins act as — the kubelets, the
// combined workload controllers and the finalizer bots — so that they work
// whatever anonymous requests may do. They have no single counterpart with
// an RBAC role of its own (a kubelet is authorized by the Node authorizer,
// which kubeplay lacks), so they act as cluster administrators.
var simulatorUser = &authn.User{Name: "system:kubeplay-simulator", Groups: []string{authn.Masters, authn.Authenticated}}
