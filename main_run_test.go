package main

import (
	"bytes"
	"encoding/json"
	"kubeplay/app"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRun: kubeplay run prints each step and fails when an expectation
// does, for use in a docs site's CI.
func TestRun(t *testing.T) {
	var out bytes.Buffer
	if err := app.Run(t.Context(), []string{"run", "builtin:all"}, &out, os.Stderr); err != nil {
		t.Fatalf("builtin:all: %v\n%s", err, &out)
	}
	if !strings.Contains(out.String(), "ssa-conflicts\n  ✓ 1. alice applies 201") {
		t.Errorf("output:\n%s", &out)
	}

	failing := filepath.Join(t.TempDir(), "failing.yaml")
	os.WriteFile(failing, []byte(`apiVersion: kubeplay.dev/v1
kind: Scenario
name: failing
steps:
- name: a namespace that is not there
  request: {method: GET, path: /api/v1/namespaces/nowhere}
  expect: {status: 200}
`), 0o644)
	out.Reset()
	err := app.Run(t.Context(), []string{"run", failing}, &out, os.Stderr)
	if err == nil || err.Error() != "1 of 1 scenarios failed" {
		t.Errorf("a failing scenario: %v", err)
	}
	if !strings.Contains(out.String(), "✗ 1. a namespace that is not there 404") || !strings.Contains(out.String(), `status 404, want 200: {"kind":"Status"`) {
		t.Errorf("output:\n%s", &out)
	}
	if err := app.Run(t.Context(), []string{"run", "builtin:nope"}, &out, os.Stderr); err == nil {
		t.Errorf("an unknown built-in ran")
	}
}

// TestRun_remoteSandbox: kubeplay run --server against a sandbox of a hosted
// server runs the sandbox-only steps (controller actions, finalizer bots,
// the clock) through its playground API, with the admin token.
func TestRun_remoteSandbox(t *testing.T) {
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "admin-token")
	os.WriteFile(tokenFile, []byte("the-admin-token"), 0o600)
	url := startServer(t, dir, "--sandboxes-in-memory", "--playground-admin-token-file", tokenFile)
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
