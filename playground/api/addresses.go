package api

import (
	"crypto/subtle"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"kubeplay/playground"
	"kubeplay/server/encoding"
)

// Addresses gives each sandbox an address of its own — a port serving its
// Kubernetes API at "/" — opened when its kubeconfig is first asked for and
// closed with the sandbox. A server URL with a path is not kept whole by
// every client: kubectl 1.20 to 1.33 drop it for `get --raw` and `proxy`,
// and would reach the root cluster instead; a URL without one is.
type Addresses struct {
	// Listen opens a new listener on a free port, on the interface the
	// playground API is served on.
	Listen func() (net.Listener, error)
	// TLS, when set, serves each address over HTTPS with it.
	TLS *tls.Config

	mu    sync.Mutex
	ports map[string]int // by sandbox id
}

// port returns the port of ms's address, opening it the first time.
func (a *Addresses) port(ms *playground.Managed) (int, error) {
	a.mu.Lock()
	if p, ok := a.ports[ms.ID()]; ok {
		a.mu.Unlock()
		return p, nil
	}
	ln, err := a.Listen()
	if err != nil {
		a.mu.Unlock()
		return 0, err
	}
	srv := &http.Server{Handler: ms.Handler(), ReadHeaderTimeout: 10 * time.Second, TLSConfig: a.TLS}
	go func() {
		if a.TLS != nil {
			srv.ServeTLS(ln, "", "")
			return
		}
		srv.Serve(ln)
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	if a.ports == nil {
		a.ports = map[string]int{}
	}
	a.ports[ms.ID()] = port
	a.mu.Unlock()
	// Outside the lock: fn runs at once if the sandbox is already gone.
	ms.OnClose(func() {
		srv.Close() // watches never end on their own
		a.mu.Lock()
		delete(a.ports, ms.ID())
		a.mu.Unlock()
	})
	return port, nil
}

// Open reports the port of the sandbox with id, if its address is open.
func (a *Addresses) Open(id string) (int, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	p, ok := a.ports[id]
	return p, ok
}

// serverURL is the URL of ms's Kubernetes API as a client that reached
// this server at r.Host can use: its own address where there are
// addresses, else its path here.
func (h *Handler) serverURL(r *http.Request, ms *playground.Managed) (string, error) {
	if h.Addresses == nil {
		return schemeOf(r) + "://" + r.Host + "/sandboxes/" + ms.ID(), nil
	}
	p, err := h.Addresses.port(ms)
	if err != nil {
		return "", err
	}
	return portURL(r, p), nil
}

// portURL is the URL of port on the host r reached.
func portURL(r *http.Request, port int) string {
	host := r.Host
	if hostname, _, err := net.SplitHostPort(r.Host); err == nil {
		host = hostname
	}
	return schemeOf(r) + "://" + net.JoinHostPort(strings.Trim(host, "[]"), strconv.Itoa(port))
}

func schemeOf(r *http.Request) string {
	if r.TLS != nil {
		return "https"
	}
	return "http"
}

// RefuseSandboxTokens wraps a site whose root is another cluster so that a
// request bearing a sandbox's token that reached that cluster instead of
// the sandbox is refused with a 401 saying where the sandbox is, rather
// than answered by the wrong cluster.
func (h *Handler) RefuseSandboxTokens(site http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		ours := strings.HasPrefix(r.URL.Path, "/sandboxes/") || strings.HasPrefix(r.URL.Path, Prefix+"/")
		if ms := h.sandboxOfToken(strings.TrimSpace(token)); ok && !ours && ms != nil {
			where := schemeOf(r) + "://" + r.Host + "/sandboxes/" + ms.ID()
			if h.Addresses != nil {
				if p, open := h.Addresses.Open(ms.ID()); open {
					where = portURL(r, p)
				}
			}
			encoding.WriteError(w, r, apierrors.NewUnauthorized(fmt.Sprintf(
				"Unauthorized: this is the token of sandbox %s, and this is the root cluster: the sandbox's API is at %s (kubectl get --raw and kubectl proxy up to 1.33 drop a server URL's path and land here; the sandbox's kubeconfig, %s/sandboxes/%s/kubeconfig, names an address they keep)",
				ms.ID(), where, Prefix, ms.ID())))
			return
		}
		site.ServeHTTP(w, r)
	})
}

// sandboxOfToken returns the sandbox whose own token is token, or nil.
func (h *Handler) sandboxOfToken(token string) *playground.Managed {
	if token == "" {
		return nil
	}
	for _, ms := range h.m.List() {
		if ms.Token() != "" && subtle.ConstantTimeCompare([]byte(ms.Token()), []byte(token)) == 1 {
			return ms
		}
	}
	return nil
}
