package server

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"kubeplay/server/catalog"
	"kubeplay/server/releases"
)

// RuntimeConfig switches group versions and single resources on and off, as
// kube-apiserver's --runtime-config: its keys are "api/all", "api/ga",
// "api/beta", "api/alpha", a group version ("batch/v1"; "v1" or "api/v1"
// for the core group) or a resource of one ("batch/v1/cronjobs"). The most
// specific key that applies wins; without one, what the emulated release
// serves by default is served (its GA group versions, and the betas of
// releases before v1.24); nothing a release did not have is served. A
// switched-off group version answers 404 "404 page not found" and
// leaves discovery and OpenAPI; a switched-off resource of a served group
// version answers kube-apiserver's 404 Status.
type RuntimeConfig map[string]bool

// ParseRuntimeConfig parses a --runtime-config value: comma-separated
// key=value pairs, the value true or false (true when left out).
func ParseRuntimeConfig(s string) (RuntimeConfig, error) {
	rc := RuntimeConfig{}
	if strings.TrimSpace(s) == "" {
		return rc, nil
	}
	known := map[string]bool{}
	for _, r := range catalog.Builtin(func(*catalog.Resource) bool { return true }) {
		gv := r.GroupVersionResource().GroupVersion().String()
		known[gv] = true
		known[gv+"/"+r.Resource] = true
	}
	for _, kv := range strings.Split(s, ",") {
		key, value, hasValue := strings.Cut(strings.TrimSpace(kv), "=")
		on := true
		if hasValue {
			var err error
			if on, err = strconv.ParseBool(value); err != nil {
				return nil, fmt.Errorf("invalid value of %s: %s, err: %v", key, value, err)
			}
		}
		key = strings.TrimPrefix(key, "api/")
		switch {
		case key == "all" || key == "ga" || key == "beta" || key == "alpha":
		case known[key]:
		default:
			return nil, fmt.Errorf("unknown or unimplemented group version or resource %q", key)
		}
		rc[key] = on
	}
	return rc, nil
}

// stability is the level of a version: ga, beta or alpha.
var stability = regexp.MustCompile(`^v\d+(alpha|beta)?`)

// Enables reports whether rc serves r in Kubernetes release 1.minor: never
// if that release did not have it, else as rc says, else if the release
// served it by default.
func (rc RuntimeConfig) Enables(r *catalog.Resource, minor int) bool {
	rel := releases.Lookup(r.Group, r.Version, r.Resource)
	if rel == nil || !rel.In(minor) {
		return false
	}
	gv := schema.GroupVersion{Group: r.Group, Version: r.Version}.String()
	level := "ga"
	if m := stability.FindStringSubmatch(r.Version); m != nil && m[1] != "" {
		level = m[1]
	}
	for _, key := range []string{gv + "/" + r.Resource, gv, level, "all"} {
		if on, ok := rc[key]; ok {
			return on
		}
	}
	return rel.DefaultIn(minor)
}

// apiSettings decide what the server serves: the emulated release, the
// runtime configuration and the feature gates.
type apiSettings struct {
	minor int
	rc    RuntimeConfig
	gates FeatureGates
}

// SetRuntimeConfig switches the served group versions and resources at
// once: discovery, OpenAPI, the handlers and the local APIServices follow.
// Objects of a switched-off type stay stored, and are served again when it
// is switched on. The error is the store's, from the APIServices' update.
func (s *Server) SetRuntimeConfig(rc RuntimeConfig) error {
	return s.setAPI(context.Background(), func(a *apiSettings) { a.rc = rc })
}

// SetVersion makes the server emulate Kubernetes release 1.minor (see
// releases.Parse) at once: it serves the resources that release served by
// default (or as the runtime configuration says), answers 404 for the
// others exactly as for a path it does not know, keeps an APIService for
// each group version it serves, and /version reports it. Objects stay
// stored whatever their types, and are served again by a release that
// serves their type. The error is the store's, from the APIServices'
// update.
func (s *Server) SetVersion(minor int) error {
	return s.setAPI(context.Background(), func(a *apiSettings) { a.minor = minor })
}

// Version returns the minor version of the Kubernetes release the server
// emulates.
func (s *Server) Version() int { return s.api.Load().minor }

// setAPI changes the settings, and what is served with them: the catalog,
// and the local APIServices, as kube-apiserver restarted with the new
// settings registers them.
func (s *Server) setAPI(ctx context.Context, change func(*apiSettings)) error {
	s.apiMu.Lock()
	defer s.apiMu.Unlock()
	a := *s.api.Load()
	change(&a)
	builtin := a.builtin()
	return s.applyAPI(ctx, a, builtin, localAPIServices(builtin))
}

// applyAPI makes a the settings, serving builtin, a.builtin(), whose local
// APIServices are apiServices: New has them already from its bootstrap.
// The caller holds apiMu.
func (s *Server) applyAPI(ctx context.Context, a apiSettings, builtin []catalog.Resource, apiServices []object) error {
	s.setBuiltin(a, builtin)
	return s.reg.syncLocalAPIServices(ctx, apiServices)
}

// setBuiltin is applyAPI less the local APIServices' sync.
func (s *Server) setBuiltin(a apiSettings, builtin []catalog.Resource) {
	s.api.Store(&a)
	s.catalog.SetBuiltin(builtin)
}

// builtin returns the built-in resources served with a.
func (a *apiSettings) builtin() []catalog.Resource {
	return catalog.Builtin(func(r *catalog.Resource) bool { return served(r) && a.rc.Enables(r, a.minor) })
}

// resourcesOff lists the resources of gv that the emulated release or the
// runtime configuration switch off one by one, sorted, which its OpenAPI
// document leaves out.
func (s *Server) resourcesOff(gv schema.GroupVersion) []string {
	a := s.api.Load()
	var off []string
	for _, r := range catalog.Builtin(func(r *catalog.Resource) bool { return r.Group == gv.Group && r.Version == gv.Version }) {
		if !a.rc.Enables(&r, a.minor) {
			off = append(off, r.Resource)
		}
	}
	slices.Sort(off)
	return off
}

// warnDeprecated adds the warning kube-apiserver adds to every request to a
// deprecated version of a built-in resource.
func (s *Server) warnDeprecated(w http.ResponseWriter, res *catalog.Resource) {
	if res.Custom != nil {
		return
	}
	if rel := releases.Lookup(res.Group, res.Version, res.Resource); rel != nil {
		if msg := rel.Warning(s.Version()); msg != "" {
			w.Header().Add("Warning", "299 - "+strconv.Quote(msg))
		}
	}
}
