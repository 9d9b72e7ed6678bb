package playground

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
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
	// revision order; it queues each key the change concerns.
	keysOf(ev store.Event, q queue)
	// reconcile brings key to its desired state. A non-nil error retries it
	// with backoff; after > 0 asks for another look once that has passed.
	reconcile(ctx context.Context, key string) (after time.Duration, err error)
}

// queue is where keysOf puts the keys a change concerns.
type queue interface {
	Add(key string)
	// AddAfter queues key once d has passed; of several delays asked for
	// one key, the earliest wins.
	AddAfter(key string, d time.Duration)
}

// controller is one running reconciler: its queue, and how far it has
// followed the store.
type controller struct {
	name string
	st   store.Store
	r    reconciler
	q    *workqueue.Queue[string]
	// seen is the revision of the last change passed to keysOf (or the
	// revision resync was called at).
	seen atomic.Int64
}

func newController(name string, st store.Store, r reconciler) *controller {
	return &controller{name: name, st: st, r: r, q: workqueue.New[string](nil, nil)}
}

// idle reports whether the controller has followed the store up to rev and
// has nothing queued, in progress or scheduled: it will do nothing until
// the store changes.
func (c *controller) idle(rev int64) bool { return c.seen.Load() >= rev && c.q.Idle() }

// run runs the controller until ctx is done: one goroutine follows the
// store's changes and queues keys, another reconciles them.
func (c *controller) run(ctx context.Context) {
	name, r, q := c.name, c.r, c.q
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			key, ok := q.Get()
			if !ok {
				return
			}
			yieldToHost() // each reconcile a task of the host's own (see yield_js.go)
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
	c.follow(ctx)
	q.ShutDown()
	wg.Wait()
}

// follow feeds q from the store's changes until ctx is done. A watch that
// ends because this consumer fell behind resumes where it stopped; any
// other failure starts over from the current state, after a backoff.
func (c *controller) follow(ctx context.Context) {
	name, st, r, q := c.name, c.st, c.r, c.q
	const restart = "restart"
	backoff := workqueue.DefaultRateLimiter[string](nil)
	var rev int64 // the last revision seen; 0: start over
	for ctx.Err() == nil {
		var err error
		if rev == 0 {
			yieldToHost() // a cluster's controllers start together: one resync at a time
			rev, err = st.CurrentRevision(ctx)
			if err == nil {
				var keys []string
				if keys, err = r.resync(ctx, rev); err == nil {
					for _, k := range keys {
						q.Add(k)
					}
					c.seen.Store(rev)
				}
			}
		}
		if err == nil {
			from := rev
			rev, err = c.watch(ctx, rev)
			if rev > from {
				backoff.Forget(restart) // it worked for a while
			}
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
func (c *controller) watch(ctx context.Context, rev int64) (int64, error) {
	w, err := c.st.Watch(ctx, objectsRoot, rev)
	if err != nil {
		return rev, err
	}
	defer w.Stop()
	for ev := range w.Events() {
		if ev.Type == store.Progress {
			continue
		}
		c.r.keysOf(ev, c.q)
		rev = ev.KV.ModRevision
		c.seen.Store(rev)
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
