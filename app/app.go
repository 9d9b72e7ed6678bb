package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"

	"kubeplay/playground"
	"kubeplay/static"
)

const usage = `kubeplay — a Kubernetes API playground

Usage:
  kubeplay serve [--addr 127.0.0.1:8080] [--data DIR]   serve the API, the UI and the browser mode, and
                                                        the playground API (/playground/v1/) for sandboxes
        [--max-sandboxes N] [--sandbox-idle-expiry D]   sandboxes at most, and their idle lifetime
        [--sandbox-max-objects N] [--sandbox-max-bytes N] [--sandbox-requests-per-second R]
        [--sandbox-max-watches N] [--sandboxes-in-memory]  limits of each sandbox
        [--simulate-workloads=false]                    a bare control plane in the root cluster (kube-apiserver
                                                        alone) instead of the simulated cluster sandboxes run
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
  kubeplay kube-apiserver [flags]                       serve one cluster's API as kube-apiserver does, with
                                                        its flags (--help lists them), in memory; also
                                                        what the binary does when named kube-apiserver
  kubeplay etcd [flags]                                 a stand-in for etcd that stores nothing (--help); also
                                                        what the binary does when named etcd
  kubeplay envtest-assets [--controllers=false] [--simulate-workloads] DIR
                                                        write kube-apiserver, etcd and kubectl into DIR for
                                                        controller-runtime's envtest: KUBEBUILDER_ASSETS=DIR
`

// CommandLine returns the arguments of Run for the program started with
// argv: argv[1:], or, for the binary named kube-apiserver or etcd (as
// envtest-assets writes them), the command of that name and argv[1:].
func CommandLine(argv []string) []string {
	if len(argv) == 0 {
		return nil
	}
	switch name := filepath.Base(argv[0]); name {
	case "kube-apiserver", "etcd":
		return append([]string{name}, argv[1:]...)
	}
	return argv[1:]
}

// Run runs the kubeplay command line args (without the program's name),
// writing to stdout and stderr, until it is done or, for serve, until ctx
// ends. An error is for the caller to print.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
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
	case "kube-apiserver":
		return kubeAPIServer(ctx, args[1:], stdout, stderr)
	case "etcd":
		return etcdStandIn(ctx, args[1:], stdout, stderr)
	case "envtest-assets":
		return envtestAssets(args[1:], stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("unknown command %q", args[0])
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
