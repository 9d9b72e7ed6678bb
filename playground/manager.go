package playground

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"kubeplay/server"
	"kubeplay/server/authn"
	"kubeplay/store"
)

// ManagerOptions configure a Manager.
type ManagerOptions struct {
	// Dir holds the sandboxes' database files, one per sandbox
	// (sandbox-<id>.db), and uploaded snapshots. "" means a temporary
	// directory removed by Close.
	Dir string
	// InMemory keeps new empty sandboxes in memory instead of in Dir
	// (restored snapshots are always files).
	InMemory bool
	// Sandbox is the template of every sandbox (its Store is ignored).
	Sandbox Options
	// MaxSandboxes caps the sandboxes of the process (default 100).
	MaxSandboxes int
	// IdleExpiry deletes a sandbox that served no request for this long
	// (default 1 hour; negative: never).
	IdleExpiry time.Duration
	// Limits bound each sandbox.
	Limits Limits
	// Retention is the history each sandbox keeps (default
	// DefaultSandboxRetention).
	Retention time.Duration
	// Now is the clock of expiry and rate limits (default time.Now).
	Now func() time.Time
	// AdminToken, if set, is hosted mode. It is the bearer token of the
	// playground API (see package api), which every sandbox's API also
	// accepts, as a cluster administrator's. Each sandbox gets a token of
	// its own (Managed.Token), which no other sandbox accepts; requests
	// without a token are refused (401), unless Sandbox.Access has RBAC
	// decide for them.
	AdminToken string
}

// Limits bound what one sandbox may take of the process. Zero fields take
// the defaults; negative ones mean no limit.
type Limits struct {
	// Objects caps the objects stored, the built-in ones included
	// (default 10000).
	Objects int64 `json:"objects"`
	// Bytes caps the database's size, history included (default 64 MiB).
	Bytes int64 `json:"bytes"`
	// BodyBytes caps a request's body (default and at most 3 MiB, the
	// limit of kube-apiserver, which the API itself enforces).
	BodyBytes int64 `json:"bodyBytes"`
	// RequestsPerSecond is the sustained request rate (default 100; bursts
	// of twice as many).
	RequestsPerSecond float64 `json:"requestsPerSecond"`
	// Watches caps the concurrent watches (default 50).
	Watches int64 `json:"watches"`
}

func (l Limits) withDefaults() Limits {
	def := func(v *int64, d int64) {
		if *v == 0 {
			*v = d
		}
	}
	def(&l.Objects, 10000)
	def(&l.Bytes, 64<<20)
	def(&l.BodyBytes, 3<<20)
	def(&l.Watches, 50)
	if l.RequestsPerSecond == 0 {
		l.RequestsPerSecond = 100
	}
	return l
}

// ErrNoSandbox: no sandbox has the id (or it expired).
var ErrNoSandbox = errors.New("no such sandbox")

// ErrTooManySandboxes: the process holds MaxSandboxes sandboxes.
var ErrTooManySandboxes = errors.New("too many sandboxes")

// Manager holds the sandboxes of one process, each with its own database,
// revisions, controllers and journals, under an unguessable id. It is safe
// for concurrent use.
type Manager struct {
	opts   ManagerOptions
	tmpDir bool // opts.Dir was created by NewManager

	mu        sync.Mutex
	sandboxes map[string]*Managed
	closed    bool

	stopJanitor context.CancelFunc
	janitorDone chan struct{}
}

// NewManager returns a manager of the sandboxes kept in opts.Dir (none if
// it is new).
func NewManager(opts ManagerOptions) (*Manager, error) {
	m := &Manager{opts: opts, sandboxes: map[string]*Managed{}}
	if m.opts.Dir == "" {
		dir, err := os.MkdirTemp("", "kubeplay-sandboxes-")
		if err != nil {
			return nil, err
		}
		m.opts.Dir, m.tmpDir = dir, true
	} else if err := os.MkdirAll(m.opts.Dir, 0o755); err != nil {
		return nil, err
	}
	if m.opts.MaxSandboxes <= 0 {
		m.opts.MaxSandboxes = 100
	}
	if m.opts.IdleExpiry == 0 {
		m.opts.IdleExpiry = time.Hour
	}
	if m.opts.Retention == 0 {
		m.opts.Retention = DefaultSandboxRetention
	}
	if m.opts.Now == nil {
		m.opts.Now = time.Now
	}
	m.opts.Limits = m.opts.Limits.withDefaults()
	if !m.tmpDir {
		if err := m.reopen(); err != nil {
			m.Close()
			return nil, err
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	m.stopJanitor, m.janitorDone = cancel, make(chan struct{})
	go m.janitor(ctx)
	return m, nil
}

// reopen opens the sandboxes whose databases Dir holds, so that they
// survive a restart (with their token and emulation, and otherwise the
// default settings), and removes the uploads and downloads a stopped
// process left behind.
func (m *Manager) reopen() error {
	entries, err := os.ReadDir(m.opts.Dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, "snapshot-") {
			os.Remove(filepath.Join(m.opts.Dir, name))
			continue
		}
		if db, ok := besideDB(name); ok {
			// Read with its database; that of a sandbox kept in memory
			// is gone.
			if _, err := os.Stat(filepath.Join(m.opts.Dir, db+".db")); errors.Is(err, os.ErrNotExist) {
				os.Remove(filepath.Join(m.opts.Dir, name))
			}
			continue
		}
		id, ok := strings.CutSuffix(strings.TrimPrefix(name, "sandbox-"), ".db")
		if !ok || !strings.HasPrefix(name, "sandbox-") || len(id) != 26 || strings.Trim(id, "abcdefghijklmnopqrstuvwxyz234567") != "" {
			continue
		}
		if len(m.sandboxes) >= m.opts.MaxSandboxes {
			break
		}
		info, err := e.Info()
		if err != nil {
			return err
		}
		ms := &Managed{id: id, m: m, created: info.ModTime(), retention: m.opts.Retention,
			version: m.opts.Sandbox.Version, gates: maps.Clone(m.opts.Sandbox.FeatureGates),
			limiter: newLimiter(m.opts.Limits.RequestsPerSecond, m.opts.Now)}
		if err := ms.loadToken(); err != nil {
			return fmt.Errorf("sandbox %s: %w", id, err)
		}
		if err := ms.loadEmulation(); err != nil {
			return fmt.Errorf("sandbox %s: %w", id, err)
		}
		if err := ms.openLocked(context.Background(), true); err != nil {
			return fmt.Errorf("sandbox %s: %w", id, err)
		}
		ms.touch()
		m.sandboxes[id] = ms
	}
	return nil
}

// AdminToken returns the playground API's token ("": not hosted mode).
func (m *Manager) AdminToken() string { return m.opts.AdminToken }

// Limits returns the limits of every sandbox.
func (m *Manager) Limits() Limits { return m.opts.Limits }

// CreateOptions say how to create a sandbox.
type CreateOptions struct {
	// Snapshot, if set, is the path of a database file (a snapshot) the
	// sandbox starts from; the manager moves it into its directory.
	Snapshot string
	// Controllers switches off controllers (default: all run).
	Controllers Controllers
	// Retention is the history the sandbox keeps (default: the manager's).
	Retention time.Duration
	// Version is the minor version of the Kubernetes release the sandbox
	// emulates (default: the manager's sandbox options').
	Version int
	// FeatureGates switch feature gates, over the manager's sandbox
	// options'.
	FeatureGates server.FeatureGates
}

// Create starts a new sandbox.
func (m *Manager) Create(ctx context.Context, opts CreateOptions) (*Managed, error) {
	id, err := newID()
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil, errors.New("playground: manager closed")
	}
	if len(m.sandboxes) >= m.opts.MaxSandboxes {
		m.mu.Unlock()
		return nil, fmt.Errorf("%w: this server holds at most %d", ErrTooManySandboxes, m.opts.MaxSandboxes)
	}
	ms := &Managed{id: id, m: m, created: m.opts.Now(), controllers: opts.Controllers, retention: opts.Retention, version: opts.Version}
	if ms.retention == 0 {
		ms.retention = m.opts.Retention
	}
	if ms.version == 0 {
		ms.version = m.opts.Sandbox.Version
	}
	ms.gates = server.FeatureGates{}
	maps.Copy(ms.gates, m.opts.Sandbox.FeatureGates)
	maps.Copy(ms.gates, opts.FeatureGates)
	ms.limiter = newLimiter(m.opts.Limits.RequestsPerSecond, m.opts.Now)
	if err := ms.loadToken(); err != nil {
		return nil, err
	}
	// Reserved before it opens, so concurrent creates respect the cap;
	// locked, and never idle, until it is open.
	ms.lastUsed.Store(math.MaxInt64)
	ms.mu.Lock()
	m.sandboxes[id] = ms
	m.mu.Unlock()

	if opts.Snapshot != "" {
		err = ms.restoreLocked(ctx, opts.Snapshot)
	} else {
		err = ms.openLocked(ctx, false)
	}
	if err == nil {
		err = ms.saveEmulationLocked()
	}
	ms.mu.Unlock()
	ms.touch()
	if err != nil {
		m.mu.Lock()
		delete(m.sandboxes, id)
		m.mu.Unlock()
		ms.close(true)
		return nil, err
	}
	return ms, nil
}

// Get returns the sandbox with id.
func (m *Manager) Get(id string) (*Managed, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ms, ok := m.sandboxes[id]
	if !ok {
		return nil, ErrNoSandbox
	}
	return ms, nil
}

// List returns the sandboxes, oldest first.
func (m *Manager) List() []*Managed {
	m.mu.Lock()
	l := make([]*Managed, 0, len(m.sandboxes))
	for _, ms := range m.sandboxes {
		l = append(l, ms)
	}
	m.mu.Unlock()
	slices.SortFunc(l, func(a, b *Managed) int {
		if c := a.created.Compare(b.created); c != 0 {
			return c
		}
		return strings.Compare(a.id, b.id)
	})
	return l
}

// Delete stops the sandbox with id and deletes its database.
func (m *Manager) Delete(id string) error {
	m.mu.Lock()
	ms, ok := m.sandboxes[id]
	delete(m.sandboxes, id)
	m.mu.Unlock()
	if !ok {
		return ErrNoSandbox
	}
	return ms.close(true)
}

// Close stops every sandbox. Those kept in files in a Dir of the caller's
// stay there, and a manager on the same Dir opens them again.
func (m *Manager) Close() error {
	m.mu.Lock()
	m.closed = true
	all := m.sandboxes
	m.sandboxes = map[string]*Managed{}
	m.mu.Unlock()
	m.stopJanitor()
	<-m.janitorDone
	var errs []error
	for _, ms := range all {
		errs = append(errs, ms.close(false))
	}
	if m.tmpDir {
		errs = append(errs, os.RemoveAll(m.opts.Dir))
	}
	return errors.Join(errs...)
}

// janitor deletes idle sandboxes.
func (m *Manager) janitor(ctx context.Context) {
	defer close(m.janitorDone)
	if m.opts.IdleExpiry < 0 {
		return
	}
	tick := time.NewTicker(min(max(m.opts.IdleExpiry/4, 10*time.Millisecond), time.Minute))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			m.expire()
		}
	}
}

// expire deletes the sandboxes idle for longer than IdleExpiry.
func (m *Manager) expire() {
	now := m.opts.Now()
	for _, ms := range m.List() {
		if ms.watches.Load() == 0 && now.Sub(ms.LastUsed()) > m.opts.IdleExpiry {
			m.Delete(ms.id)
		}
	}
}

// idEncoding spells ids in lower-case letters and digits: safe in a URL
// path, a file name and a DNS label.
var idEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// newID returns 128 random bits: ids cannot be guessed, so knowing one is
// the right to use its sandbox.
func newID() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return idEncoding.EncodeToString(b), nil
}

// Managed is a sandbox of a Manager.
type Managed struct {
	id      string
	m       *Manager
	created time.Time
	limiter *limiter
	// lastUsed is the time of the latest request, in Unix nanoseconds.
	lastUsed atomic.Int64
	watches  atomic.Int64

	// token is the sandbox's own bearer token (hosted mode only).
	token string
	// onClose runs once the sandbox is deleted or its manager closed;
	// closed says that happened.
	onCloseMu sync.Mutex
	onClose   []func()
	closed    bool

	// mu guards the sandbox against reset and restore: requests hold it
	// shared for a moment to take the current sandbox, never for long.
	mu          sync.RWMutex
	sb          *Sandbox
	db          *store.DB
	path        string // "" in memory
	controllers Controllers
	retention   time.Duration       // guarded by mu
	version     int                 // kept across resets and restores
	gates       server.FeatureGates // likewise
}

// DefaultSandboxRetention is the history a sandbox keeps unless told
// otherwise: longer than kube-apiserver's five minutes, so that a learner
// can look back at what happened (an object's history, the cluster as it
// was); the sandbox's size limit bounds it (see checkQuota).
const DefaultSandboxRetention = time.Hour

// Retention returns the history the sandbox keeps (0: the store's default).
func (ms *Managed) Retention() time.Duration {
	ms.mu.RLock()
	defer ms.mu.RUnlock()
	return ms.retention
}

// SetRetention changes the history the sandbox keeps (0: the store's
// default; negative: all of it), measured on the sandbox's clock; a reset
// keeps it.
func (ms *Managed) SetRetention(d time.Duration) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	ms.retention = d
	if ms.db != nil {
		ms.db.SetRetention(d)
	}
}

// OnClose has fn run when the sandbox is deleted (or expires) or its
// manager closes, before that returns, so that what serves the sandbox
// alone stops with it; at once if that happened already.
func (ms *Managed) OnClose(fn func()) {
	ms.onCloseMu.Lock()
	if !ms.closed {
		ms.onClose = append(ms.onClose, fn)
		ms.onCloseMu.Unlock()
		return
	}
	ms.onCloseMu.Unlock()
	fn()
}

// Token returns the bearer token of the sandbox's API in hosted mode
// (ManagerOptions.AdminToken), "" otherwise.
func (ms *Managed) Token() string { return ms.token }

// tokenPath is where the sandbox's token is kept, beside its database, so
// that it survives a restart.
func (ms *Managed) tokenPath() string {
	return filepath.Join(ms.m.opts.Dir, "sandbox-"+ms.id+".token")
}

// loadToken reads the sandbox's token in hosted mode, or makes one.
func (ms *Managed) loadToken() error {
	if ms.m.opts.AdminToken == "" {
		return nil
	}
	if b, err := os.ReadFile(ms.tokenPath()); err == nil && len(b) > 0 {
		ms.token = string(b)
		return nil
	}
	token, err := newID()
	if err != nil {
		return err
	}
	ms.token = token
	return os.WriteFile(ms.tokenPath(), []byte(token), 0o600)
}

// access is who may use the sandbox's API: as the template says, and in
// hosted mode the holders of the admin's and the sandbox's tokens, as
// cluster administrators, with anonymous requests refused unless RBAC is
// to decide for them.
func (ms *Managed) access(a server.Access) server.Access {
	if ms.token == "" {
		return a
	}
	tokens := maps.Clone(a.Tokens)
	if tokens == nil {
		tokens = map[string]authn.User{}
	}
	admins := []string{authn.Masters, authn.Authenticated}
	tokens[ms.m.opts.AdminToken] = authn.User{Name: "kubeplay:playground-admin", Groups: admins}
	tokens[ms.token] = authn.User{Name: "kubeplay:sandbox-admin", Groups: admins}
	a.Tokens = tokens
	if a.Anonymous == server.AnonymousAdmin {
		a.Anonymous = server.AnonymousDenied
	}
	return a
}

// ID returns the sandbox's id.
func (ms *Managed) ID() string { return ms.id }

// Created returns when the sandbox was created.
func (ms *Managed) Created() time.Time { return ms.created }

// LastUsed returns when the sandbox last served a request.
func (ms *Managed) LastUsed() time.Time { return time.Unix(0, ms.lastUsed.Load()) }

func (ms *Managed) touch() { ms.lastUsed.Store(ms.m.opts.Now().UnixNano()) }

// Sandbox returns the current sandbox (a reset or restore replaces it).
func (ms *Managed) Sandbox() *Sandbox {
	ms.mu.RLock()
	defer ms.mu.RUnlock()
	return ms.sb
}

// Store returns the current sandbox's database.
func (ms *Managed) Store() *store.DB {
	ms.mu.RLock()
	defer ms.mu.RUnlock()
	return ms.db
}

// Controllers returns the controllers switched off.
func (ms *Managed) Controllers() Controllers {
	ms.mu.RLock()
	defer ms.mu.RUnlock()
	return ms.controllers
}

// SetControllers switches controllers on and off.
func (ms *Managed) SetControllers(c Controllers) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	ms.controllers = c
	if ms.sb != nil {
		ms.sb.SetControllers(c)
	}
}

// SetVersion makes the sandbox emulate Kubernetes release 1.minor, at once
// and across restarts; the error is that of switching it or keeping it.
func (ms *Managed) SetVersion(minor int) error {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	ms.version = minor
	var err error
	if ms.sb != nil {
		err = ms.sb.SetVersion(minor)
	}
	return errors.Join(err, ms.saveEmulationLocked())
}

// SetFeatureGates switches the given feature gates, keeping the others, at
// once and across restarts; the error is that of switching them or
// keeping them.
func (ms *Managed) SetFeatureGates(fg server.FeatureGates) error {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	gates := server.FeatureGates{}
	maps.Copy(gates, ms.gates)
	maps.Copy(gates, fg)
	ms.gates = gates
	var err error
	if ms.sb != nil {
		err = ms.sb.SetFeatureGates(ms.gates)
	}
	return errors.Join(err, ms.saveEmulationLocked())
}

// dbPath is where the sandbox's database file lives.
func (ms *Managed) dbPath() string {
	return filepath.Join(ms.m.opts.Dir, "sandbox-"+ms.id+".db")
}

// openLocked opens a sandbox on the sandbox's database file (existing: keep
// its contents) or a new empty one; it requires ms.mu or a sandbox no one
// else can reach yet.
func (ms *Managed) openLocked(ctx context.Context, existing bool) error {
	dsn := ":memory:"
	if existing || !ms.m.opts.InMemory {
		dsn = ms.dbPath()
	}
	if !existing && dsn != ":memory:" {
		if err := removeDB(dsn); err != nil {
			return err
		}
	}
	// History is kept for the retention on the sandbox's clock, so that
	// advancing the clock expires it as the time passing would.
	clock := &Clock{}
	db, err := store.Open(ctx, dsn, store.Options{Retention: ms.retention, Now: clock.Now})
	if err != nil {
		return err
	}
	opts := ms.m.opts.Sandbox
	opts.Store, opts.Controllers, opts.Clock = db, ms.controllers, clock
	opts.Version, opts.FeatureGates = ms.version, ms.gates
	opts.Access = ms.access(opts.Access)
	sb, err := Open(ctx, opts)
	if err != nil {
		db.Close()
		return err
	}
	ms.sb, ms.db = sb, db
	ms.path = ""
	if dsn != ":memory:" {
		ms.path = dsn
	}
	return nil
}

// restoreLocked opens the sandbox on the snapshot at path, which it moves
// into place after checking it.
func (ms *Managed) restoreLocked(ctx context.Context, path string) error {
	if err := store.CheckFile(ctx, path); err != nil {
		return fmt.Errorf("not a kubeplay snapshot: %w", err)
	}
	if err := removeDB(ms.dbPath()); err != nil {
		return err
	}
	if err := os.Rename(path, ms.dbPath()); err != nil {
		return err
	}
	return ms.openLocked(ctx, true)
}

// Reset replaces the sandbox by an empty one (same id, settings and
// limits); requests in flight on the old one fail, watches on it end.
func (ms *Managed) Reset(ctx context.Context) error {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if err := ms.closeLocked(); err != nil {
		return err
	}
	if ms.path != "" { // a restored snapshot, when new sandboxes are in memory
		if err := removeDB(ms.path); err != nil {
			return err
		}
	}
	return ms.openLocked(ctx, false)
}

// Restore replaces the sandbox's data by the snapshot at path (moved into
// place once checked). A snapshot that does not check leaves the sandbox
// as it was.
func (ms *Managed) Restore(ctx context.Context, path string) error {
	if err := store.CheckFile(ctx, path); err != nil {
		return fmt.Errorf("not a kubeplay snapshot: %w", err)
	}
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if err := ms.closeLocked(); err != nil {
		return err
	}
	return ms.restoreLocked(ctx, path)
}

// Snapshot writes a consistent copy of the sandbox's database to path.
func (ms *Managed) Snapshot(ctx context.Context, path string) error {
	return ms.Store().Snapshot(ctx, path)
}

// Compact drops the sandbox's history now, as the store does with old
// history on its own; it returns the new horizon.
func (ms *Managed) Compact(ctx context.Context) (int64, error) {
	db := ms.Store()
	if db == nil {
		return 0, errRestoring
	}
	rev, err := db.CurrentRevision(ctx)
	if err == nil {
		err = db.Compact(ctx, rev)
	}
	return rev, err
}

// AdvanceClock moves the sandbox's clock forward by d; the history older
// than the retention on the new time is compacted at once, as the time
// passing would have.
func (ms *Managed) AdvanceClock(ctx context.Context, d time.Duration) error {
	ms.mu.RLock()
	sb, db := ms.sb, ms.db
	ms.mu.RUnlock()
	if sb == nil {
		return errRestoring
	}
	sb.AdvanceClock(d)
	return db.CompactExpired(ctx)
}

// errRestoring: a reset or restore is replacing the sandbox.
var errRestoring = errors.New("the sandbox is being restored")

// SnapshotPath returns a fresh path in the manager's directory for a
// snapshot being uploaded or downloaded.
func (m *Manager) SnapshotPath() (string, error) {
	id, err := newID()
	if err != nil {
		return "", err
	}
	return filepath.Join(m.opts.Dir, "snapshot-"+id+".db"), nil
}

func (ms *Managed) closeLocked() error {
	if ms.sb == nil {
		return nil
	}
	err := ms.sb.Close()
	ms.sb, ms.db = nil, nil
	return err
}

// close stops the sandbox, deleting its database if remove.
func (ms *Managed) close(remove bool) error {
	ms.onCloseMu.Lock()
	hooks := ms.onClose
	ms.onClose, ms.closed = nil, true
	ms.onCloseMu.Unlock()
	for _, fn := range hooks {
		fn()
	}
	ms.mu.Lock()
	defer ms.mu.Unlock()
	err := ms.closeLocked()
	if remove && ms.path != "" {
		err = errors.Join(err, removeDB(ms.path))
	}
	if remove && ms.token != "" {
		err = errors.Join(err, os.Remove(ms.tokenPath()))
	}
	if remove {
		if e := os.Remove(ms.emulationPath()); !errors.Is(e, os.ErrNotExist) {
			err = errors.Join(err, e)
		}
	}
	return err
}

// besideDB reports whether name is a file kept beside a sandbox's database
// (its token or emulation), and the database's name without ".db".
func besideDB(name string) (db string, ok bool) {
	for _, suffix := range []string{".token", ".emulation.json"} {
		if db, ok := strings.CutSuffix(name, suffix); ok {
			return db, true
		}
	}
	return "", false
}

// removeDB deletes a database file and its WAL files.
func removeDB(path string) error {
	var errs []error
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Handler returns the sandbox's Kubernetes API, rooted at "/" (mount it
// under the sandbox's prefix with http.StripPrefix), within the sandbox's
// limits.
func (ms *Managed) Handler() http.Handler { return http.HandlerFunc(ms.serve) }
