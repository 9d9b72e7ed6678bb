// Command kubeplay serves a Kubernetes API playground: the API, its web UI
// and the in-browser (WebAssembly) version, on one port.
package main

import (
	"context"
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
	"syscall"
	"time"

	"kubeplay/cli"
	"kubeplay/playground"
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
  kubeplay serve [--addr 127.0.0.1:8080] [--data DIR]   serve the API, the UI and the browser mode
  kubeplay kubeconfig [--server URL]                    print a kubeconfig for kubectl and client-go
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
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := os.MkdirAll(*data, 0o755); err != nil {
		return err
	}
	st, err := store.Open(ctx, filepath.Join(*data, "kubeplay.db"), store.Options{})
	if err != nil {
		return err
	}
	sb, err := playground.Open(ctx, playground.Options{Store: st})
	if err != nil {
		st.Close()
		return err
	}
	defer sb.Close()

	mux := http.NewServeMux()
	mux.Handle("/browser/", browserHeaders(http.StripPrefix("/browser", static.Handler())))
	mux.Handle(cli.Path, cli.New(sb.Handler()).Handler())
	mux.Handle("/", web.New(sb))

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	url := "http://" + ln.Addr().String()
	fmt.Fprintf(stdout, "kubeplay is serving on %s\n  UI:       %s/\n  browser:  %s/browser/\n  kubectl:  kubectl --server %s get namespaces\n", url, url, url, url)

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
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
	if err := fs.Parse(args); err != nil {
		return err
	}
	_, err := fmt.Fprintf(stdout, `apiVersion: v1
kind: Config
clusters:
- name: kubeplay
  cluster:
    server: %s
users:
- name: kubeplay
  user: {}
contexts:
- name: kubeplay
  context:
    cluster: kubeplay
    user: kubeplay
    namespace: default
current-context: kubeplay
`, *server)
	return err
}
