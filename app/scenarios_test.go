package app

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRun: kubeplay run prints each step and fails when an expectation
// does, for use in a docs site's CI.
func TestRun(t *testing.T) {
	var out bytes.Buffer
	if err := Run(t.Context(), []string{"run", "builtin:all"}, &out, os.Stderr); err != nil {
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
	err := Run(t.Context(), []string{"run", failing}, &out, os.Stderr)
	if err == nil || err.Error() != "1 of 1 scenarios failed" {
		t.Errorf("a failing scenario: %v", err)
	}
	if !strings.Contains(out.String(), "✗ 1. a namespace that is not there 404") || !strings.Contains(out.String(), `status 404, want 200: {"kind":"Status"`) {
		t.Errorf("output:\n%s", &out)
	}
	if err := Run(t.Context(), []string{"run", "builtin:nope"}, &out, os.Stderr); err == nil {
		t.Errorf("an unknown built-in ran")
	}
}
