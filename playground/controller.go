package playground

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"kubeplay/playground/workqueue"
	"kubeplay/server/authn"
	"kubeplay/store"
)

// A reconciler is one controller, written as kube-controller-manager's are:
// store changes name the keys they concern, and a worker brings one key at a
// time to its desired state. Nothing polls: a key is looked at again only
// when a change names it, when reconcile asks for a later look (a grace
// period ends), or after a failure, with per-key exponential backoff.
type reconciler interface {
	// resync is called, on the runner's event goroutine, whenever the
	// controller (re)starts watching: the store is as of rev and every
	// change after it will be passed to keysOf. It returns the keys to look
	// at first.
	resync(ctx context.Context, rev int64) ([]string, error)
	// keysOf is called, on the event goroutine, for every store change in
	// revision order; it calls add for each key the change concerns.
	keysOf(ev store.Event, add func(key string))
	// reconcile brings key to its desired state. A non-nil error retries it
	// with backoff; after > 0 asks for another look once that has passed.
	reconcile(ctx context.Context, key string) (after time.Duration, err error)
}

// runController runs r until ctx is done: one goroutine follows the store's
// changes and queues keys, another reconciles them.
func runController(ctx context.Context, name string, st store.Store, r reconciler) {
	q := workqueue.New[string](nil, nil)
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			key, ok := q.Get()
			if !ok {
				return
			}
			after, err := r.reconcile(ctx, key)
			switch {
			case err != nil && ctx.Err() == nil:
				level := slog.LevelWarn
				if apierrors.IsConflict(err) || apierrors.IsNotFound(err) || apierrors.IsAlreadyExists(err) {
					level = slog.LevelDebug // the next look sees the new state
				}
				slog.Log(ctx, level, name, "key", key, "err", err, "retries", q.NumRequeues(key))
				q.AddRateLimited(key)
			case err == nil:
				q.Forget(key)
				if after > 0 {
					q.AddAfter(key, after)
				}
			}
			q.Done(key)
		}
	})
	follow(ctx, name, st, r, q)
	q.ShutDown()
	wg.Wait()
}

// follow feeds q from the store's changes until ctx is done. A watch that
// ends because this consumer fell behind resumes where it stopped; any
// other failure starts over from the current state, after a backoff.
func follow(ctx context.Context, name string, st store.Store, r reconciler, q *workqueue.Queue[string]) {
	const restart = "restart"
	backoff := workqueue.DefaultRateLimiter[string](nil)
	var rev int64 // the last revision seen; 0: start over
	for ctx.Err() == nil {
		var err error
		if rev == 0 {
			rev, err = st.CurrentRevision(ctx)
			if err == nil {
				var keys []string
				if keys, err = r.resync(ctx, rev); err == nil {
					for _, k := range keys {
						q.Add(k)
					}
				}
			}
		}
		if err == nil {
			rev, err = watch(ctx, st, rev, r, q)
		}
		if errors.Is(err, store.ErrWatcherTooSlow) {
			continue
		}
		if ctx.Err() != nil {
			return
		}
		slog.Warn(name, "err", err)
		rev = 0
		t := time.NewTimer(backoff.When(restart))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// watch passes every change after rev to r until the watch ends, and
// returns the last revision it passed on.
func watch(ctx context.Context, st store.Store, rev int64, r reconciler, q *workqueue.Queue[string]) (int64, error) {
	w, err := st.Watch(ctx, "/registry/", rev)
	if err != nil {
		return rev, err
	}
	defer w.Stop()
	for ev := range w.Events() {
		if ev.Type == store.Progress {
			continue
		}
		r.keysOf(ev, q.Add)
		rev = ev.KV.ModRevision
	}
	return rev, w.Err()
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
