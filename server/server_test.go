package server_test

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"kubeplay/server"
	"kubeplay/server/authn"
	"kubeplay/store"
)

// waitLimit bounds a wait for something that must happen. It only ends a
// broken run, so it is generous: a loaded machine (CI) can be many times
// slower than an idle one. It leaves a margin before the test binary's
// -timeout for the test to fail with its own message.
func waitLimit(t *testing.T) time.Duration {
	if d, ok := t.Deadline(); ok {
		return max(time.Until(d)-30*time.Second, time.Until(d)/2)
	}
	return 2 * time.Minute
}

// newTestServer returns a kubeplay API server over a fresh in-memory store,
// accepting the bearer tokens of testdata/auth-tokens.csv.
func newTestServer(t testing.TB) http.Handler {
	t.Helper()
	return newTestServerWith(t, server.Options{})
}

// newTestServerStore is newTestServer, also returning its store (to compact it).
func newTestServerStore(t testing.TB) (http.Handler, store.Store) {
	t.Helper()
	st, err := store.Open(t.Context(), ":memory:", store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return newTestServerWith(t, server.Options{Store: st}), st
}

// newTestServerWith is newTestServer with other options; its Tokens are set,
// and its Store unless given.
func newTestServerWith(t testing.TB, opts server.Options) http.Handler {
	t.Helper()
	if opts.Store == nil {
		st, err := store.Open(t.Context(), ":memory:", store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		opts.Store = st
	}
	f, err := os.Open(filepath.Join("testdata", "auth-tokens.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tokens, err := authn.ParseTokenFile(f)
	if err != nil {
		t.Fatal(err)
	}
	opts.Tokens = tokens
	srv, err := server.New(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

// createDefaultServiceAccount makes namespace ns's default ServiceAccount,
// without which the ServiceAccount admission plugin refuses a pod there: in
// a cluster the serviceaccount controller makes it; the bare server runs
// none.
func createDefaultServiceAccount(t testing.TB, h http.Handler, ns string) {
	t.Helper()
	if code, body := callAPI(t, h, "POST", "/api/v1/namespaces/"+ns+"/serviceaccounts", `{"metadata":{"name":"default"}}`); code != http.StatusCreated {
		t.Fatalf("create the default ServiceAccount of %s: %d %s", ns, code, body)
	}
}
