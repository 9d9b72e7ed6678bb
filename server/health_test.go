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
var kubeplayChecks = map[string]bool{"ping": true, "log": true, "etcd": true, "etcd-readiness": true}

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
	for _, tc := range []struct {
		path string
		code int
		body string
	}{
		{"/livez", 500, "[+]ping ok\n[+]log ok\n[-]etcd failed: reason withheld\nlivez check failed\n"},
		{"/readyz?verbose", 500, "[+]ping ok\n[+]log ok\n[-]etcd failed: reason withheld\n[-]etcd-readiness failed: reason withheld\nreadyz check failed\n"},
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
