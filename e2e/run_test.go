package e2e_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kubeplay/app"
	"kubeplay/e2e"
)

// TestRun_remoteSandbox: kubeplay run --server against a sandbox of a hosted
// server runs the sandbox-only steps (controller actions, finalizer bots,
// the clock) through its playground API, with the admin token.
func TestRun_remoteSandbox(t *testing.T) {
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "admin-token")
	os.WriteFile(tokenFile, []byte("the-admin-token"), 0o600)
	url := e2e.Start(t, dir, "--sandboxes-in-memory", "--playground-admin-token-file", tokenFile).URL
	req, _ := http.NewRequest("POST", url+"/playground/v1/sandboxes", nil)
	req.Header.Set("Authorization", "Bearer the-admin-token")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var sb struct{ Server, Token string }
	json.NewDecoder(resp.Body).Decode(&sb)
	resp.Body.Close()
	var out bytes.Buffer
	args := []string{"run", "--server", url + sb.Server, "--token", "the-admin-token", "builtin:controllers-at-work", "builtin:finalizer-bot"}
	if err := app.Run(t.Context(), args, &out, os.Stderr); err != nil {
		t.Fatalf("%v\n%s", err, &out)
	}
	if !strings.Contains(out.String(), "✓ 3. stop the Deployment and ReplicaSet controllers") || !strings.Contains(out.String(), "│ deployment.apps/web-") {
		t.Errorf("output:\n%s", &out)
	}
	// With the sandbox's own token, the playground API refuses the
	// sandbox-only steps.
	out.Reset()
	args[4] = sb.Token
	if err := app.Run(t.Context(), args[:6], &out, os.Stderr); err == nil || !strings.Contains(out.String(), "401") {
		t.Errorf("with the sandbox's token: %v\n%s", err, &out)
	}
}
