package server_test

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"kubeplay/server"
	"kubeplay/store"
)

// checkLine matches one line of a verbose health answer.
var checkLine = regexp.MustCompile(`^\[[+-]\](\S+) `)

// kubeplayChecks are the checks kubeplay keeps of kube-apiserver's (see
// Server.healthChecks for why the others are left out).
var kubeplayChecks = map[string]bool{
	"ping": true, "log": true, "etcd": true, "etcd-readiness": true, "informer-sync": true,
	"poststarthook/start-apiserver-admission-initializer": true, "poststarthook/generic-apiserver-start-informers": true,
	"poststarthook/start-apiextensions-informers": true, "poststarthook/start-apiextensions-controllers": true,
	"poststarthook/crd-informer-synced": true, "poststarthook/start-system-namespaces-controller": true,
	"poststarthook/start-service-ip-repair-controllers": true, "poststarthook/bootstrap-controller": true,
	"poststarthook/scheduling/bootstrap-system-priority-classes": true, "poststarthook/priority-and-fairness-config-producer": true,
	"poststarthook/start-kubernetes-service-cidr-controller": true, "poststarthook/start-kube-aggregator-informers": true, "poststarthook/apiservice-status-local-available-controller": true,
	"poststarthook/apiservice-status-remote-available-controller": true, "poststarthook/apiservice-registration-controller": true,
	"poststarthook/apiservice-discovery-controller": true, "poststarthook/kube-apiserver-autoregistration": true,
	"autoregister-completion": true, "poststarthook/apiservice-openapi-controller": true, "poststarthook/apiservice-openapiv3-controller": true,
}

// TestHealth_MatchesOracle replays health requests recorded from
// kube-apiserver v1.35.4. Status codes and headers must be the oracle's;
// verbose bodies must be the oracle's with the lines of the checks kubeplay
// does not have removed; other bodies must be equal.
func TestHealth_MatchesOracle(t *testing.T) {
	var requests []exchange
	for _, p := range []string{
		"/livez", "/readyz", "/healthz", "/livez?verbose", "/readyz?verbose", "/healthz?verbose", "/livez?verbose=false",
		"/livez?verbose&exclude=etcd&exclude=zz&exclude=nope&exclude=zz", "/readyz?exclude=ping", "/readyz?verbose&exclude=etcd-readiness",
		"/healthz?verbose&exclude=etcd,ping", "/livez/ping", "/livez/etcd", "/livez/log?verbose", "/readyz/etcd-readiness",
		"/healthz/etcd", "/livez/", "/livez/nonexistent", "/readyz/ping/", "/healthz/etcd-readiness",
		"/readyz/informer-sync", "/livez/informer-sync", "/healthz/poststarthook/start-system-namespaces-controller",
		"/livez/poststarthook/crd-informer-synced?verbose", "/readyz/poststarthook/bootstrap-controller",
		"/livez/poststarthook", "/livez/poststarthook/", "/readyz?verbose&exclude=poststarthook/bootstrap-controller&exclude=informer-sync",
	} {
		requests = append(requests, exchange{Method: http.MethodGet, Path: p})
	}
	for _, m := range []string{http.MethodPost, http.MethodDelete, http.MethodHead} {
		requests = append(requests, exchange{Method: m, Path: "/livez"}, exchange{Method: m, Path: "/readyz/etcd"})
	}
	oracle, send := exchanges(t, newTestServer(t), requests)
	for _, want := range oracle {
		want.Body = withoutForeignChecks(want.Body)
		checkExchange(t, send(want), want, true)
	}
}

func withoutForeignChecks(body string) string {
	var out strings.Builder
	for _, line := range strings.SplitAfter(body, "\n") {
		if m := checkLine.FindStringSubmatch(line); m != nil && !kubeplayChecks[m[1]] {
			continue
		}
		out.WriteString(line)
	}
	return out.String()
}

// TestHealth_StoreDown checks the answers when the store fails, in the
// shape of kube-apiserver's health handler when a check fails: every check
// listed, the reason withheld, 500.
func TestHealth_StoreDown(t *testing.T) {
	st, err := store.Open(t.Context(), ":memory:", store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(t.Context(), server.Options{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	// The post-start hooks ran when the server started.
	const hooksOK = "[+]poststarthook/start-apiserver-admission-initializer ok\n[+]poststarthook/generic-apiserver-start-informers ok\n" +
		"[+]poststarthook/start-apiextensions-informers ok\n[+]poststarthook/start-apiextensions-controllers ok\n" +
		"[+]poststarthook/crd-informer-synced ok\n[+]poststarthook/start-system-namespaces-controller ok\n" +
		"[+]poststarthook/start-service-ip-repair-controllers ok\n[+]poststarthook/scheduling/bootstrap-system-priority-classes ok\n" +
		"[+]poststarthook/priority-and-fairness-config-producer ok\n[+]poststarthook/bootstrap-controller ok\n" +
		"[+]poststarthook/start-kubernetes-service-cidr-controller ok\n" +
		"[+]poststarthook/start-kube-aggregator-informers ok\n[+]poststarthook/apiservice-status-local-available-controller ok\n" +
		"[+]poststarthook/apiservice-status-remote-available-controller ok\n[+]poststarthook/apiservice-registration-controller ok\n" +
		"[+]poststarthook/apiservice-discovery-controller ok\n[+]poststarthook/kube-apiserver-autoregistration ok\n" +
		"[+]autoregister-completion ok\n[+]poststarthook/apiservice-openapi-controller ok\n[+]poststarthook/apiservice-openapiv3-controller ok\n"
	for _, tc := range []struct {
		path string
		code int
		body string
	}{
		{"/livez", 500, "[+]ping ok\n[+]log ok\n[-]etcd failed: reason withheld\n" + hooksOK + "livez check failed\n"},
		{"/readyz?verbose", 500, "[+]ping ok\n[+]log ok\n[-]etcd failed: reason withheld\n[-]etcd-readiness failed: reason withheld\n[+]informer-sync ok\n" + hooksOK + "readyz check failed\n"},
		{"/livez?exclude=etcd", 200, "ok"},
		{"/livez/ping", 200, "ok"},
	} {
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tc.path, nil))
		if rec.Code != tc.code || rec.Body.String() != tc.body {
			t.Errorf("GET %s: %d %q, want %d %q", tc.path, rec.Code, rec.Body, tc.code, tc.body)
		}
	}
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/livez/etcd", nil))
	if rec.Code != 500 || !strings.HasPrefix(rec.Body.String(), "internal server error: ") {
		t.Errorf("GET /livez/etcd: %d %q", rec.Code, rec.Body)
	}
}
