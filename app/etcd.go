package app

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// etcdFlags are the etcd flags the stand-in knows, and the type of value
// each takes (as kubeAPIServerFlags); envtest passes the first five.
var etcdFlags = map[string]string{
	"listen-client-urls":    "string",
	"advertise-client-urls": "string",
	"listen-peer-urls":      "string",
	"data-dir":              "string",
	"unsafe-no-fsync":       "bool",
	"name":                  "string",
	"help":                  "bool",
	"version":               "bool",
}

// etcdVersion is the etcd release kube-apiserver v1.35 is tested with, which
// /version reports.
const etcdVersion = "3.6.5"

const etcdUsage = `kubeplay as etcd: a stand-in that stores nothing. kubeplay's kube-apiserver
keeps its objects in its own SQLite database, so etcd is not needed; this
command only lets tools that start etcd before kube-apiserver (envtest) do so.
It listens on --listen-client-urls (http only), answers /health, /readyz,
/livez and /version as etcd does, and runs until it is stopped.

Usage:
  etcd [flags]

Flags:
      --listen-client-urls string
            comma-separated http URLs to listen on (default http://localhost:2379)
      --advertise-client-urls string
            accepted, not used
      --listen-peer-urls string
            accepted, not used: there are no peers
      --data-dir string
            accepted, not used: nothing is stored
      --unsafe-no-fsync
            accepted: nothing is written
      --name string
            accepted, not used
      --version
            print the version
Other etcd flags are accepted and ignored, with a warning.
`

// etcdStandIn is kubeplay run as etcd (`kubeplay etcd` or the binary named
// etcd): it serves etcd's health checks on etcd's client URLs until ctx
// ends, and stores nothing.
func etcdStandIn(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cl, err := parseCommandLine(args, etcdFlags)
	if err != nil {
		return err
	}
	if _, ok := cl.values["help"]; ok {
		_, err := io.WriteString(stdout, etcdUsage)
		return err
	}
	if _, ok := cl.values["version"]; ok {
		_, err := fmt.Fprintf(stdout, "etcd Version: %s (kubeplay's stand-in)\n", etcdVersion)
		return err
	}
	if len(cl.unknown) > 0 {
		fmt.Fprintln(stderr, "kubeplay etcd: ignoring flags: --"+strings.Join(cl.unknown, ", --"))
	}
	urls := cl.list("listen-client-urls")
	if len(urls) == 0 {
		urls = []string{"http://localhost:2379"}
	}
	srv := &http.Server{Handler: etcdHealth(), ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, len(urls))
	for _, raw := range urls {
		u, err := url.Parse(raw)
		if err != nil {
			srv.Close()
			return fmt.Errorf("--listen-client-urls: %w", err)
		}
		if u.Scheme != "http" {
			srv.Close()
			return fmt.Errorf("--listen-client-urls %s: kubeplay's etcd stand-in listens on http URLs only", raw)
		}
		ln, err := net.Listen("tcp", u.Host)
		if err != nil {
			srv.Close()
			return err
		}
		go func() { errc <- srv.Serve(ln) }()
	}
	fmt.Fprintf(stdout, "kubeplay etcd stand-in (stores nothing) is serving on %s\n", strings.Join(urls, ", "))
	select {
	case err := <-errc:
		srv.Close()
		return err
	case <-ctx.Done():
		return srv.Close()
	}
}

// etcdHealth answers the HTTP endpoints of etcd's client port that tell
// whether it is up.
func etcdHealth() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"health":"true","reason":""}`)
	})
	ok := func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }
	mux.HandleFunc("GET /readyz", ok)
	mux.HandleFunc("GET /livez", ok)
	mux.HandleFunc("GET /version", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"etcdserver":%q,"etcdcluster":"3.6.0"}`, etcdVersion)
	})
	return mux
}
