package app

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"kubeplay/playground"
	"kubeplay/server"
	"kubeplay/server/releases"
	"kubeplay/store"
)

// kubeAPIServerHonoured are the kube-apiserver flags kubeplay's
// kube-apiserver does what kube-apiserver does with, and what that is.
var kubeAPIServerHonoured = map[string]string{
	"secure-port":                      "port to serve HTTPS on (default 6443)",
	"bind-address":                     "address to listen on (default 0.0.0.0)",
	"cert-dir":                         "directory of apiserver.crt and apiserver.key, the serving certificate, made self-signed if missing (default /var/run/kubernetes)",
	"tls-cert-file":                    "serving certificate (PEM), instead of the one in --cert-dir",
	"tls-private-key-file":             "key of --tls-cert-file",
	"client-ca-file":                   "authenticate client certificates signed by these CAs: user = common name, groups = organizations",
	"disable-admission-plugins":        "ServiceAccount switches off the ServiceAccount plugin (as envtest does: nothing makes a namespace's default ServiceAccount unless --kubeplay-simulate-workloads); other plugins are accepted and stay on",
	"token-auth-file":                  "bearer tokens: token,user,uid[,\"group1,group2\"] per line",
	"service-account-issuer":           "the iss of ServiceAccount tokens (TokenRequest, kubectl create token); repeated, the first issues and all are accepted; an https URL gets the issuer discovery documents /.well-known/openid-configuration and /openid/v1/jwks (without the --service-account-* flags: kubeplay's own key, issuer https://kubernetes.default.svc.cluster.local)",
	"service-account-signing-key-file": "the private key (RSA or ECDSA, PEM) that signs ServiceAccount tokens",
	"service-account-key-file":         "public keys (or private keys, or certificates; PEM) that verify ServiceAccount tokens, published at /openid/v1/jwks; may be repeated",
	"api-audiences":                    "the audiences of this API: a token must be for one of them, and TokenRequests are for them by default (default: the issuers)",
	"service-account-jwks-uri":         "the jwks_uri of /.well-known/openid-configuration (default https://<external address>/openid/v1/jwks)",
	"external-hostname":                "the host of the default --service-account-jwks-uri (default: --advertise-address)",
	"advertise-address":                "the host of the default --service-account-jwks-uri without --external-hostname (default: --bind-address, or the host's address if that is a loopback or unspecified one); the kubernetes Service's endpoint is not kept",
	"anonymous-auth":                   "requests without credentials run as system:anonymous, whom RBAC grants discovery, /healthz, /readyz, /livez and /version (default true)",
	"authorization-mode":               "RBAC (the default) and AlwaysAllow (every request RBAC does not allow is allowed); Node is ignored: RBAC decides for kubelets",
	"runtime-config":                   "switch group versions and resources on and off: api/all, api/ga, group/version or group/version/resource = true|false",
	"admission-control-config-file":    "an AdmissionConfiguration (apiserver.config.k8s.io/v1): its PodSecurity plugin's PodSecurityConfiguration (inline or at a path; pod-security.admission.config.k8s.io v1 or v1beta1) sets the policy of namespaces without pod-security.kubernetes.io labels and the exempt usernames, namespaces and runtime classes; other plugins' configurations are ignored, with a warning",
	"feature-gates":                    "kube-apiserver's feature gates kubeplay follows: AllowUnsafeMalformedObjectDeletion, CBORServingAndStorage, PodTopologyLabelsAdmission, WatchList",
	"emulated-version":                 "the release whose API to serve, 1.16 to 1.35",
	"help":                             "print this help",
	"version":                          "print the version",
}

// kubeAPIServerAccepted are the kube-apiserver flags a command line may
// give without a warning, although kubeplay does nothing with them: what
// they configure is fixed, or does not exist, here.
var kubeAPIServerAccepted = map[string]string{
	"etcd-servers":             "ignored: objects live in kubeplay's own SQLite database, in memory unless --kubeplay-data",
	"etcd-prefix":              "ignored, as --etcd-servers",
	"service-cluster-ip-range": "accepted; Service IPs are allocated from kubeplay's own range",
	"allow-privileged":         "accepted; privileged containers are always allowed",
	"enable-admission-plugins": "accepted; kubeplay runs its own chain: NamespaceLifecycle, LimitRanger, ServiceAccount, Priority, DefaultTolerationSeconds, RuntimeClass, DefaultStorageClass, StorageObjectInUseProtection, ValidatingAdmissionPolicy",
	"admission-control":        "accepted, as --enable-admission-plugins",
	"v":                        "accepted; kubeplay logs little",
	"vmodule":                  "accepted, as --v",
}

// kubeplayFlags are the flags of kubeplay's kube-apiserver that
// kube-apiserver does not have.
var kubeplayFlags = map[string]struct{ typ, usage string }{
	"kubeplay-controllers":        {"bool", "run the namespace controller, the garbage collector, ClusterRole aggregation, the ValidatingAdmissionPolicy status controller and the kubelet stand-in that removes gracefully deleted pods (default true)"},
	"kubeplay-simulate-workloads": {"bool", "also run the simulated Deployment, ReplicaSet and Job controllers, scheduler and kubelets (default false)"},
	"kubeplay-data":               {"string", "directory of the database, kept across restarts (default: in memory)"},
}

// assetsArgsFile, beside the kube-apiserver that envtest-assets writes,
// holds flags (one a line) that come before those of the command line.
const assetsArgsFile = "kubeplay-apiserver.args"

// kubeAPIServer is kubeplay run as kube-apiserver (`kubeplay kube-apiserver`
// or the binary named kube-apiserver): it takes kube-apiserver's command
// line and serves one cluster's API over HTTPS, until ctx ends.
func kubeAPIServer(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	preset, err := assetsArgs()
	if err != nil {
		return err
	}
	known := maps.Clone(kubeAPIServerFlags)
	for name, f := range kubeplayFlags {
		known[name] = f.typ
	}
	cl, err := parseCommandLine(append(preset, args...), known)
	if err != nil {
		return err
	}
	if _, ok := cl.values["help"]; ok {
		_, err := io.WriteString(stdout, kubeAPIServerUsage())
		return err
	}
	if _, ok := cl.values["version"]; ok {
		_, err := fmt.Fprintf(stdout, "Kubernetes %s\n", releases.GitVersion(releases.Newest))
		return err
	}
	cfg, err := kubeAPIServerConfig(cl, stderr)
	if err != nil {
		return err
	}

	dsn := ":memory:"
	if cfg.data != "" {
		if err := os.MkdirAll(cfg.data, 0o755); err != nil {
			return err
		}
		dsn = filepath.Join(cfg.data, "kubeplay.db")
	}
	st, err := store.Open(ctx, dsn, store.Options{ListCacheBytes: rootListCacheBytes})
	if err != nil {
		return err
	}
	cfg.cluster.Store = st
	cluster, err := playground.Open(ctx, cfg.cluster)
	if err != nil {
		st.Close()
		return err
	}
	defer cluster.Close()

	cert, err := serverCertificate(cfg.certFile, cfg.keyFile)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return err
	}
	// As in serve: the authenticator verifies client certificates, so that
	// a bad one gets a 401 rather than a failed handshake.
	tlsConfig := &tls.Config{Certificates: []tls.Certificate{cert}, ClientAuth: tls.RequestClientCert}
	srv := &http.Server{Handler: cluster.Handler(), ReadHeaderTimeout: 10 * time.Second, TLSConfig: tlsConfig, HTTP2: kubeAPIServerHTTP2()}
	fmt.Fprintf(stdout, "kubeplay (as kube-apiserver %s) is serving on https://%s\n", releases.GitVersion(cluster.Version()), ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- srv.ServeTLS(ln, "", "") }() // HTTP/2 too, as kube-apiserver
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	// At once, unlike serve's graceful shutdown: the test that stops its
	// API server has no request left it waits for, and a graceful stop
	// waits a second for each HTTP/2 client to hang up.
	return srv.Close()
}

// kubeAPIServerSettings is what a kube-apiserver command line asks of
// kubeplay.
type kubeAPIServerSettings struct {
	addr              string
	certFile, keyFile string
	data              string
	cluster           playground.Options
}

func kubeAPIServerConfig(cl *commandLine, stderr io.Writer) (*kubeAPIServerSettings, error) {
	cfg := &kubeAPIServerSettings{data: cl.value("kubeplay-data")}
	if len(cl.args) > 0 {
		return nil, fmt.Errorf("%q does not take any arguments, got %q", "kube-apiserver", cl.args)
	}
	var notes []string
	if len(cl.unknown) > 0 {
		notes = append(notes, "flags kube-apiserver "+releases.GitVersion(releases.Newest)+" does not have: --"+strings.Join(cl.unknown, ", --"))
	}
	ignored := cl.given(func(name string) bool {
		_, honoured := kubeAPIServerHonoured[name]
		_, accepted := kubeAPIServerAccepted[name]
		_, known := kubeAPIServerFlags[name]
		return known && !honoured && !accepted
	})
	if len(ignored) > 0 {
		notes = append(notes, "kube-apiserver flags kubeplay does not implement: --"+strings.Join(ignored, ", --"))
	}

	port := cl.value("secure-port")
	if port == "" {
		port = "6443"
	}
	if n, err := strconv.Atoi(port); err != nil || n <= 0 || n > 65535 {
		return nil, fmt.Errorf("invalid port value %q for --secure-port: want 1 to 65535", port)
	}
	bind := cl.value("bind-address")
	if bind == "" {
		bind = "0.0.0.0"
	}
	if net.ParseIP(bind) == nil {
		return nil, fmt.Errorf("invalid argument %q for --bind-address: not an IP address", bind)
	}
	cfg.addr = net.JoinHostPort(bind, port)

	cfg.certFile, cfg.keyFile = cl.value("tls-cert-file"), cl.value("tls-private-key-file")
	if (cfg.certFile == "") != (cfg.keyFile == "") {
		return nil, errors.New("--tls-cert-file and --tls-private-key-file go together")
	}
	if cfg.certFile == "" {
		dir := cl.value("cert-dir")
		if dir == "" {
			dir = "/var/run/kubernetes"
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		cfg.certFile, cfg.keyFile = filepath.Join(dir, "apiserver.crt"), filepath.Join(dir, "apiserver.key")
	}

	opts := &cfg.cluster
	var err error
	if opts.Access.ClientCAs, err = readClientCAs(cl.value("client-ca-file")); err != nil {
		return nil, err
	}
	if opts.Access.Tokens, err = readTokenFile(cl.value("token-auth-file")); err != nil {
		return nil, err
	}
	anonymous, err := cl.boolean("anonymous-auth", true)
	if err != nil {
		return nil, err
	}
	opts.Access.Anonymous = server.AnonymousRBAC
	if !anonymous {
		opts.Access.Anonymous = server.AnonymousDenied
	}
	if opts.Access.ServiceAccountIssuer, err = serviceAccountIssuer(cl, port); err != nil {
		return nil, err
	}
	opts.NoServiceAccountAdmission = slices.Contains(cl.list("disable-admission-plugins"), "ServiceAccount")
	modes := cl.list("authorization-mode")
	for _, mode := range modes {
		switch mode {
		case "RBAC":
		case "AlwaysAllow":
			// kube-apiserver then refuses anonymous requests, whatever
			// --anonymous-auth says ("AnonymousAuth is not allowed with
			// the AlwaysAllow authorizer").
			opts.Access.AlwaysAllow = true
			if opts.Access.Anonymous != server.AnonymousDenied {
				notes = append(notes, "AnonymousAuth is not allowed with the AlwaysAllow authorizer. Resetting AnonymousAuth to false. You should use a different authorizer")
				opts.Access.Anonymous = server.AnonymousDenied
			}
		case "Node":
			notes = append(notes, "--authorization-mode "+mode+" is not implemented: RBAC decides")
		default:
			return nil, fmt.Errorf("--authorization-mode %s: kubeplay implements RBAC only", mode)
		}
	}
	if file := cl.value("admission-control-config-file"); file != "" {
		var others []string
		if opts.PodSecurity, others, err = readAdmissionConfiguration(file); err != nil {
			return nil, err
		}
		if len(others) > 0 {
			notes = append(notes, "the configuration of admission plugins kubeplay does not configure: "+strings.Join(others, ", "))
		}
	}
	var skipped []string
	if opts.RuntimeConfig, skipped, err = parseSwitches(cl.list("runtime-config"), server.ParseRuntimeConfig); err != nil {
		return nil, fmt.Errorf("--runtime-config: %w", err)
	}
	if len(skipped) > 0 {
		notes = append(notes, "--runtime-config entries kubeplay does not serve: "+strings.Join(skipped, ", "))
	}
	if opts.FeatureGates, skipped, err = parseSwitches(cl.list("feature-gates"), server.ParseFeatureGates); err != nil {
		return nil, fmt.Errorf("--feature-gates: %w", err)
	}
	if len(skipped) > 0 {
		notes = append(notes, "feature gates kubeplay does not follow: "+strings.Join(skipped, ", "))
	}
	if v := cl.value("emulated-version"); v != "" {
		// kube-apiserver's value may name components: kube=1.33.
		v = strings.TrimPrefix(v, "kube=")
		if opts.Version, err = releases.Parse(v); err != nil {
			return nil, fmt.Errorf("--emulated-version: %w", err)
		}
	}
	controllers, err := cl.boolean("kubeplay-controllers", true)
	if err != nil {
		return nil, err
	}
	workloads, err := cl.boolean("kubeplay-simulate-workloads", false)
	if err != nil {
		return nil, err
	}
	opts.Controllers = playground.BasicControllers(controllers, workloads)
	for _, note := range notes {
		fmt.Fprintln(stderr, "kubeplay: ignoring", note)
	}
	return cfg, nil
}

// parseSwitches reads the key=bool entries of --runtime-config or
// --feature-gates one at a time with parse, so that an entry kube-apiserver
// takes and kubeplay does not know is skipped (and reported) rather than
// fatal. A value that is not a bool is an error, as for kube-apiserver.
func parseSwitches[M ~map[string]bool](entries []string, parse func(string) (M, error)) (M, []string, error) {
	out := M{}
	var skipped []string
	for _, entry := range entries {
		if key, value, ok := strings.Cut(entry, "="); ok {
			if _, err := strconv.ParseBool(value); err != nil {
				return nil, nil, fmt.Errorf("invalid value of %s=%s: want true or false", key, value)
			}
		}
		m, err := parse(entry)
		if err != nil {
			skipped = append(skipped, entry)
			continue
		}
		maps.Copy(out, m)
	}
	return out, skipped, nil
}

// assetsArgs reads the flags envtest-assets left beside the running
// binary, if any.
func assetsArgs() ([]string, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, nil // then there is no file to read either
	}
	f, err := os.Open(filepath.Join(filepath.Dir(exe), assetsArgsFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var args []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" && !strings.HasPrefix(line, "#") {
			args = append(args, line)
		}
	}
	return args, sc.Err()
}

// kubeAPIServerUsage lists every flag, each on a line of its own starting
// with --name as kube-apiserver's help does: envtest reads the help to
// learn which flags the binary has.
func kubeAPIServerUsage() string {
	var b strings.Builder
	b.WriteString(`kubeplay as kube-apiserver: one cluster's Kubernetes API over HTTPS, with the
garbage collector and the namespace controller, for controller tests (envtest's
KUBEBUILDER_ASSETS; see "kubeplay envtest-assets"). It needs no etcd.

Usage:
  kube-apiserver [flags]

`)
	section := func(title string, names []string, usage func(string) string) {
		b.WriteString(title + ":\n")
		slices.Sort(names)
		for _, name := range names {
			typ := kubeAPIServerFlags[name]
			if f, ok := kubeplayFlags[name]; ok {
				typ = f.typ
			}
			if typ == "bool" {
				fmt.Fprintf(&b, "      --%s\n", name)
			} else {
				fmt.Fprintf(&b, "      --%s %s\n", name, typ)
			}
			if u := usage(name); u != "" {
				fmt.Fprintf(&b, "            %s\n", u)
			}
		}
		b.WriteString("\n")
	}
	section("Flags kubeplay honours", slices.Collect(maps.Keys(kubeAPIServerHonoured)), func(n string) string { return kubeAPIServerHonoured[n] })
	section("Flags kubeplay accepts silently", slices.Collect(maps.Keys(kubeAPIServerAccepted)), func(n string) string { return kubeAPIServerAccepted[n] })
	section("kubeplay's own flags", slices.Collect(maps.Keys(kubeplayFlags)), func(n string) string { return kubeplayFlags[n].usage })
	var rest []string
	for name := range kubeAPIServerFlags {
		_, honoured := kubeAPIServerHonoured[name]
		_, accepted := kubeAPIServerAccepted[name]
		if !honoured && !accepted {
			rest = append(rest, name)
		}
	}
	section("Flags of kube-apiserver "+releases.GitVersion(releases.Newest)+" kubeplay accepts and ignores, with a warning", rest, func(string) string { return "" })
	return b.String()
}
