package app

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"kubeplay/playground"
	"kubeplay/playground/api"
	"kubeplay/server"
	"kubeplay/server/authn"
	"kubeplay/server/releases"
	"kubeplay/static"
	"kubeplay/store"
	"kubeplay/website"
)

// serve is `kubeplay serve`: the root cluster, the playground API's
// sandboxes, the UI and the browser mode on one port, until ctx ends.
func serve(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := parseServeFlags(args, stderr)
	if err != nil {
		return err
	}
	root, sandboxes, err := openClusters(ctx, cfg)
	if err != nil {
		return err
	}
	defer root.Close()
	defer sandboxes.Close()

	l, err := listen(cfg)
	if err != nil {
		return err
	}
	play := api.New(sandboxes)
	play.CACert = l.caCert
	play.Addresses = sandboxAddresses(l)
	srv := &http.Server{
		Handler: onFirstRequest(root.StartControllers, play.RefuseSandboxTokens(website.New(website.Options{
			Sandbox:    root,
			Playground: play,
			Browser:    static.Handler(),
			Anonymous:  cfg.root.Access.Anonymous,
			Hosted:     cfg.sandboxes.AdminToken != "",
		}))),
		ReadHeaderTimeout: 10 * time.Second,
		TLSConfig:         l.tls,
		HTTP2:             kubeAPIServerHTTP2(),
	}
	fmt.Fprintf(stdout, "kubeplay is serving on %s\n  UI:       %s/\n  browser:  %s/browser/\n  kubectl:  kubectl --server %s get namespaces\n", l.url, l.url, l.url, l.url)
	return serveUntilDone(ctx, srv, l)
}

// kubeAPIServerHTTP2 is the HTTP/2 configuration kube-apiserver v1.35
// announces in its SETTINGS frame: 100 streams a connection, frames and
// stream windows of 256 KiB. Clients spread their streams (watches) over as
// many connections as they do with it, each served by its own goroutine.
func kubeAPIServerHTTP2() *http.HTTP2Config {
	const streams, window = 100, 256 << 10
	return &http.HTTP2Config{MaxConcurrentStreams: streams, MaxReadFrameSize: window,
		MaxReceiveBufferPerStream: window, MaxReceiveBufferPerConnection: streams * window}
}

// onFirstRequest runs start before h serves its first request. The root
// cluster's controllers start so, as a kube-controller-manager starts once
// its API server answers: their first passes (listing what they watch, the
// ClusterRole aggregation's first writes, which load the field manager's
// schemas) are then no part of the API server's start.
func onFirstRequest(start func(), h http.Handler) http.Handler {
	var once sync.Once
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		once.Do(start)
		h.ServeHTTP(w, r)
	})
}

// serveConfig is what serve's flags ask for, read and checked.
type serveConfig struct {
	addr string
	data string // the directory of the databases (and of the certificate)
	tls  bool
	// root is the root cluster's options but its store; sandboxes the
	// playground API's, whose sandboxes get the root's access, API
	// versions and release.
	root      playground.Options
	sandboxes playground.ManagerOptions
}

func parseServeFlags(args []string, stderr io.Writer) (*serveConfig, error) {
	cfg := &serveConfig{}
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.addr, "addr", "127.0.0.1:8080", "address to listen on")
	fs.StringVar(&cfg.data, "data", "data", "directory for the database (created if missing)")
	tokenFile := fs.String("token-auth-file", "", "file of bearer tokens, in kube-apiserver's --token-auth-file format")
	anonymous := fs.String("anonymous", "admin", "what requests without a token may do: admin, rbac or deny")
	fs.BoolVar(&cfg.tls, "tls", false, "serve HTTPS with a self-signed certificate kept in the data directory (tls.crt), as kubectl sends tokens only over TLS")
	clientCA := fs.String("client-ca-file", "", "with --tls, authenticate client certificates signed by these CAs (user: CN, groups: O)")
	runtimeConfig := fs.String("runtime-config", "", "switch group versions or resources on and off, as kube-apiserver's flag: comma-separated key=true|false, the key api/all, api/ga, a group version (batch/v1) or one of its resources (batch/v1/cronjobs); for the root cluster and new sandboxes")
	admissionConfig := fs.String("admission-control-config-file", "", "an AdmissionConfiguration file, as kube-apiserver's flag: its PodSecurity plugin's PodSecurityConfiguration (defaults for namespaces without pod-security.kubernetes.io labels, exempt usernames, namespaces and runtime classes) applies to the root cluster and new sandboxes; other plugins' configurations are ignored")
	adminTokenFile := fs.String("playground-admin-token-file", "", "hosted mode: the playground API accepts only the bearer token in this file (every sandbox too); each sandbox gets a token of its own, the only other one it accepts")
	emulated := fs.String("emulated-version", "", "the Kubernetes release whose API to serve, 1.16 to 1.35 (default 1.35), as kube-apiserver's flag; for the root cluster and new sandboxes")
	featureGates := fs.String("feature-gates", "", "switch kube-apiserver's feature gates kubeplay follows, as its flag: comma-separated Name=true|false of AllowUnsafeMalformedObjectDeletion, CBORServingAndStorage, PodTopologyLabelsAdmission, WatchList; default as in the emulated release; for the root cluster and new sandboxes")
	simulate := fs.Bool("simulate-workloads", true, "run the whole simulated cluster in the root cluster, as in sandboxes: kube-controller-manager's controllers, the scheduler, the simulated nodes and kubelets; =false leaves a bare control plane, kube-apiserver alone with the namespace, garbage collector, ClusterRole aggregation and ValidatingAdmissionPolicy status controllers (what the tests compare with kube-apiserver)")
	mopts := &cfg.sandboxes
	fs.IntVar(&mopts.MaxSandboxes, "max-sandboxes", 100, "most sandboxes the playground API keeps at once")
	fs.DurationVar(&mopts.IdleExpiry, "sandbox-idle-expiry", time.Hour, "delete a sandbox after this long without a request (negative: never)")
	fs.BoolVar(&mopts.InMemory, "sandboxes-in-memory", false, "keep new sandboxes in memory rather than in DIR/sandboxes")
	fs.Int64Var(&mopts.Limits.Objects, "sandbox-max-objects", 10000, "objects a sandbox may hold (-1: no limit)")
	fs.Int64Var(&mopts.Limits.Bytes, "sandbox-max-bytes", 64<<20, "bytes a sandbox's database may take (-1: no limit)")
	fs.Float64Var(&mopts.Limits.RequestsPerSecond, "sandbox-requests-per-second", 100, "requests a second a sandbox serves, bursts of twice as many (-1: no limit)")
	fs.Int64Var(&mopts.Limits.Watches, "sandbox-max-watches", 50, "concurrent watches of a sandbox (-1: no limit)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}

	opts := &cfg.root
	opts.Controllers = playground.BasicControllers(true, *simulate)
	opts.StartControllersLater = true // see onFirstRequest
	var err error
	if opts.RuntimeConfig, err = server.ParseRuntimeConfig(*runtimeConfig); err != nil {
		return nil, fmt.Errorf("--runtime-config: %w", err)
	}
	if opts.FeatureGates, err = server.ParseFeatureGates(*featureGates); err != nil {
		return nil, fmt.Errorf("--feature-gates: %w", err)
	}
	if *emulated != "" {
		if opts.Version, err = releases.Parse(*emulated); err != nil {
			return nil, fmt.Errorf("--emulated-version: %w", err)
		}
	}
	if *admissionConfig != "" {
		var others []string
		if opts.PodSecurity, others, err = readAdmissionConfiguration(*admissionConfig); err != nil {
			return nil, err
		}
		if len(others) > 0 {
			fmt.Fprintln(stderr, "kubeplay: ignoring the configuration of admission plugins kubeplay does not configure:", strings.Join(others, ", "))
		}
	}
	switch *anonymous {
	case "admin":
		opts.Access.Anonymous = server.AnonymousAdmin
	case "rbac":
		opts.Access.Anonymous = server.AnonymousRBAC
	case "deny":
		opts.Access.Anonymous = server.AnonymousDenied
	default:
		return nil, fmt.Errorf("--anonymous: want admin, rbac or deny, not %q", *anonymous)
	}
	if *clientCA != "" && !cfg.tls {
		return nil, errors.New("--client-ca-file needs --tls")
	}
	if opts.Access.ClientCAs, err = readClientCAs(*clientCA); err != nil {
		return nil, err
	}
	if opts.Access.Tokens, err = readTokenFile(*tokenFile); err != nil {
		return nil, err
	}
	if *adminTokenFile != "" {
		b, err := os.ReadFile(*adminTokenFile)
		if err != nil {
			return nil, err
		}
		if mopts.AdminToken = strings.TrimSpace(string(b)); mopts.AdminToken == "" {
			return nil, fmt.Errorf("%s: no token", *adminTokenFile)
		}
		// A hosted playground's visitors must not make it send requests
		// wherever they like.
		opts.NoWebhookCalls = true
	}
	mopts.Dir = filepath.Join(cfg.data, "sandboxes")
	mopts.Sandbox.Access = opts.Access
	mopts.Sandbox.RuntimeConfig = opts.RuntimeConfig
	mopts.Sandbox.Version = opts.Version
	mopts.Sandbox.FeatureGates = opts.FeatureGates
	mopts.Sandbox.NoWebhookCalls = opts.NoWebhookCalls
	mopts.Sandbox.PodSecurity = opts.PodSecurity
	return cfg, nil
}

// rootListCacheBytes is the memory the root cluster's store may keep its
// collections' listings in (the sandboxes', many to a process, keep the
// store's default): kube-apiserver serves lists from its watch cache, which
// holds every object.
const rootListCacheBytes = 64 << 20

// openClusters opens the root cluster on DIR/kubeplay.db and the manager of
// the playground API's sandboxes; the caller closes both.
func openClusters(ctx context.Context, cfg *serveConfig) (*playground.Sandbox, *playground.Manager, error) {
	if err := os.MkdirAll(cfg.data, 0o755); err != nil {
		return nil, nil, err
	}
	st, err := store.Open(ctx, filepath.Join(cfg.data, "kubeplay.db"), store.Options{ListCacheBytes: rootListCacheBytes})
	if err != nil {
		return nil, nil, err
	}
	opts := cfg.root
	opts.Store = st
	root, err := playground.Open(ctx, opts)
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	sandboxes, err := playground.NewManager(cfg.sandboxes)
	if err != nil {
		root.Close()
		return nil, nil, err
	}
	return root, sandboxes, nil
}

// listener is serve's socket, with what clients need to know of it.
type listener struct {
	net.Listener
	url    string      // http:// or https://, and the address
	tls    *tls.Config // nil: plain HTTP
	caCert []byte      // with --tls, the PEM of the certificate to trust
}

// listen opens cfg's address and, with --tls, the data directory's
// certificate (made the first time).
func listen(cfg *serveConfig) (*listener, error) {
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return nil, err
	}
	l := &listener{Listener: ln, url: "http://" + ln.Addr().String()}
	if !cfg.tls {
		return l, nil
	}
	cert, err := serverCertificate(filepath.Join(cfg.data, "tls.crt"), filepath.Join(cfg.data, "tls.key"))
	if err != nil {
		ln.Close()
		return nil, err
	}
	// Client certificates are verified by the API's authenticator, so
	// that a bad one gets kube-apiserver's 401 rather than a failed
	// handshake.
	l.tls = &tls.Config{Certificates: []tls.Certificate{cert}, ClientAuth: tls.RequestClientCert}
	l.url = "https://" + ln.Addr().String()
	if l.caCert, err = os.ReadFile(filepath.Join(cfg.data, "tls.crt")); err != nil {
		ln.Close()
		return nil, err
	}
	return l, nil
}

// serveUntilDone serves srv on l until ctx ends, then shuts it down.
func serveUntilDone(ctx context.Context, srv *http.Server, l *listener) error {
	errc := make(chan error, 1)
	go func() {
		if srv.TLSConfig != nil {
			errc <- srv.ServeTLS(l, "", "") // also negotiates HTTP/2, as kube-apiserver does
			return
		}
		errc <- srv.Serve(l)
	}()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	// Watches never end on their own: close them rather than wait.
	if err := srv.Shutdown(shutdown); err != nil {
		srv.Close()
	}
	slog.Info("kubeplay stopped")
	return nil
}

// readClientCAs reads the CA certificates of --client-ca-file; nil for no
// file.
func readClientCAs(file string) (*x509.CertPool, error) {
	if file == "" {
		return nil, nil
	}
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s: no PEM certificate", file)
	}
	return pool, nil
}

// readTokenFile reads the tokens of --token-auth-file; nil for no file.
func readTokenFile(file string) (map[string]authn.User, error) {
	if file == "" {
		return nil, nil
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	tokens, err := authn.ParseTokenFile(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return tokens, nil
}
