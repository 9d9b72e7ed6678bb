package server

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// healthCheck is one named check of /livez, /readyz or /healthz; it returns
// nil when healthy.
type healthCheck struct {
	name  string
	check func(*http.Request) error
}

// healthChecks lists the checks of endpoint ("livez", "readyz", "healthz"),
// in kube-apiserver's order. Only the checks that mean something for kubeplay
// are kept: ping and log (always healthy: kubeplay logs synchronously), etcd
// (the store answers a read) and, for readyz, etcd-readiness (the same). The
// kube-apiserver post-start hooks, informer-sync and shutdown have nothing
// to check here (no controllers started by the server, no watch cache, no
// graceful-shutdown phase), so they are left out rather than reported as
// always ok.
func (s *Server) healthChecks(endpoint string) []healthCheck {
	ok := func(*http.Request) error { return nil }
	store := func(r *http.Request) error {
		_, err := s.store.CurrentRevision(r.Context())
		return err
	}
	checks := []healthCheck{{"ping", ok}, {"log", ok}, {"etcd", store}}
	if endpoint == "readyz" {
		checks = append(checks, healthCheck{"etcd-readiness", store})
	}
	return checks
}

// serveHealth answers /<endpoint> and /<endpoint>/<check> for any method, as
// kube-apiserver does: "ok", or with ?verbose a line per check; a failing
// check makes it a 500 that lists every check. ?exclude=<check> (repeatable)
// skips a check, and names that match none are reported in verbose output.
func (s *Server) serveHealth(w http.ResponseWriter, r *http.Request, endpoint string, rest []string) {
	checks := s.healthChecks(endpoint)
	if strings.HasSuffix(r.URL.Path, "/") {
		http.NotFound(w, r)
		return
	}
	if len(rest) > 0 {
		name := strings.Join(rest, "/")
		i := slices.IndexFunc(checks, func(c healthCheck) bool { return c.name == name })
		if i < 0 {
			http.NotFound(w, r)
			return
		}
		if err := checks[i].check(r); err != nil {
			http.Error(w, fmt.Sprintf("internal server error: %v", err), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprint(w, "ok")
		return
	}
	query := r.URL.Query()
	_, verbose := query["verbose"]
	// Excluded names are a set, reported in sorted order.
	excluded := slices.Compact(slices.Sorted(slices.Values(query["exclude"])))
	var out strings.Builder
	failed := false
	for _, c := range checks {
		if slices.Contains(excluded, c.name) {
			excluded = slices.DeleteFunc(excluded, func(e string) bool { return e == c.name })
			fmt.Fprintf(&out, "[+]%s excluded: ok\n", c.name)
			continue
		}
		if err := c.check(r); err != nil {
			// kube-apiserver withholds the reason from the response.
			fmt.Fprintf(&out, "[-]%s failed: reason withheld\n", c.name)
			failed = true
			continue
		}
		fmt.Fprintf(&out, "[+]%s ok\n", c.name)
	}
	if len(excluded) > 0 {
		quoted := make([]string, len(excluded))
		for i, e := range excluded {
			quoted[i] = fmt.Sprintf("%q", e)
		}
		fmt.Fprintf(&out, "warn: some health checks cannot be excluded: no matches for %s\n", strings.Join(quoted, ","))
	}
	if failed {
		http.Error(w, out.String()+endpoint+" check failed", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if verbose {
		fmt.Fprintf(w, "%s%s check passed\n", out.String(), endpoint)
		return
	}
	fmt.Fprint(w, "ok")
}
