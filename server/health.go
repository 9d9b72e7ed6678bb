package server

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"kubeplay/server/catalog"
)

// healthCheck is one named check of /livez, /readyz or /healthz; it returns
// nil when healthy.
type healthCheck struct {
	name  string
	check func(*http.Request) error
}

// healthChecks lists the checks of endpoint ("livez", "readyz", "healthz"),
// in kube-apiserver's order and by its names. Only the checks that are true
// of kubeplay are listed: ping and log (always healthy: kubeplay logs
// synchronously), etcd (the store answers a read), for readyz
// etcd-readiness (the same) and informer-sync (kubeplay reads the store
// itself, with no cache to fill), and the post-start hooks whose work
// kubeplay does before New returns (postStartHooks). Priority and fairness,
// the identity leases, the token tracking and authentication ConfigMaps and
// the shutdown check have no counterpart here, so they are left out rather
// than reported as ok.
func (s *Server) healthChecks(endpoint string) []healthCheck {
	ok := func(*http.Request) error { return nil }
	store := func(r *http.Request) error {
		return s.reg.storeHealth(r.Context())
	}
	checks := []healthCheck{{"ping", ok}, {"log", ok}, {"etcd", store}}
	if endpoint == "readyz" {
		checks = append(checks, healthCheck{"etcd-readiness", store}, healthCheck{"informer-sync", ok})
	}
	for _, hook := range postStartHooks() {
		checks = append(checks, healthCheck{hook, ok})
	}
	return checks
}

// postStartHooks are the names of kube-apiserver's post-start hooks (and
// its autoregister-completion check), in its order, whose work kubeplay has
// done once New returns: its admission chain and authorizer read the store,
// with no informers to start; New bootstraps the system namespaces, the
// kubernetes Service and the other objects kube-apiserver creates at start
// (a hook is listed once the bootstrap stores its objects), and loads the
// CustomResourceDefinitions, which the write path of a CRD names and
// establishes (the apiextensions controllers); a Service's addresses are
// allocated from the stored Services, so there is no allocation to repair.
// Computed once (the prebuilt objects are the binary's): reading them again
// made every /readyz and /healthz cost ~1 ms and 3,300 allocations.
var postStartHooks = sync.OnceValue(func() []string {
	var hooks []string
	for _, h := range []struct {
		name string
		// needs is the resource the bootstrap must store objects of, if
		// any; object, when set, the one it must store ("namespace/name").
		needs  schema.GroupVersionResource
		object string
	}{
		{name: "poststarthook/start-apiserver-admission-initializer"},
		{name: "poststarthook/generic-apiserver-start-informers"},
		{name: "poststarthook/start-apiextensions-informers"},
		{name: "poststarthook/start-apiextensions-controllers"},
		{name: "poststarthook/crd-informer-synced"},
		{name: "poststarthook/start-system-namespaces-controller", needs: schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}},
		{name: "poststarthook/start-cluster-authentication-info-controller", needs: configMaps, object: "kube-system/extension-apiserver-authentication"},
		{name: "poststarthook/start-legacy-token-tracking-controller", needs: configMaps, object: "kube-system/kube-apiserver-legacy-service-account-token-tracking"},
		{name: "poststarthook/start-service-ip-repair-controllers"},
		{name: "poststarthook/scheduling/bootstrap-system-priority-classes", needs: schema.GroupVersionResource{Group: "scheduling.k8s.io", Version: "v1", Resource: "priorityclasses"}},
		{name: "poststarthook/priority-and-fairness-config-producer", needs: schema.GroupVersionResource{Group: "flowcontrol.apiserver.k8s.io", Version: "v1", Resource: "flowschemas"}},
		{name: "poststarthook/bootstrap-controller", needs: schema.GroupVersionResource{Version: "v1", Resource: "services"}},
		{name: "poststarthook/start-kubernetes-service-cidr-controller", needs: schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "servicecidrs"}},
		// The aggregator's work, once kube-apiserver's own APIServices
		// exist: kubeplay serves every group version they name, itself
		// (none is remote), in its discovery and OpenAPI documents.
		{name: "poststarthook/start-kube-aggregator-informers", needs: apiServices},
		{name: "poststarthook/apiservice-status-local-available-controller", needs: apiServices},
		{name: "poststarthook/apiservice-status-remote-available-controller", needs: apiServices},
		{name: "poststarthook/apiservice-registration-controller", needs: apiServices},
		{name: "poststarthook/apiservice-discovery-controller", needs: apiServices},
		{name: "poststarthook/kube-apiserver-autoregistration", needs: apiServices},
		{name: "autoregister-completion", needs: apiServices},
		{name: "poststarthook/apiservice-openapi-controller", needs: apiServices},
		{name: "poststarthook/apiservice-openapiv3-controller", needs: apiServices},
	} {
		if h.needs.Resource == "" || bootstraps(h.needs, h.object) {
			hooks = append(hooks, h.name)
		}
	}
	return hooks
})

// apiServices are the APIServices kube-apiserver registers for its own
// group versions.
var apiServices = schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}

// configMaps are the ConfigMaps kube-apiserver publishes its
// configuration in.
var configMaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// bootstraps reports whether the bootstrap stores objects of the built-in
// resource gvr, or, given, the object "namespace/name" of it.
func bootstraps(gvr schema.GroupVersionResource, object string) bool {
	res := catalog.LookupBuiltin(gvr)
	if res == nil {
		return false
	}
	// The key or prefix made once, not per line: postStartHooks' first call,
	// on the path of a browser engine's first answer, took 40-60 ms so
	// under Node.
	prefix := collectionPrefix(res, "")
	matches := func(l prebuilt) bool { return strings.HasPrefix(l.key, prefix) }
	if ns, name, ok := strings.Cut(object, "/"); ok {
		key := objectKey(res, ns, name)
		matches = func(l prebuilt) bool { return l.key == key }
	}
	return slices.ContainsFunc(prebuiltLines(), matches)
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
