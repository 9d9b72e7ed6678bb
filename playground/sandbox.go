package playground

import (
	"context"
	"errors"
	"net/http"
	"sync"

	"kubeplay/server"
	"kubeplay/server/authn"
	"kubeplay/store"
)

// Options configure a sandbox.
type Options struct {
	// Store holds the sandbox's objects; Close closes it.
	Store store.Store
	// Access configures who may use the sandbox's API (default: anyone,
	// as cluster administrator).
	Access server.Access
}

// Sandbox is one isolated cluster: an API server and its controllers.
type Sandbox struct {
	store  store.Store
	api    *server.Server
	cancel context.CancelFunc
	done   sync.WaitGroup
}

// Open starts a sandbox over opts.Store.
func Open(ctx context.Context, opts Options) (*Sandbox, error) {
	if opts.Store == nil {
		return nil, errors.New("playground: no store")
	}
	api, err := server.New(ctx, server.Options{Store: opts.Store, Access: opts.Access})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	sb := &Sandbox{store: opts.Store, api: api, cancel: cancel}
	nc := newNamespaceController(api, opts.Store)
	sb.done.Go(func() { nc.run(authn.WithUser(ctx, namespaceControllerUser)) })
	agg := newClusterRoleAggregator(api, opts.Store)
	sb.done.Go(func() { agg.run(ctx) })
	return sb, nil
}

// Handler returns the sandbox's Kubernetes API.
func (sb *Sandbox) Handler() http.Handler { return sb.api }

// Close stops the controllers and closes the store.
func (sb *Sandbox) Close() error {
	sb.cancel()
	sb.done.Wait()
	return sb.store.Close()
}
