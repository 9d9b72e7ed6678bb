package server_test

import (
	"net/http"
	"testing"

	"kubeplay/server"
	"kubeplay/store"
)

// newTestServer returns a kubeplay API server over a fresh in-memory store.
func newTestServer(t testing.TB) http.Handler {
	t.Helper()
	st, err := store.Open(t.Context(), ":memory:", store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	srv, err := server.New(t.Context(), server.Options{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	return srv
}
