package playground

import (
	"context"
	"errors"
	"net/http"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"kubeplay/playground/journal"
	"kubeplay/server"
	"kubeplay/server/authn"
	"kubeplay/store"
)

// Options configure a sandbox.
type Options struct {
	// Store holds the sandbox's objects; Close closes it.
	Store store.Store
	// Controllers are the controllers of a real cluster the sandbox runs;
	// the zero value runs them all.
	Controllers Controllers
	// AllowUnsafeMalformedObjectDeletion turns on kube-apiserver's feature
	// gate of that name (off by default, as in kube-apiserver v1.35).
	AllowUnsafeMalformedObjectDeletion bool
	// Access configures who may use the sandbox's API (default: anyone,
	// as cluster administrator).
	Access server.Access
}

// Controllers switches off controllers a sandbox would otherwise run, to
// show what the API server alone does (objects stay Terminating).
type Controllers struct {
	// DisableNamespace: kube-controller-manager's namespace controller.
	DisableNamespace bool
	// DisableGarbageCollector: kube-controller-manager's garbage collector.
	DisableGarbageCollector bool
	// DisableKubelet: the stand-in for the nodes' kubelets that removes
	// gracefully deleted pods when their grace period ends.
	DisableKubelet bool
	// DisableClusterRoleAggregation: kube-controller-manager's controller
	// that fills in the rules of aggregated ClusterRoles (admin, edit, view).
	DisableClusterRoleAggregation bool
}

// Sandbox is one isolated cluster: an API server and its controllers.
type Sandbox struct {
	store   store.Store
	api     *server.Server
	journal *journal.Journal
	// handler is the API as clients and controllers reach it: through the
	// journal, so that every request shows up there.
	handler   http.Handler
	deletions *DeletionJournal
	cancel    context.CancelFunc
	done      sync.WaitGroup
}

// Open starts a sandbox over opts.Store.
func Open(ctx context.Context, opts Options) (*Sandbox, error) {
	if opts.Store == nil {
		return nil, errors.New("playground: no store")
	}
	deletions := newDeletionJournal()
	api, err := server.New(ctx, server.Options{Store: opts.Store, OnDeletion: deletions.record,
		AllowUnsafeMalformedObjectDeletion: opts.AllowUnsafeMalformedObjectDeletion, Access: opts.Access})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	j := journal.New(journal.Limits{}, nil)
	sb := &Sandbox{store: opts.Store, api: api, journal: j, handler: j.Handler(api), deletions: deletions, cancel: cancel}
	if !opts.Controllers.DisableNamespace {
		nc := newNamespaceController(sb.handler, api.Catalog())
		nsCtx := authn.WithUser(ctx, namespaceControllerUser)
		sb.done.Go(func() { runLoop(nsCtx, "namespace controller", opts.Store, nc.relevant, nc.syncNamespaces) })
	}
	if !opts.Controllers.DisableGarbageCollector {
		gc := newGarbageCollector(sb.handler, api.Catalog(), opts.Store, deletions)
		sb.done.Go(func() { runLoop(ctx, "garbage collector", opts.Store, gc.relevant, gc.sync) })
	}
	if !opts.Controllers.DisableKubelet {
		k := newKubelet(sb.handler)
		sb.done.Go(func() { runLoop(ctx, "kubelet", opts.Store, isPodChange, k.sync) })
	}
	if !opts.Controllers.DisableClusterRoleAggregation {
		agg := newClusterRoleAggregator(sb.handler)
		aggCtx := authn.WithUser(ctx, aggregationControllerUser)
		sb.done.Go(func() {
			runLoop(aggCtx, "clusterrole aggregation controller", opts.Store, isClusterRoleChange, agg.sync)
		})
	}
	return sb, nil
}

// Handler returns the sandbox's Kubernetes API.
func (sb *Sandbox) Handler() http.Handler { return sb.handler }

// Journal returns the record of the requests the sandbox served, its
// controllers' included.
func (sb *Sandbox) Journal() *journal.Journal { return sb.journal }

// DeletionJournal returns the timelines of the deletions in the sandbox.
func (sb *Sandbox) DeletionJournal() *DeletionJournal { return sb.deletions }

// PlantUndecodable stores value as the object ns/name of resource gvr even
// though it cannot be decoded, to show what a corrupt object in etcd does
// (reads fail; only the unsafe deletion, with
// Options.AllowUnsafeMalformedObjectDeletion, removes it).
func (sb *Sandbox) PlantUndecodable(ctx context.Context, gvr schema.GroupVersionResource, ns, name string, value []byte) error {
	return sb.api.PlantUndecodable(ctx, gvr, ns, name, value)
}

// Close stops the controllers and closes the store.
func (sb *Sandbox) Close() error {
	sb.cancel()
	sb.done.Wait()
	return sb.store.Close()
}
