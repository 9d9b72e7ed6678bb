package playground

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"net/http"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"kubeplay/playground/journal"
	"kubeplay/server"
	"kubeplay/server/authn"
	"kubeplay/server/inproc"
	"kubeplay/store"
)

// Options configure a sandbox.
type Options struct {
	// Store holds the sandbox's objects; Close closes it.
	Store store.Store
	// Controllers are the controllers of a real cluster the sandbox runs;
	// the zero value runs them all.
	Controllers Controllers
	// StartControllersLater leaves the controllers stopped until
	// StartControllers, as a kube-controller-manager starts once its API
	// server answers.
	StartControllersLater bool
	// FeatureGates switch kube-apiserver's feature gates (see
	// server.FeatureGates; default: those of the emulated release).
	FeatureGates server.FeatureGates
	// RuntimeConfig switches the API's group versions and resources on and
	// off, as kube-apiserver's --runtime-config (see SetRuntimeConfig).
	RuntimeConfig server.RuntimeConfig
	// Version is the minor version of the Kubernetes release the sandbox's
	// API emulates (see SetVersion); 0 is the newest, releases.Newest.
	Version int
	// Access configures who may use the sandbox's API (default: anyone,
	// as cluster administrator).
	Access server.Access
	// Clock is the sandbox's time (default: a new one); the store's
	// clock should be the same, so that the history it keeps is measured
	// on it.
	Clock *Clock
	// NoWebhookCalls: see server.Options.NoWebhookCalls.
	NoWebhookCalls bool
	// NoServiceAccountAdmission: see server.Options.NoServiceAccountAdmission.
	NoServiceAccountAdmission bool
	// PodSecurity: see server.Options.PodSecurity.
	PodSecurity *server.PodSecurityConfiguration
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
	clock     *Clock
	ctx       context.Context
	// disks are the simulated nodes' disks (see nodeDisks).
	disks nodeDisks

	mu          sync.Mutex // guards the fields below
	controllers Controllers
	gates       server.FeatureGates // those switched, not left at their defaults
	cancel      context.CancelFunc
	done        *sync.WaitGroup
	running     []*controller
}

// Open starts a sandbox over opts.Store.
func Open(ctx context.Context, opts Options) (*Sandbox, error) {
	if opts.Store == nil {
		return nil, errors.New("playground: no store")
	}
	deletions := newDeletionJournal()
	clock := opts.Clock
	if clock == nil {
		clock = &Clock{}
	}
	rev, err := opts.Store.CurrentRevision(ctx)
	if err != nil {
		return nil, err
	}
	api, err := server.New(ctx, server.Options{Store: opts.Store, OnDeletion: deletions.record, Now: clock.Now,
		FeatureGates: opts.FeatureGates, RuntimeConfig: opts.RuntimeConfig, Version: opts.Version, Access: opts.Access,
		NoWebhookCalls: opts.NoWebhookCalls, NoServiceAccountAdmission: opts.NoServiceAccountAdmission, PodSecurity: opts.PodSecurity,
		ContainerLog: containerLog(clock.Now)})
	if err != nil {
		return nil, err
	}
	j := journal.New(journal.Limits{}, nil)
	sb := &Sandbox{store: opts.Store, api: api, journal: j, handler: j.Handler(api), deletions: deletions,
		clock: clock, ctx: context.WithoutCancel(ctx), gates: maps.Clone(opts.FeatureGates)}
	if rev == 0 && opts.Controllers.Running("provisioner") {
		// A new cluster with the simulated provisioner has its class, as a
		// kind cluster has; a cluster without it (envtest, the root
		// cluster by default) has none, as kube-apiserver alone. Made
		// before the cluster is handed out, it is no request of the
		// journal, as the server's own start-up objects.
		c := inproc.New(sb.api, installerAgent)
		if err := createDefaultStorageClass(authn.WithUser(ctx, simulatorUser), c); err != nil {
			return nil, err
		}
	}
	if opts.StartControllersLater {
		sb.controllers = opts.Controllers
	} else {
		sb.SetControllers(opts.Controllers)
	}
	return sb, nil
}

// StartControllers starts the controllers of a sandbox opened with
// Options.StartControllersLater (or starts them again).
func (sb *Sandbox) StartControllers() { sb.SetControllers(sb.Controllers()) }

// installerAgent is who installs what a new cluster starts with (what
// kind's node image applies with kubectl), and so the field manager of
// what it makes, which static/state.js knows as the sandbox's own.
const installerAgent = "kubeplay-cluster-setup"

// SetRuntimeConfig switches the sandbox's group versions and resources at
// once, without a restart: objects of a type switched off stay stored. The
// error is the store's (see server.Server.SetRuntimeConfig).
func (sb *Sandbox) SetRuntimeConfig(rc server.RuntimeConfig) error {
	return sb.api.SetRuntimeConfig(rc)
}

// SetVersion makes the sandbox's API emulate Kubernetes release 1.minor at
// once, without a restart (see server.Server.SetVersion): objects of a type
// that release does not serve stay stored. The error is the store's.
func (sb *Sandbox) SetVersion(minor int) error { return sb.api.SetVersion(minor) }

// Version returns the minor version of the release the sandbox emulates.
func (sb *Sandbox) Version() int { return sb.api.Version() }

// SetFeatureGates switches the sandbox's feature gates at once (nil: the
// defaults of the emulated release). The error is the store's.
func (sb *Sandbox) SetFeatureGates(fg server.FeatureGates) error {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	sb.gates = maps.Clone(fg)
	return sb.api.SetFeatureGates(fg)
}

// SwitchedFeatureGates returns the feature gates switched on or off, as
// opposed to those left at their defaults in the emulated release.
func (sb *Sandbox) SwitchedFeatureGates() server.FeatureGates {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	return maps.Clone(sb.gates)
}

// FeatureGates returns the feature gates the emulated release has, and
// whether each is on.
func (sb *Sandbox) FeatureGates() map[string]bool { return sb.api.FeatureGates() }

// Controllers returns the controllers switched off.
func (sb *Sandbox) Controllers() Controllers {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	return sb.controllers
}

// SetControllers stops the running controllers and starts those c leaves
// on; each starts from the current state of the store.
func (sb *Sandbox) SetControllers(c Controllers) {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	sb.stopControllers()
	ctx, cancel := context.WithCancel(sb.ctx)
	done := &sync.WaitGroup{}
	sb.controllers, sb.cancel, sb.done, sb.running = c, cancel, done, nil
	st, api := sb.store, sb.api
	start := func(ctx context.Context, name string, r reconciler) {
		ctl := newController(name, st, r)
		sb.running = append(sb.running, ctl)
		done.Go(func() { ctl.run(ctx) })
	}
	// Before the controllers start: the autoscaler reads the metrics.
	var metrics server.MetricsSource
	if c.Running("metrics") {
		metrics = newSimulatedMetrics(sb)
	}
	if err := api.SetMetrics(authn.WithUser(ctx, simulatorUser), metrics); err != nil {
		slog.Warn("metrics-server", "err", err)
	}
	for _, name := range ControllerNames() {
		if d := controllerDefs[name]; c.Running(name) {
			start(authn.WithUser(ctx, d.user()), d.title, d.start(sb))
		}
	}
	if len(c.FinalizerBots) > 0 {
		bots := newFinalizerBots(c.FinalizerBots, sb.handler, api.Catalog(), st, sb.clock.Now)
		start(authn.WithUser(ctx, simulatorUser), "finalizer bot", bots)
	}
}

// Idle reports whether every controller of the sandbox has seen every change
// to the store and has nothing queued, in progress or scheduled: until
// something changes the store, the sandbox will make no request and use no
// CPU. (The clock's advance is a change: it restarts the controllers.)
func (sb *Sandbox) Idle(ctx context.Context) (bool, error) {
	rev, err := sb.store.CurrentRevision(ctx)
	if err != nil {
		return false, err
	}
	sb.mu.Lock()
	defer sb.mu.Unlock()
	for _, c := range sb.running {
		if !c.idle(rev) {
			return false, nil
		}
	}
	return true, nil
}

// Clock returns the sandbox's clock.
func (sb *Sandbox) Clock() *Clock { return sb.clock }

// AdvanceClock moves the sandbox's clock forward by d and has every
// controller look again at once, so what became due happens now.
func (sb *Sandbox) AdvanceClock(d time.Duration) {
	sb.clock.advance(d)
	sb.StartControllers()
}

// stopControllers requires sb.mu.
func (sb *Sandbox) stopControllers() {
	if sb.cancel != nil {
		sb.cancel()
		sb.done.Wait()
	}
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
// the AllowUnsafeMalformedObjectDeletion feature gate on, removes it).
func (sb *Sandbox) PlantUndecodable(ctx context.Context, gvr schema.GroupVersionResource, ns, name string, value []byte) error {
	return sb.api.PlantUndecodable(ctx, gvr, ns, name, value)
}

// StampBootstrap records in the sandbox's store that it holds what every
// cluster starts with, checked, so that a sandbox opened on it later skips
// that check (see server.Server.StampBootstrap).
func (sb *Sandbox) StampBootstrap(ctx context.Context) error { return sb.api.StampBootstrap(ctx) }

// Compact drops the store's history up to its current revision, which it
// returns: reads and watches from before it then answer 410 Gone.
func (sb *Sandbox) Compact(ctx context.Context) (int64, error) {
	rev, err := sb.store.CurrentRevision(ctx)
	if err == nil {
		err = sb.store.Compact(ctx, rev)
	}
	return rev, err
}

// History returns the versions of the object ns/name of resource gvr that
// the sandbox's store keeps, oldest first, and the compaction horizon (see
// server.Server.History).
func (sb *Sandbox) History(ctx context.Context, gvr schema.GroupVersionResource, ns, name string) ([]server.Revision, int64, error) {
	return sb.api.History(ctx, gvr, ns, name)
}

// Close stops the controllers and closes the store.
func (sb *Sandbox) Close() error {
	sb.mu.Lock()
	sb.stopControllers()
	sb.mu.Unlock()
	return sb.store.Close()
}
