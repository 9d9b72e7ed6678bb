package server_test

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"kubeplay/server"
	"kubeplay/server/authn"
	"kubeplay/store"
)

// newTestServer returns a kubeplay API server over a fresh in-memory store,
// accepting the bearer tokens of testdata/auth-tokens.csv.
func newTestServer(t *testing.T) http.Handler {
	t.Helper()
	return newTestServerWith(t, server.Options{})
}

// newTestServerWith is newTestServer with other options; their Store and
// Tokens are set.
func newTestServerWith(t testing.TB, opts server.Options) http.Handler {
	t.Helper()
	st, err := store.Open(t.Context(), ":memory:", store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	f, err := os.Open(filepath.Join("testdata", "auth-tokens.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tokens, err := authn.ParseTokenFile(f)
	if err != nil {
		t.Fatal(err)
	}
	opts.Store, opts.Tokens = st, tokens
	srv, err := server.New(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return srv
}
