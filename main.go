// Command kubeplay serves a Kubernetes API playground: the API, its web UI
// and the in-browser (WebAssembly) version, on one port.
package main

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
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"kubeplay/cli"
	"kubeplay/playground"
	"kubeplay/playground/api"
	"kubeplay/server"
	"kubeplay/server/authn"
	"kubeplay/server/releases"
	"kubeplay/static"
	"kubeplay/store"
	"kubeplay/web"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "kubeplay:", err)
		os.Exit(1)
	}
}

const usage = `kubeplay — a Kubernetes API playground

Usage:
  kubeplay serve [--addr 127.0.0.1:8080] [--data DIR]   serve the API, the UI and the browser mode, and
                                                        the playground API (/playground/v1/) for sandboxes
        [--max-sandboxes N] [--sandbox-idle-expiry D]   sandboxes at most, and their idle lifetime
        [--sandbox-max-objects N] [--sandbox-max-bytes N] [--sandbox-requests-per-second R]
        [--sandbox-max-watches N] [--sandboxes-in-memory]  limits of each sandbox
        [--simulate-workloads]                          simulated Deployment, ReplicaSet, Job controllers and
                                                        kubelets in the root cluster too (always in sandboxes)
        [--tls]                                         HTTPS, with a self-signed certificate DIR/tls.crt
        [--client-ca-file FILE]                         with --tls: client certificates as users (CN, O groups)
        [--token-auth-file FILE]                        bearer tokens: token,user,uid[,"group1,group2"] per line
        [--anonymous admin|rbac|deny]                   requests without a token: cluster administrators
                                                        (default), RBAC-checked as system:anonymous, or 401
        [--playground-admin-token-file FILE]            hosted mode: the playground API needs the token in
                                                        FILE; each sandbox gets a token of its own (401
                                                        without it, unless --anonymous rbac)
  kubeplay run [--server URL] [--token T] FILE|builtin:NAME|builtin:all...
                                                        run scenarios (playground/scenario/README.md) in a
                                                        fresh sandbox or against a server; fails if one does
        [--insecure-skip-tls-verify]                    with --server: do not verify its certificate
  kubeplay kubeconfig [--server URL] [--token TOKEN]    print a kubeconfig for kubectl and client-go
        [--certificate-authority FILE]                  the CA to trust for an https server (DIR/tls.crt)
  kubeplay export-site DIR                              write the browser mode as a static site into DIR
`

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errors.New("no command")
	}
	switch args[0] {
	case "serve":
		return serve(ctx, args[1:], stdout, stderr)
	case "kubeconfig":
		return kubeconfig(args[1:], stdout, stderr)
	case "run":
		return runScenarios(ctx, args[1:], stdout, stderr)
	case "export-site":
		return exportSite(args[1:], stdout)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("unknown command %q", args[0])
}

func serve(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:8080", "address to listen on")
	data := fs.String("data", "data", "directory for the database (created if missing)")
	tokenFile := fs.String("token-auth-file", "", "file of bearer tokens, in kube-apiserver's --token-auth-file format")
	anonymous := fs.String("anonymous", "admin", "what requests without a token may do: admin, rbac or deny")
	useTLS := fs.Bool("tls", false, "serve HTTPS with a self-signed certificate kept in the data directory (tls.crt), as kubectl sends tokens only over TLS")
	clientCA := fs.String("client-ca-file", "", "with --tls, authenticate client certificates signed by these CAs (user: CN, groups: O)")
	runtimeConfig := fs.String("runtime-config", "", "switch group versions or resources on and off, as kube-apiserver's flag: comma-separated key=true|false, the key api/all, api/ga, a group version (batch/v1) or one of its resources (batch/v1/cronjobs); for the root cluster and new sandboxes")
	adminTokenFile := fs.String("playground-admin-token-file", "", "hosted mode: the playground API accepts only the bearer token in this file (every sandbox too); each sandbox gets a token of its own, the only other one it accepts")
	emulated := fs.String("emulated-version", "", "the Kubernetes release whose API to serve, 1.16 to 1.35 (default 1.35), as kube-apiserver's flag; for the root cluster and new sandboxes")
	featureGates := fs.String("feature-gates", "", "switch kube-apiserver's feature gates kubeplay follows, as its flag: comma-separated Name=true|false of AllowUnsafeMalformedObjectDeletion, CBORServingAndStorage, WatchList; default as in the emulated release; for the root cluster and new sandboxes")
	simulate := fs.Bool("simulate-workloads", false, "run the simulated Deployment, ReplicaSet and Job controllers and kubelets in the root cluster too (sandboxes of the playground API run them unless switched off)")
	var mopts playground.ManagerOptions
	fs.IntVar(&mopts.MaxSandboxes, "max-sandboxes", 100, "most sandboxes the playground API keeps at once")
	fs.DurationVar(&mopts.IdleExpiry, "sandbox-idle-expiry", time.Hour, "delete a sandbox after this long without a request (negative: never)")
	fs.BoolVar(&mopts.InMemory, "sandboxes-in-memory", false, "keep new sandboxes in memory rather than in DIR/sandboxes")
	fs.Int64Var(&mopts.Limits.Objects, "sandbox-max-objects", 10000, "objects a sandbox may hold (-1: no limit)")
	fs.Int64Var(&mopts.Limits.Bytes, "sandbox-max-bytes", 64<<20, "bytes a sandbox's database may take (-1: no limit)")
	fs.Float64Var(&mopts.Limits.RequestsPerSecond, "sandbox-requests-per-second", 100, "requests a second a sandbox serves, bursts of twice as many (-1: no limit)")
	fs.Int64Var(&mopts.Limits.Watches, "sandbox-max-watches", 50, "concurrent watches of a sandbox (-1: no limit)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	opts := playground.Options{}
	opts.Controllers.DisableWorkloads = !*simulate
	rc, err := server.ParseRuntimeConfig(*runtimeConfig)
	if err != nil {
		return fmt.Errorf("--runtime-config: %w", err)
	}
	opts.RuntimeConfig = rc
	if opts.FeatureGates, err = server.ParseFeatureGates(*featureGates); err != nil {
		return fmt.Errorf("--feature-gates: %w", err)
	}
	if *emulated != "" {
		if opts.Version, err = releases.Parse(*emulated); err != nil {
			return fmt.Errorf("--emulated-version: %w", err)
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
		return fmt.Errorf("--anonymous: want admin, rbac or deny, not %q", *anonymous)
	}
	if *clientCA != "" {
		if !*useTLS {
			return errors.New("--client-ca-file needs --tls")
		}
		pem, err := os.ReadFile(*clientCA)
		if err != nil {
			return err
		}
		opts.Access.ClientCAs = x509.NewCertPool()
		if !opts.Access.ClientCAs.AppendCertsFromPEM(pem) {
			return fmt.Errorf("%s: no PEM certificate", *clientCA)
		}
	}
	if *tokenFile != "" {
		f, err := os.Open(*tokenFile)
		if err != nil {
			return err
		}
		opts.Access.Tokens, err = authn.ParseTokenFile(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", *tokenFile, err)
		}
	}
	if err := os.MkdirAll(*data, 0o755); err != nil {
		return err
	}
	st, err := store.Open(ctx, filepath.Join(*data, "kubeplay.db"), store.Options{})
	if err != nil {
		return err
	}
	opts.Store = st
	sb, err := playground.Open(ctx, opts)
	if err != nil {
		st.Close()
		return err
	}
	defer sb.Close()

	if *adminTokenFile != "" {
		b, err := os.ReadFile(*adminTokenFile)
		if err != nil {
			return err
		}
		if mopts.AdminToken = strings.TrimSpace(string(b)); mopts.AdminToken == "" {
			return fmt.Errorf("%s: no token", *adminTokenFile)
		}
	}
	mopts.Dir = filepath.Join(*data, "sandboxes")
	mopts.Sandbox.Access = opts.Access
	mopts.Sandbox.RuntimeConfig = opts.RuntimeConfig
	mopts.Sandbox.Version = opts.Version
	mopts.Sandbox.FeatureGates = opts.FeatureGates
	mgr, err := playground.NewManager(mopts)
	if err != nil {
		return err
	}
	defer mgr.Close()

	mux := http.NewServeMux()
	play := api.New(mgr)
	mux.Handle(api.Prefix+"/", play)
	mux.Handle("/sandboxes/", play)
	mux.Handle("/browser/", browserHeaders(http.StripPrefix("/browser", static.Handler())))
	mux.Handle(cli.Path, cli.New(sb.Handler()).Handler())
	var ui web.Sandbox = sb
	if opts.Access.Anonymous != server.AnonymousAdmin || mopts.AdminToken != "" {
		// Switching the emulated release bypasses the API's authorization:
		// offered only where every visitor is a cluster administrator anyway.
		ui = struct{ web.Sandbox }{sb}
	}
	if mopts.AdminToken == "" {
		// In hosted mode the page would hand anyone the admin's powers.
		mux.Handle("/", web.NewWithPlayground(ui, play))
	} else {
		mux.Handle("/", web.New(ui))
	}

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	url := "http://" + ln.Addr().String()
	if *useTLS {
		cert, err := serverCertificate(*data)
		if err != nil {
			ln.Close()
			return err
		}
		// Client certificates are verified by the API's authenticator, so
		// that a bad one gets kube-apiserver's 401 rather than a failed
		// handshake.
		srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, ClientAuth: tls.RequestClientCert}
		url = "https://" + ln.Addr().String()
		if play.CACert, err = os.ReadFile(filepath.Join(*data, "tls.crt")); err != nil {
			ln.Close()
			return err
		}
	}
	fmt.Fprintf(stdout, "kubeplay is serving on %s\n  UI:       %s/\n  browser:  %s/browser/\n  kubectl:  kubectl --server %s get namespaces\n", url, url, url, url)

	errc := make(chan error, 1)
	go func() {
		if srv.TLSConfig != nil {
			errc <- srv.ServeTLS(ln, "", "") // also negotiates HTTP/2, as kube-apiserver does
			return
		}
		errc <- srv.Serve(ln)
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

// browserHeaders sets the cache policy of the browser-mode files: their URLs
// carry no version, so browsers revalidate (cheaply, by ETag) on every load.
func browserHeaders(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		h.ServeHTTP(w, r)
	})
}

// exportSite writes the static site that runs kubeplay in the browser (the
// files the server serves at /browser/).
func exportSite(args []string, stdout io.Writer) error {
	if len(args) != 1 || args[0] == "" {
		return errors.New("usage: kubeplay export-site DIR")
	}
	if err := static.Export(args[0]); err != nil {
		return err
	}
	_, err := fmt.Fprintf(stdout, "kubeplay: wrote the browser site to %s; serve it with any static file server\n", args[0])
	return err
}

func kubeconfig(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("kubeconfig", flag.ContinueOnError)
	fs.SetOutput(stderr)
	server := fs.String("server", "http://127.0.0.1:8080", "URL of the kubeplay server")
	token := fs.String("token", "", "bearer token the kubeconfig's user presents (none: anonymous)")
	ca := fs.String("certificate-authority", "", "certificate to trust for an https server (kubeplay serve --tls writes DIR/tls.crt)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	caPath := ""
	if *ca != "" {
		abs, err := filepath.Abs(*ca)
		if err != nil {
			return err
		}
		caPath = abs
	}
	_, err := io.WriteString(stdout, playground.Kubeconfig(playground.KubeconfigOptions{Server: *server, Token: *token, CAPath: caPath}))
	return err
}
