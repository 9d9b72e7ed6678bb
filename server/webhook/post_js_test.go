//go:build js && wasm

package webhook_test

import (
	"net/url"
	"testing"
	"time"

	"kubeplay/server/webhook"
)

// TestPost_Browser checks that a call from the browser engine fails as a
// call to an unreachable webhook does.
func TestPost_Browser(t *testing.T) {
	u, _ := url.Parse("https://127.0.0.1:9443/mutate")
	_, err := webhook.Post(t.Context(), webhook.Endpoint{URL: u}, time.Second, []byte("{}"))
	want := `Post "https://127.0.0.1:9443/mutate?timeout=1s": webhooks cannot be reached from the browser engine`
	if err == nil || err.Error() != want {
		t.Fatalf("got %v", err)
	}
}
