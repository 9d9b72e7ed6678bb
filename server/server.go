package server

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"kubeplay/server/authn"
	"kubeplay/server/authz"
	"kubeplay/server/catalog"
	"kubeplay/server/encoding"
	"kubeplay/server/openapi"
	"kubeplay/server/releases"
	"kubeplay/store"
)

// Options configure a Server.
type Options struct {
	// Store holds the objects; the server does not close it.
	Store store.Store
	// Now is the clock for timestamps (default time.Now).
	Now func() time.Time
	// FeatureGates are kube-apiserver's feature gates kubeplay follows (see
	// SetFeatureGates); nil leaves each at its default in the emulated
	// release.
	FeatureGates FeatureGates
	// RuntimeConfig switches group versions and resources on and off (see
	// SetRuntimeConfig); nil serves the default ones.
	RuntimeConfig RuntimeConfig
	// Version is the minor version of the Kubernetes release the server
	// emulates (see SetVersion); 0 is releases.Newest.
	Version int
	// OnDeletion, if set, is told every phase of every object's deletion
	// (see DeletionEvent), synchronously, from the request that caused it.
	OnDeletion func(DeletionEvent)
	// Access says who may do what.
	Access
	// NoWebhookCalls makes every call to an admission or conversion
	// webhook fail as a call to an unreachable one does (for a hosted
	// playground: see webhook.ErrCallsOff).
	NoWebhookCalls bool
	// NoServiceAccountAdmission switches the ServiceAccount admission plugin
	// off, as kube-apiserver's --disable-admission-plugins=ServiceAccount
	// (which envtest passes, having no controller to make a namespace's
	// default ServiceAccount): a pod then names no ServiceAccount unless it
	// says so, gets no API credentials volume, and is admitted whether its
	// ServiceAccount exists or not.
	NoServiceAccountAdmission bool
	// PodSecurity configures the PodSecurity admission plugin, as
	// kube-apiserver's --admission-control-config-file does; nil is its
	// default (privileged, no exemptions).
	PodSecurity *PodSecurityConfiguration
	// ContainerLog, if set, is what a pod's container has written to its
	// log, or wrote in its previous run (previous), as the node's kubelet
	// would answer pods/log: the simulated kubelets' output. "" for
	// nothing, which the answer then says.
	ContainerLog func(pod map[string]any, container string, previous bool) string
}

// Access configures authentication; RBAC then decides what each user may do.
type Access struct {
	// Tokens are the bearer tokens the server accepts, and their users
	// (see authn.ParseTokenFile).
	Tokens map[string]authn.User
	// Anonymous says what requests without credentials may do (default:
	// anything, as cluster administrators).
	Anonymous Anonymous
	// ClientCAs, if set, authenticate the TLS client certificates they
	// signed (user: common name, groups: organizations).
	ClientCAs *x509.CertPool
	// AlwaysAllow authorizes every request RBAC does not allow, as
	// kube-apiserver's --authorization-mode=...,AlwaysAllow.
	AlwaysAllow bool
	// ServiceAccountIssuer, if set, issues and verifies ServiceAccount
	// tokens as kube-apiserver's --service-account-* flags configure it;
	// nil: kubeplay's own key (made on first use and kept in the store),
	// issuer and audience https://kubernetes.default.svc.cluster.local,
	// and no issuer discovery documents.
	ServiceAccountIssuer *ServiceAccountIssuer
}

// Server serves the Kubernetes API over one store: its handlers parse,
// authorize and answer requests; everything they read or write goes
// through its registry.
type Server struct {
	reg      *registry
	catalog  *catalog.Catalog
	openapi  *openapi.Handler
	authn    *authn.Authenticator
	authz    *authz.Authorizer
	saTokens *serviceAccountTokens
	// clusterCA is the cluster's CA (see ClusterCA).
	clusterCA clusterCAHolder

	// events shares the encoding of watch events among watchers.
	events eventCache
	// storedLists keeps the items of whole lists to send again.
	storedLists storedLists
	// decodeReads turns off sending stored objects as they are, and
	// sharing watch events' encodings (tests).
	decodeReads bool

	// containerLog: see Options.ContainerLog.
	containerLog func(pod map[string]any, container string, previous bool) string
	// metrics is the resource metrics source served, if any (SetMetrics).
	metrics metricsHolder
	apiMu   sync.Mutex // serializes changes of api
	api     atomic.Pointer[apiSettings]
}

var _ http.Handler = (*Server)(nil)

// New returns a server over opts.Store, creating the namespaces every
// cluster starts with (default, kube-system, kube-public, kube-node-lease)
// and the default RBAC roles and bindings if they do not exist yet (unless
// the store's stamp says it has them: see StampBootstrap).
func New(ctx context.Context, opts Options) (*Server, error) {
	if opts.Store == nil {
		return nil, errors.New("server: no store")
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	s := &Server{catalog: catalog.New(catalog.Builtin(served)), containerLog: opts.ContainerLog}
	s.openapi = openapi.NewHandler(s.servesGroupVersion, s.resourcesOff, now())
	s.reg = newRegistry(opts, s.catalog, s.openapi, now, s.enabled)
	s.reg.admission.emulatedMinor = s.Version
	s.api.Store(&apiSettings{minor: releases.Newest})
	var err error
	if s.saTokens, err = newServiceAccountTokens(s.reg, opts.ServiceAccountIssuer); err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	s.authn = newAuthenticator(opts, s.saTokens)
	s.authz = &authz.Authorizer{Rules: &rbacRules{s: s.reg}, AlwaysAllow: opts.Access.AlwaysAllow}
	s.reg.authz = s.authz
	settings := apiSettings{minor: releases.Newest, rc: opts.RuntimeConfig, gates: opts.FeatureGates}
	if opts.Version != 0 {
		settings.minor = opts.Version
	}
	builtin := settings.builtin()
	apiServices := localAPIServices(builtin)
	checked, err := s.reg.bootstrapChecked(ctx, apiServices)
	if err != nil {
		return nil, fmt.Errorf("server: bootstrap: %w", err)
	}
	if !checked {
		if err := s.reg.bootstrap(ctx, apiServices); err != nil {
			return nil, fmt.Errorf("server: bootstrap: %w", err)
		}
		if err := s.reg.loadCRDs(ctx); err != nil {
			return nil, fmt.Errorf("server: custom resources: %w", err)
		}
	}
	// After the bootstrap, which writes through types a configuration or
	// an older release may switch off.
	s.apiMu.Lock()
	defer s.apiMu.Unlock()
	if checked {
		s.setBuiltin(settings, builtin)
	} else if err := s.applyAPI(ctx, settings, builtin, apiServices); err != nil {
		return nil, fmt.Errorf("server: local APIServices: %w", err)
	}
	return s, nil
}

// StampBootstrap checks that the store holds what New makes sure of at start
// (the bootstrap objects, the local APIServices of the server's settings),
// making what is missing, and that it holds no CustomResourceDefinition,
// and then stamps it so (store.Store.SetStamp): New on it, with the same
// settings, skips those checks and the reading of CRDs until something
// writes to the store. static/internal/bootstrapdb stamps the database the
// browser's sandboxes start from: its checks were half of the engine's start
// there. It fails with store.ErrConflict if the store was written while it
// checked, the repairs of the check included: call it on a quiet store.
func (s *Server) StampBootstrap(ctx context.Context) error {
	s.apiMu.Lock()
	defer s.apiMu.Unlock()
	apiServices := localAPIServices(s.api.Load().builtin())
	rev, err := s.reg.store.CurrentRevision(ctx)
	if err != nil {
		return err
	}
	if err := s.reg.bootstrap(ctx, apiServices); err != nil {
		return err
	}
	if err := s.reg.syncLocalAPIServices(ctx, apiServices); err != nil {
		return err
	}
	crds, err := s.reg.store.Keys(ctx, collectionPrefix(catalog.LookupBuiltin(crdsGVR), ""))
	if err != nil {
		return err
	}
	if len(crds) > 0 {
		return fmt.Errorf("server: the store holds %d CustomResourceDefinitions, which a stamp says it has not", len(crds))
	}
	return s.reg.store.SetStamp(ctx, bootstrapStamp(apiServices), rev)
}

// Catalog returns the resource types the server serves.
func (s *Server) Catalog() *catalog.Catalog { return s.catalog }

// served reports whether kubeplay serves a built-in resource: every stored
// resource type of the GA groups and the access reviews, but not the other
// virtual resources (bindings, component statuses).
func served(r *catalog.Resource) bool {
	if isReview(r) || unstoredHandlers[r.GroupResource()] != nil {
		return true
	}
	if !r.HasVerb("create") || !r.HasVerb("get") || !r.HasVerb("list") {
		return false
	}
	return true
}

// subresourceServed reports whether the server implements a subresource.
func subresourceServed(r *catalog.Resource, sub string) bool {
	if sub == "status" || sub == "scale" {
		return true
	}
	return subresourceHandlers[subresourceKey(r, sub)] != nil || slices.Contains(strategyOf(r).subresources, sub)
}

// ServeHTTP routes one API request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Body == nil {
		r.Body = http.NoBody // requests built in process may have none
	}
	// kube-apiserver marks every response private and uncached unless the
	// handler says otherwise (aggregated discovery, hashed OpenAPI documents).
	w.Header().Set("Cache-Control", "no-cache, private")
	if err := checkTimeout(r); err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	r, ok := s.authenticate(w, r)
	if !ok {
		return
	}
	r = withWarnings(w, withActor(r))
	parts := splitPath(r.URL.Path)
	switch {
	case len(parts) >= 1 && (parts[0] == "healthz" || parts[0] == "livez" || parts[0] == "readyz"):
		s.serveHealth(w, r, parts[0], parts[1:])
	case len(parts) == 0 || len(parts) == 1 && parts[0] == "index.html":
		// For any method, in JSON whatever the client accepts, as kube-apiserver.
		encoding.WriteAs(w, r, http.StatusOK, s.rootPaths(), encoding.JSON)
	case len(parts) == 1 && parts[0] == "version":
		s.serveVersion(w, r)
	case s.saTokens.discovery != nil && (r.URL.Path == openIDConfigPath || r.URL.Path == openIDConfigPath+"/"):
		s.saTokens.discovery.serve(w, r, encoding.JSON, s.saTokens.discovery.config)
	case s.saTokens.discovery != nil && (r.URL.Path == jwksPath || r.URL.Path == jwksPath+"/"):
		s.saTokens.discovery.serve(w, r, jwksMediaType, s.saTokens.discovery.keySet)
	case len(parts) >= 1 && parts[0] == "openapi":
		s.openapi.ServeHTTP(w, r)
	case len(parts) >= 1 && parts[0] == "api":
		s.serveCore(w, r, parts[1:])
	case len(parts) >= 1 && parts[0] == "apis":
		s.serveGroups(w, r, parts[1:])
	default:
		http.NotFound(w, r)
	}
}

func (s *Server) serveCore(w http.ResponseWriter, r *http.Request, parts []string) {
	switch {
	case len(parts) == 0:
		s.serveDiscoveryRoot(w, r, true, s.coreVersions(r))
	case parts[0] != "v1":
		encoding.WriteError(w, r, errNoResource())
	case len(parts) == 1:
		s.serveDiscovery(w, s.withCBOR(r), s.resourceList(schema.GroupVersion{Version: "v1"}), false)
	default:
		s.serveResource(w, r, schema.GroupVersion{Version: "v1"}, parts[1:])
	}
}

func (s *Server) serveGroups(w http.ResponseWriter, r *http.Request, parts []string) {
	if len(parts) == 0 {
		s.serveDiscoveryRoot(w, r, false, s.groupList())
		return
	}
	group, ok := s.group(parts[0])
	if !ok {
		http.NotFound(w, r)
		return
	}
	if len(parts) == 1 {
		s.serveDiscovery(w, r, apiGroup(group), true)
		return
	}
	gv := schema.GroupVersion{Group: group.Name, Version: parts[1]}
	if !containsVersion(group, gv.Version) && s.customGroup(group.Name) {
		http.NotFound(w, r) // kube-apiserver's CRD handler passes it on to nothing
		return
	}
	if !containsVersion(group, gv.Version) {
		encoding.WriteError(w, r, errNoResource())
		return
	}
	if len(parts) == 2 {
		s.serveDiscovery(w, s.withCBOR(r), s.resourceList(gv), false)
		return
	}
	s.serveResource(w, r, gv, parts[2:])
}

// withCBOR marks r for CBOR bodies and answers when the
// CBORServingAndStorage gate is on. kube-apiserver serves CBOR for a group
// version's resources and its discovery document only: its other answers
// (root discovery, /version, a path that names no resource) stay JSON.
func (s *Server) withCBOR(r *http.Request) *http.Request {
	if s.enabled(CBORServingAndStorage) {
		return encoding.WithCBOR(r)
	}
	return r
}

// serveResource handles a request under a served group version.
func (s *Server) serveResource(w http.ResponseWriter, r *http.Request, gv schema.GroupVersion, parts []string) {
	watchPath := len(parts) > 0 && parts[0] == "watch"
	if watchPath {
		parts = parts[1:]
	}
	ns, resource, name, sub, ok := parsePath(parts)
	if !ok {
		encoding.WriteError(w, r, errNoResource())
		return
	}
	res := s.catalog.Lookup(gv.WithResource(resource))
	if res == nil || (!res.Namespaced && ns != "") || !routed(res, name, sub, watchPath) {
		encoding.WriteError(w, r, errNoResource())
		return
	}
	s.warnDeprecated(w, res)
	if sub != "" && !(hasSubresource(res, sub) && subresourceServed(res, sub)) {
		if res.Custom != nil {
			// kube-apiserver's CRD handler looks for the object.
			encoding.WriteError(w, r, apierrors.NewNotFound(res.GroupResource(), name))
			return
		}
		encoding.WriteError(w, r, errNoResource())
		return
	}
	if err := r.ParseForm(); err != nil {
		encoding.WriteError(w, r, encoding.BadRequest("%v", err))
		return
	}
	req := &request{group: gv.Group, version: gv.Version, namespace: ns, resource: resource, name: name, subresource: sub, res: res, store: newResourceStore(res),
		fieldValidation: r.URL.Query().Get("fieldValidation"), query: r.URL.Query()}
	req.verb = verbFor(r.Method, name == "", QueryBool(r.URL.Query(), "watch"), watchPath)
	if sub != "" && sub != "finalize" && r.Method == http.MethodPost {
		req.verb = "create" // serviceaccounts/token, pods/eviction, ...
	}
	if req.verb == "watch" && !watchPath && sub == "" && res.HasVerb("list") && !res.HasVerb("watch") {
		// The list handler's answer, for a type it cannot watch
		// (componentstatuses, metrics.k8s.io's).
		encoding.WriteError(w, r, apierrors.NewMethodNotSupported(res.GroupResource(), "watch"))
		return
	}
	if req.verb == "" || (sub == "" && !res.HasVerb(req.verb)) || (sub != "" && sub != "finalize" && !subresourceVerb(res, sub, req.verb)) {
		encoding.WriteError(w, r, errMethodNotAllowed())
		return
	}
	if req.verb == "patch" && sub != "proxy" {
		if err := s.checkPatchType(r); err != nil {
			encoding.WriteError(w, r, err)
			return
		}
	}
	r = s.withCBOR(r)
	if res.Custom != nil {
		r = encoding.ForCustomResource(r)
	}
	// Like kube-apiserver, refuse a response nothing acceptable can carry
	// before acting on the request.
	if err := encoding.Acceptable(r, name == ""); err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	switch {
	case isReview(res):
		s.review(w, r, req)
	case res.APIService == metricsAPIService:
		s.serveMetrics(w, r, req)
	case sub == "" && unstoredHandlers[res.GroupResource()] != nil:
		unstoredHandlers[res.GroupResource()](s, w, r, req)
	case subresourceHandlers[subresourceKey(res, sub)] != nil:
		subresourceHandlers[subresourceKey(res, sub)](s, w, r, req)
	case sub != "":
		s.serveSubresource(w, r, req)
	case req.verb == "get":
		s.get(w, r, req)
	case req.verb == "list":
		s.list(w, r, req)
	case req.verb == "watch":
		s.watch(w, r, req)
	case req.verb == "create":
		s.create(w, r, req)
	case req.verb == "update":
		s.update(w, r, req)
	case req.verb == "delete":
		s.delete(w, r, req)
	case req.verb == "deletecollection":
		s.deleteCollection(w, r, req)
	case req.verb == "patch":
		s.patch(w, r, req)
	}
}

func hasSubresource(r *catalog.Resource, name string) bool {
	for _, sub := range r.Subresources {
		if sub.Name == name {
			return true
		}
	}
	return false
}

// errNoResource is kube-apiserver's answer for a path under a served group
// version that names no resource.
func errNoResource() error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusNotFound, Reason: metav1.StatusReasonNotFound,
		Message: "the server could not find the requested resource", Details: &metav1.StatusDetails{},
	}}
}

func errMethodNotAllowed() error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusMethodNotAllowed, Reason: metav1.StatusReasonMethodNotAllowed,
		Message: "the server does not allow this method on the requested resource", Details: &metav1.StatusDetails{},
	}}
}

// kubeMajor is the major version of every Kubernetes release.
const kubeMajor = "1"

type version struct {
	Major                 string `json:"major"`
	Minor                 string `json:"minor"`
	EmulationMajor        string `json:"emulationMajor"`
	EmulationMinor        string `json:"emulationMinor"`
	MinCompatibilityMajor string `json:"minCompatibilityMajor"`
	MinCompatibilityMinor string `json:"minCompatibilityMinor"`
	GitVersion            string `json:"gitVersion"`
	GitCommit             string `json:"gitCommit"`
	GitTreeState          string `json:"gitTreeState"`
	BuildDate             string `json:"buildDate"`
	GoVersion             string `json:"goVersion"`
	Compiler              string `json:"compiler"`
	Platform              string `json:"platform"`
}

// versionInfo is what /version answers when the server emulates release
// 1.minor: that release's last patch, marked as kubeplay's. (kube-apiserver
// with --emulated-version keeps its own major, minor and gitVersion, but it
// emulates three releases back at most: kubeplay plays the older release.)
func versionInfo(minor int) version {
	v := strconv.Itoa(minor)
	return version{
		Major: kubeMajor, Minor: v, EmulationMajor: kubeMajor, EmulationMinor: v,
		MinCompatibilityMajor: kubeMajor, MinCompatibilityMinor: strconv.Itoa(minor - 1),
		GitVersion: releases.GitVersion(minor) + "+kubeplay", GitCommit: "", GitTreeState: "", BuildDate: "1970-01-01T00:00:00Z",
		GoVersion: runtime.Version(), Compiler: runtime.Compiler, Platform: runtime.GOOS + "/" + runtime.GOARCH,
	}
}

// qualifiedKind names a kind as kube-apiserver's Invalid messages do:
// "ConfigMap", "Deployment.apps".
func qualifiedKind(r *catalog.Resource) schema.GroupKind {
	return schema.GroupKind{Group: r.Group, Kind: r.Kind}
}

// internalPackage is the name of the Go package of a group's internal types,
// which kube-apiserver's decoding errors mention ("core", "apps", "rbac").
func internalPackage(group string) string {
	if group == "" {
		return "core"
	}
	return strings.Split(group, ".")[0]
}
