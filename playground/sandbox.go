package playground

import (
	"context"
	"errors"
	"net/http"
	"sync"

	"kubeplay/playground/journal"
	"kubeplay/server"
	"kubeplay/store"
)

// Options configure a sandbox.
type Options struct {
	// Store holds the sandbox's objects; Close closes it.
	Store store.Store
}

// Sandbox is one isolated cluster: an API server and its controllers.
type Sandbox struct {
	store   store.Store
	api     *server.Server
	journal *journal.Journal
	// handler is the API as clients and controllers reach it: through the
	// journal, so that every request shows up there.
	handler http.Handler
	cancel  context.CancelFunc
	done    sync.WaitGroup
}

// Open starts a sandbox over opts.Store.
func Open(ctx context.Context, opts Options) (*Sandbox, error) {
	if opts.Store == nil {
		return nil, errors.New("playground: no store")
	}
	api, err := server.New(ctx, server.Options{Store: opts.Store})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	j := journal.New(journal.Limits{}, nil)
	sb := &Sandbox{store: opts.Store, api: api, journal: j, handler: j.Handler(api), cancel: cancel}
	nc := newNamespaceController(sb.handler, api.Catalog(), opts.Store)
	sb.done.Go(func() { nc.run(ctx) })
	return sb, nil
}

// Handler returns the sandbox's Kubernetes API.
func (sb *Sandbox) Handler() http.Handler { return sb.handler }

// Journal returns the record of the requests the sandbox served, its
// controllers' included.
func (sb *Sandbox) Journal() *journal.Journal { return sb.journal }

// Close stops the controllers and closes the store.
func (sb *Sandbox) Close() error {
	sb.cancel()
	sb.done.Wait()
	return sb.store.Close()
}
