// Package api serves the playground API: JSON over HTTP, versioned under
// /playground/v1/, to create, script and inspect sandboxes (see
// openapi.json), and each sandbox's Kubernetes API under
// /sandboxes/<id>/.
package api

import (
	"context"
	"crypto/subtle"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"kubeplay/playground"
	"kubeplay/playground/journal"
	"kubeplay/playground/scenario"
	"kubeplay/server"
	"kubeplay/server/releases"
)

// Prefix is where the playground API is served.
const Prefix = "/playground/v1"

//go:embed openapi.json
var openapiDoc []byte

// snapshotType is the media type of snapshots (SQLite database files).
const snapshotType = "application/vnd.sqlite3"

// Handler serves the playground API and the sandboxes' Kubernetes APIs.
type Handler struct {
	m      *playground.Manager
	routes func() *http.ServeMux
	// CACert is the PEM of the certificate the server presents over
	// HTTPS, for the kubeconfigs it hands out (nil: the system's roots).
	CACert []byte
	// Addresses, when set, gives each sandbox a port of its own for the
	// kubeconfigs (nil: they name /sandboxes/<id> here).
	Addresses *Addresses
}

// New returns the handler of m's sandboxes. Mount it at "/playground/v1/"
// and "/sandboxes/".
func New(m *playground.Manager) *Handler {
	h := &Handler{m: m}
	h.routes = sync.OnceValue(h.newMux)
	return h
}

// newMux routes the API, at its first request rather than at the server's
// start: http.ServeMux records where each pattern was registered
// (runtime.Caller), which reads symbol tables of the binary that the
// server need not have in memory to become ready.
func (h *Handler) newMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+Prefix+"/openapi.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(openapiDoc)
	})
	mux.HandleFunc("GET "+Prefix+"/scenarios", h.scenarios)
	mux.HandleFunc("POST "+Prefix+"/sandboxes", h.create)
	mux.HandleFunc("GET "+Prefix+"/sandboxes", h.list)
	mux.HandleFunc("GET "+Prefix+"/sandboxes/{id}", h.with(h.get))
	mux.HandleFunc("DELETE "+Prefix+"/sandboxes/{id}", h.delete)
	mux.HandleFunc("POST "+Prefix+"/sandboxes/{id}/reset", h.with(h.reset))
	mux.HandleFunc("GET "+Prefix+"/sandboxes/{id}/kubeconfig", h.with(h.kubeconfig))
	mux.HandleFunc("GET "+Prefix+"/sandboxes/{id}/snapshot", h.with(h.snapshot))
	mux.HandleFunc("PUT "+Prefix+"/sandboxes/{id}/snapshot", h.with(h.restore))
	mux.HandleFunc("GET "+Prefix+"/sandboxes/{id}/settings", h.with(h.settings))
	mux.HandleFunc("PATCH "+Prefix+"/sandboxes/{id}/settings", h.with(h.patchSettings))
	mux.HandleFunc("POST "+Prefix+"/sandboxes/{id}/compact", h.with(h.compact))
	mux.HandleFunc("POST "+Prefix+"/sandboxes/{id}/clock", h.with(h.advanceClock))
	mux.HandleFunc("POST "+Prefix+"/sandboxes/{id}/run", h.with(h.run))
	mux.HandleFunc("GET "+Prefix+"/sandboxes/{id}/journal", h.with(h.journal))
	mux.HandleFunc("GET "+Prefix+"/sandboxes/{id}/journal/live", h.with(h.live))
	mux.HandleFunc("GET "+Prefix+"/sandboxes/{id}/deletions", h.with(h.deletions))
	mux.HandleFunc(Prefix+"/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "no such endpoint: %s %s (the API is described at %s/openapi.json)", r.Method, r.URL.Path, Prefix)
	})
	mux.HandleFunc("/sandboxes/{id}/", h.kube)
	return mux
}

// ServeHTTP serves the playground API, and in hosted mode
// (ManagerOptions.AdminToken) only to the holder of the admin token (its
// OpenAPI document aside); each sandbox's Kubernetes API checks the tokens
// it accepts itself.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if admin := h.m.AdminToken(); admin != "" && strings.HasPrefix(r.URL.Path, Prefix+"/") && r.URL.Path != Prefix+"/openapi.json" {
		token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || subtle.ConstantTimeCompare([]byte(strings.TrimSpace(token)), []byte(admin)) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="kubeplay playground API"`)
			writeError(w, http.StatusUnauthorized, "the playground API needs the admin token: Authorization: Bearer <token>")
			return
		}
	}
	h.routes().ServeHTTP(w, r)
}

// kube serves a sandbox's Kubernetes API, rooted at /sandboxes/<id>.
func (h *Handler) kube(w http.ResponseWriter, r *http.Request) {
	ms, err := h.m.Get(r.PathValue("id"))
	if err != nil {
		// An unknown sandbox looks like a path kube-apiserver does not
		// serve, so that probing learns nothing.
		http.NotFound(w, r)
		return
	}
	http.StripPrefix("/sandboxes/"+ms.ID(), ms.Handler()).ServeHTTP(w, r)
}

// with looks up the sandbox of the path for fn.
func (h *Handler) with(fn func(http.ResponseWriter, *http.Request, *playground.Managed)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ms, err := h.m.Get(r.PathValue("id"))
		if err != nil {
			writeError(w, http.StatusNotFound, "sandbox %q not found (deleted, expired, or never created)", r.PathValue("id"))
			return
		}
		fn(w, r, ms)
	}
}

// Sandbox is a sandbox as the API shows it.
type Sandbox struct {
	ID       string    `json:"id"`
	Created  time.Time `json:"created"`
	LastUsed time.Time `json:"lastUsed"`
	// Server is the path of its Kubernetes API (append it to the
	// playground's URL).
	Server string `json:"server"`
	// Token is the bearer token of its Kubernetes API, in hosted mode.
	Token    string            `json:"token,omitempty"`
	Settings Settings          `json:"settings"`
	Limits   playground.Limits `json:"limits"`
	Usage    Usage             `json:"usage"`
	// Scenario is set in the answer to a create with a scenario.
	Scenario *ScenarioRun `json:"scenario,omitempty"`
}

// Usage is what a sandbox holds now.
type Usage struct {
	Revision int64 `json:"revision"`
	Objects  int64 `json:"objects"`
	Bytes    int64 `json:"bytes"`
}

// Settings are a sandbox's switches.
type Settings struct {
	// Controllers says which simulated controllers run.
	Controllers ControllerSettings `json:"controllers"`
	// FinalizerBots replace the sandbox's finalizer bots when set.
	FinalizerBots *[]FinalizerBot `json:"finalizerBots,omitempty"`
	// Clock is the sandbox's clock (read only: POST .../clock advances it).
	Clock *Clock `json:"clock,omitempty"`
	// Retention is how long the sandbox keeps history, on its clock (a Go
	// duration; negative such as "-1s": forever).
	Retention string `json:"retention,omitempty"`
	// EmulatedVersion is the Kubernetes release whose API the sandbox
	// serves ("1.21"; from 1.16 to 1.35), as kube-apiserver's
	// --emulated-version; changing it takes effect at once.
	EmulatedVersion string `json:"emulatedVersion,omitempty"`
	// FeatureGates are kube-apiserver's feature gates kubeplay follows
	// (AllowUnsafeMalformedObjectDeletion, CBORServingAndStorage,
	// WatchList), by name: the answer lists those the emulated release has,
	// a request sets those it names; a change takes effect at once.
	FeatureGates map[string]bool `json:"featureGates,omitempty"`
}

// FinalizerBot removes Finalizer from objects being deleted, Delay (a Go
// duration: "5s", "1m30s") after their deletion was requested.
type FinalizerBot struct {
	Finalizer string `json:"finalizer"`
	Delay     string `json:"delay"`
}

// Clock is a sandbox's time.
type Clock struct {
	Now time.Time `json:"now"`
	// Offset is how far it runs ahead of real time (a Go duration).
	Offset string `json:"offset"`
}

// ControllerSettings: true runs the (simulated) controller.
type ControllerSettings = playground.ControllerSwitches

func (h *Handler) describe(ctx context.Context, ms *playground.Managed) Sandbox {
	sb := Sandbox{ID: ms.ID(), Created: ms.Created().UTC(), LastUsed: ms.LastUsed().UTC(), Server: "/sandboxes/" + ms.ID(),
		Token: ms.Token(), Settings: settingsOf(ms), Limits: h.m.Limits()}
	if db := ms.Store(); db != nil {
		sb.Usage.Revision, _ = db.CurrentRevision(ctx)
		sb.Usage.Objects, _ = playground.CountObjects(ctx, db)
		sb.Usage.Bytes, _ = db.Size(ctx)
	}
	return sb
}

// maxSettingsBody bounds the JSON bodies of the playground API.
const maxSettingsBody = 64 << 10

// create makes a sandbox: empty, with the settings of a JSON body, from a
// snapshot (a body of type application/vnd.sqlite3), or set up by a
// scenario (?scenario=<built-in name>, or a YAML body) whose step results
// the answer includes.
func (h *Handler) create(w http.ResponseWriter, r *http.Request) {
	var opts playground.CreateOptions
	var setup *scenario.Scenario
	if name := r.URL.Query().Get("scenario"); name != "" || strings.HasPrefix(r.Header.Get("Content-Type"), "application/yaml") {
		sc, ok := scenarioOf(w, r, name)
		if !ok {
			return
		}
		setup = sc
	} else if isSnapshot(r) {
		path, ok := h.receiveSnapshot(w, r)
		if !ok {
			return
		}
		defer os.Remove(path) // gone already once restored
		opts.Snapshot = path
	} else {
		var s Settings
		if !decodeJSON(w, r, &s) {
			return
		}
		var err error
		if opts.Controllers, err = s.controllers(playground.Controllers{}); err != nil {
			writeError(w, http.StatusBadRequest, "%v", err)
			return
		}
		if opts.Retention, err = s.retention(); err == nil {
			if opts.Version, err = s.version(); err == nil {
				opts.FeatureGates, err = s.featureGates()
			}
		}
		if err != nil {
			writeError(w, http.StatusBadRequest, "%v", err)
			return
		}
	}
	ms, err := h.m.Create(r.Context(), opts)
	switch {
	case errors.Is(err, playground.ErrTooManySandboxes):
		w.Header().Set("Retry-After", "60")
		writeError(w, http.StatusTooManyRequests, "%v", err)
		return
	case err != nil && opts.Snapshot != "":
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	case err != nil:
		writeError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	created := h.describe(r.Context(), ms)
	if setup != nil {
		created.Scenario = &ScenarioRun{Name: setup.Name, Steps: []scenario.StepResult{}}
		created.Scenario.Passed, err = scenario.Run(r.Context(), setup, scenario.SandboxTarget(ms), func(res scenario.StepResult) {
			created.Scenario.Steps = append(created.Scenario.Steps, res)
		})
		if err != nil {
			created.Scenario.Error = err.Error()
		}
		created.Usage = h.describe(r.Context(), ms).Usage
	}
	w.Header().Set("Location", Prefix+"/sandboxes/"+ms.ID())
	writeJSON(w, http.StatusCreated, created)
}

// ScenarioRun is the outcome of the scenario a sandbox was created with.
type ScenarioRun struct {
	Name   string                `json:"name"`
	Passed bool                  `json:"passed"`
	Error  string                `json:"error,omitempty"`
	Steps  []scenario.StepResult `json:"steps"`
}

func (h *Handler) list(w http.ResponseWriter, r *http.Request) {
	items := []Sandbox{}
	for _, ms := range h.m.List() {
		items = append(items, h.describe(r.Context(), ms))
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": items})
}

func (h *Handler) get(w http.ResponseWriter, r *http.Request, ms *playground.Managed) {
	writeJSON(w, http.StatusOK, h.describe(r.Context(), ms))
}

func (h *Handler) delete(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if err := h.m.Delete(id); errors.Is(err, playground.ErrNoSandbox) {
		writeError(w, http.StatusNotFound, "sandbox %q not found (deleted, expired, or never created)", id)
		return
	} else if err != nil {
		writeError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (h *Handler) reset(w http.ResponseWriter, r *http.Request, ms *playground.Managed) {
	if err := ms.Reset(r.Context()); err != nil {
		writeError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	writeJSON(w, http.StatusOK, h.describe(r.Context(), ms))
}

// kubeconfig answers a kubeconfig whose server is the sandbox's own address
// (or its URL here) as the client reached this server; its user's token is
// the sandbox's in hosted mode, else the bearer token the request carried,
// if any.
func (h *Handler) kubeconfig(w http.ResponseWriter, r *http.Request, ms *playground.Managed) {
	server, err := h.serverURL(r, ms)
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, "opening the sandbox's address: %v", err)
		return
	}
	token, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if ms.Token() != "" {
		token = ms.Token()
	}
	w.Header().Set("Content-Type", "application/yaml")
	o := playground.KubeconfigOptions{Server: server, Token: strings.TrimSpace(token)}
	if r.TLS != nil {
		o.CAData = h.CACert
	}
	io.WriteString(w, playground.Kubeconfig(o))
}

func (h *Handler) snapshot(w http.ResponseWriter, r *http.Request, ms *playground.Managed) {
	path, err := h.m.SnapshotPath()
	if err != nil {
		writeError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	defer os.Remove(path)
	if err := ms.Snapshot(r.Context(), path); err != nil {
		writeError(w, http.StatusInternalServerError, "snapshot: %v", err)
		return
	}
	f, err := os.Open(path)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	defer f.Close()
	w.Header().Set("Content-Type", snapshotType)
	w.Header().Set("Content-Disposition", `attachment; filename="sandbox-`+ms.ID()+`.db"`)
	http.ServeContent(w, r, "", time.Time{}, f)
}

func (h *Handler) restore(w http.ResponseWriter, r *http.Request, ms *playground.Managed) {
	if !isSnapshot(r) {
		writeError(w, http.StatusUnsupportedMediaType, "a snapshot is uploaded as %s, not %q", snapshotType, r.Header.Get("Content-Type"))
		return
	}
	path, ok := h.receiveSnapshot(w, r)
	if !ok {
		return
	}
	defer os.Remove(path)
	if err := ms.Restore(r.Context(), path); err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	writeJSON(w, http.StatusOK, h.describe(r.Context(), ms))
}

func isSnapshot(r *http.Request) bool {
	return strings.HasPrefix(r.Header.Get("Content-Type"), snapshotType)
}

// receiveSnapshot stores an uploaded snapshot, at most the sandbox's
// byte limit, in a file of its own.
func (h *Handler) receiveSnapshot(w http.ResponseWriter, r *http.Request) (string, bool) {
	path, err := h.m.SnapshotPath()
	if err != nil {
		writeError(w, http.StatusInternalServerError, "%v", err)
		return "", false
	}
	f, err := os.Create(path)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "%v", err)
		return "", false
	}
	limit := h.m.Limits().Bytes
	if limit < 0 {
		limit = 1 << 40
	}
	n, err := io.Copy(f, io.LimitReader(r.Body, limit+1))
	err = errors.Join(err, f.Close())
	switch {
	case err != nil:
		writeError(w, http.StatusBadRequest, "reading the snapshot: %v", err)
	case n > limit:
		err = errors.New("too large")
		writeError(w, http.StatusRequestEntityTooLarge, "the snapshot is larger than a sandbox may be (%d bytes)", limit)
	}
	if err != nil {
		os.Remove(path)
		return "", false
	}
	return path, true
}

func (h *Handler) settings(w http.ResponseWriter, r *http.Request, ms *playground.Managed) {
	writeJSON(w, http.StatusOK, settingsOf(ms))
}

func settingsOf(ms *playground.Managed) Settings {
	c := ms.Controllers()
	bots := []FinalizerBot{}
	for _, b := range c.FinalizerBots {
		bots = append(bots, FinalizerBot{Finalizer: b.Finalizer, Delay: b.Delay.String()})
	}
	s := Settings{Controllers: playground.SwitchesOf(c), FinalizerBots: &bots, Retention: ms.Retention().String()}
	if ms.Retention() == 0 {
		s.Retention = playground.DefaultSandboxRetention.String()
	}
	if sb := ms.Sandbox(); sb != nil {
		s.Clock = &Clock{Now: sb.Clock().Now().UTC(), Offset: sb.Clock().Offset().String()}
		s.EmulatedVersion = fmt.Sprintf("1.%d", sb.Version())
		s.FeatureGates = sb.FeatureGates()
	}
	return s
}

// featureGates are the gates s sets, checked.
func (s Settings) featureGates() (server.FeatureGates, error) {
	var kv []string
	for name, on := range s.FeatureGates {
		kv = append(kv, fmt.Sprintf("%s=%t", name, on))
	}
	fg, err := server.ParseFeatureGates(strings.Join(kv, ","))
	if err != nil {
		return nil, fmt.Errorf("featureGates: %w", err)
	}
	return fg, nil
}

// version is the minor version s.EmulatedVersion names (0 if unset).
func (s Settings) version() (int, error) {
	if s.EmulatedVersion == "" {
		return 0, nil
	}
	minor, err := releases.Parse(s.EmulatedVersion)
	if err != nil {
		return 0, fmt.Errorf("emulatedVersion: %w", err)
	}
	return minor, nil
}

// controllers are the controllers s asks for, starting from c.
func (s Settings) controllers(c playground.Controllers) (playground.Controllers, error) {
	c, err := s.Controllers.Apply(c)
	if err != nil {
		return c, err
	}
	if s.Clock != nil {
		return c, errors.New("clock: advance it with POST .../clock")
	}
	if s.FinalizerBots != nil {
		c.FinalizerBots = nil
		for _, b := range *s.FinalizerBots {
			d, err := time.ParseDuration(b.Delay)
			if err != nil || d < 0 || b.Finalizer == "" {
				return c, fmt.Errorf("finalizerBots: want a finalizer and a delay such as \"5s\", not %q and %q", b.Finalizer, b.Delay)
			}
			c.FinalizerBots = append(c.FinalizerBots, playground.FinalizerBot{Finalizer: b.Finalizer, Delay: d})
		}
	}
	return c, nil
}

// retention is the retention s asks for (0: none).
func (s Settings) retention() (time.Duration, error) {
	if s.Retention == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s.Retention)
	if err != nil || d == 0 {
		return 0, fmt.Errorf("retention: want a duration such as \"10m\" (negative: keep all history), not %q", s.Retention)
	}
	return d, nil
}

// advanceClock moves the sandbox's clock forward by the body's advance (a
// Go duration); what became due (grace periods, finalizer bots, pod
// phases) happens at once.
func (h *Handler) advanceClock(w http.ResponseWriter, r *http.Request, ms *playground.Managed) {
	var body struct {
		Advance string `json:"advance"`
	}
	if !decodeJSON(w, r, &body) {
		return
	}
	d, err := time.ParseDuration(body.Advance)
	if err != nil || d < 0 {
		writeError(w, http.StatusBadRequest, "advance: want a positive duration such as \"30s\", not %q", body.Advance)
		return
	}
	if err := ms.AdvanceClock(r.Context(), d); err != nil {
		writeError(w, http.StatusServiceUnavailable, "%v", err)
		return
	}
	writeJSON(w, http.StatusOK, settingsOf(ms).Clock)
}

// patchSettings merges the settings of the body (a JSON merge patch) into
// the sandbox's.
func (h *Handler) patchSettings(w http.ResponseWriter, r *http.Request, ms *playground.Managed) {
	var s Settings
	if !decodeJSON(w, r, &s) {
		return
	}
	c, err := s.controllers(ms.Controllers())
	var retention time.Duration
	if err == nil {
		retention, err = s.retention()
	}
	var minor int
	if err == nil {
		minor, err = s.version()
	}
	var gates server.FeatureGates
	if err == nil {
		gates, err = s.featureGates()
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	ms.SetControllers(c)
	if retention != 0 {
		ms.SetRetention(retention)
	}
	if minor != 0 {
		err = ms.SetVersion(minor)
	}
	if len(gates) > 0 && err == nil {
		err = ms.SetFeatureGates(gates)
	}
	if err != nil {
		writeError(w, http.StatusInternalServerError, "keeping the settings: %v", err)
		return
	}
	h.settings(w, r, ms)
}

// compact drops the sandbox's history now, as the store does with old
// history on its own: reads and watches at older revisions answer 410 Gone.
func (h *Handler) compact(w http.ResponseWriter, r *http.Request, ms *playground.Managed) {
	rev, err := ms.Compact(r.Context())
	if err != nil {
		writeError(w, http.StatusInternalServerError, "compact: %v", err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]int64{"compactedRevision": rev})
}

// journal answers a page of the request journal: ?after=<seq>&limit=<n>.
func (h *Handler) journal(w http.ResponseWriter, r *http.Request, ms *playground.Managed) {
	after, limit, ok := pageParams(w, r)
	if !ok {
		return
	}
	items, oldest := ms.Sandbox().Journal().Page(after, limit)
	if items == nil {
		items = []journal.Entry{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": items, "oldest": oldest})
}

func pageParams(w http.ResponseWriter, r *http.Request) (after int64, limit int, ok bool) {
	q := r.URL.Query()
	if v := q.Get("after"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			writeError(w, http.StatusBadRequest, "after: want a sequence number, not %q", v)
			return 0, 0, false
		}
		after = n
	}
	limit = 100
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			writeError(w, http.StatusBadRequest, "limit: want 1 to 1000, not %q", v)
			return 0, 0, false
		}
		limit = n
	}
	return after, limit, true
}

const (
	pingInterval = 30 * time.Second
	writeTimeout = 10 * time.Second
)

// upgrader checks the Origin header against the Host (gorilla's default),
// so that other sites cannot read a journal through a visitor's browser.
var upgrader = websocket.Upgrader{}

// live streams the journal over a WebSocket: first the entries after
// ?after=<seq>, then every update (journal.Update as JSON) as it happens.
// A client that falls behind is closed with code 1013 (try again later)
// and resumes from the last sequence number it saw.
func (h *Handler) live(w http.ResponseWriter, r *http.Request, ms *playground.Managed) {
	after, _, ok := pageParams(w, r)
	if !ok {
		return
	}
	if !websocket.IsWebSocketUpgrade(r) {
		writeError(w, http.StatusBadRequest, "this is a WebSocket endpoint")
		return
	}
	j := ms.Sandbox().Journal()
	conn, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return // Upgrade answered the client
	}
	defer conn.Close()
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	conn.SetReadDeadline(time.Now().Add(2 * pingInterval))
	conn.SetPongHandler(func(string) error { return conn.SetReadDeadline(time.Now().Add(2 * pingInterval)) })
	go func() { // reads only to process pongs and notice the client leaving
		defer cancel()
		for {
			if _, _, err := conn.ReadMessage(); err != nil {
				return
			}
		}
	}()
	sub := j.Follow(after)
	defer sub.Stop()
	ping := time.NewTicker(pingInterval)
	defer ping.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ping.C:
			if conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(writeTimeout)) != nil {
				return
			}
		case u, ok := <-sub.Updates():
			if !ok {
				msg := websocket.FormatCloseMessage(websocket.CloseTryAgainLater, "fell behind; reconnect")
				conn.WriteControl(websocket.CloseMessage, msg, time.Now().Add(writeTimeout))
				return
			}
			conn.SetWriteDeadline(time.Now().Add(writeTimeout))
			if conn.WriteJSON(u) != nil {
				return
			}
		}
	}
}

// deletions answers the deletion timeline of one object: ?uid=<uid>, or
// ?resource=<resource>&group=<group>&namespace=<ns>&name=<name> for the
// latest object of that name; with neither, the objects of the most recent
// timelines (?limit=, default 100).
func (h *Handler) deletions(w http.ResponseWriter, r *http.Request, ms *playground.Managed) {
	q := r.URL.Query()
	dj := ms.Sandbox().DeletionJournal()
	var tl any
	switch {
	case q.Get("uid") != "":
		tl = dj.Timeline(q.Get("uid"))
	case q.Get("resource") != "" && q.Get("name") != "":
		tl = dj.TimelineOf(schema.GroupResource{Group: q.Get("group"), Resource: q.Get("resource")}, q.Get("namespace"), q.Get("name"))
	case q.Get("resource") == "" && q.Get("name") == "":
		_, limit, ok := pageParams(w, r)
		if !ok {
			return
		}
		objects := dj.Recent(limit)
		if objects == nil {
			objects = []server.ObjectRef{}
		}
		writeJSON(w, http.StatusOK, map[string]any{"objects": objects})
		return
	default:
		writeError(w, http.StatusBadRequest, "name the object: ?uid=<uid>, or ?resource=&name= (with group= and namespace= where they apply)")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"events": tl})
}

// Error is the body of every error of the playground API.
type Error struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func writeError(w http.ResponseWriter, code int, format string, args ...any) {
	writeJSON(w, code, map[string]Error{"error": {Code: code, Message: fmt.Sprintf(format, args...)}})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

// decodeJSON reads an optional JSON body into v; it answers the error
// itself.
func decodeJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxSettingsBody+1))
	if err != nil {
		writeError(w, http.StatusBadRequest, "reading the body: %v", err)
		return false
	}
	if len(body) > maxSettingsBody {
		writeError(w, http.StatusRequestEntityTooLarge, "the body is larger than %d bytes", maxSettingsBody)
		return false
	}
	if len(strings.TrimSpace(string(body))) == 0 {
		return true
	}
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		writeError(w, http.StatusBadRequest, "the body is not valid JSON for this request: %v", err)
		return false
	}
	return true
}

// maxScenarioBody bounds an uploaded scenario.
const maxScenarioBody = 1 << 20

// run runs a scenario (the YAML body, or ?builtin=<name>) in the sandbox
// and streams its steps as they end, one JSON object a line
// (scenario.StepResult), then {"passed": true|false}.
func (h *Handler) run(w http.ResponseWriter, r *http.Request, ms *playground.Managed) {
	sc, ok := scenarioOf(w, r, r.URL.Query().Get("builtin"))
	if !ok {
		return
	}
	target := scenario.SandboxTarget(ms)
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	enc := json.NewEncoder(w)
	flusher, _ := w.(http.Flusher)
	passed, err := scenario.Run(r.Context(), sc, target, func(res scenario.StepResult) {
		enc.Encode(res)
		if flusher != nil {
			flusher.Flush()
		}
	})
	end := map[string]any{"passed": passed}
	if err != nil {
		end["error"] = err.Error()
	}
	enc.Encode(end)
}

// scenarios lists the built-in scenarios, whole.
func (h *Handler) scenarios(w http.ResponseWriter, r *http.Request) {
	all, err := scenario.Builtin()
	if err != nil {
		writeError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": all})
}

// scenarioOf reads the built-in scenario named builtin, or else the
// request's YAML body; it answers the error itself.
func scenarioOf(w http.ResponseWriter, r *http.Request, builtin string) (*scenario.Scenario, bool) {
	if builtin != "" {
		all, err := scenario.Builtin()
		if err != nil {
			writeError(w, http.StatusInternalServerError, "%v", err)
			return nil, false
		}
		for _, b := range all {
			if b.Name == builtin {
				return b, true
			}
		}
		writeError(w, http.StatusNotFound, "no built-in scenario %q", builtin)
		return nil, false
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxScenarioBody+1))
	if err != nil || len(body) > maxScenarioBody {
		writeError(w, http.StatusRequestEntityTooLarge, "a scenario is at most %d bytes", maxScenarioBody)
		return nil, false
	}
	sc, err := scenario.Parse(body)
	if err != nil {
		writeError(w, http.StatusBadRequest, "not a scenario: %v", err)
		return nil, false
	}
	return sc, true
}
