package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSandboxes_kubectl: kubectl works against a sandbox with the kubeconfig
// the playground API hands out, and the sandbox is not the root's cluster.
func TestSandboxes_kubectl(t *testing.T) {
	dir := t.TempDir()
	url := startServer(t, dir, "--sandbox-max-objects", "-1")
	resp, err := http.Post(url+"/playground/v1/sandboxes", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	var sb struct{ ID string }
	json.NewDecoder(resp.Body).Decode(&sb)
	resp.Body.Close()
	if resp.StatusCode != 201 || sb.ID == "" {
		t.Fatalf("create: %d %+v", resp.StatusCode, sb)
	}
	if _, err := os.Stat(filepath.Join(dir, "sandboxes", "sandbox-"+sb.ID+".db")); err != nil {
		t.Errorf("the sandbox's database in DIR/sandboxes: %v", err)
	}
	resp, err = http.Get(url + "/playground/v1/sandboxes/" + sb.ID + "/kubeconfig")
	if err != nil {
		t.Fatal(err)
	}
	kc, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, kc, 0o600); err != nil {
		t.Fatal(err)
	}
	k := func(args ...string) string {
		t.Helper()
		out, ok := kubectlRun(t, kubeconfig, "", args...)
		if !ok {
			t.Fatalf("kubectl %s: %s", strings.Join(args, " "), out)
		}
		return out
	}
	k("create", "configmap", "in-sandbox", "--from-literal=a=b")
	if out := k("get", "configmaps", "-o", "name"); !strings.Contains(out, "configmap/in-sandbox") {
		t.Errorf("get configmaps: %s", out)
	}
	if out := k("api-resources", "--api-group=apps"); !strings.Contains(out, "deployments") {
		t.Errorf("api-resources: %s", out)
	}
	if out := k("version", "-o", "json"); !strings.Contains(out, `"serverVersion"`) {
		t.Errorf("version: %s", out)
	}
	if out := k("explain", "configmap.data"); !strings.Contains(out, "FIELD: data") {
		t.Errorf("explain (OpenAPI under the prefix): %s", out)
	}
	// The root cluster does not have it.
	if out, ok := kubectlRun(t, "", url, "get", "configmap", "in-sandbox", "-n", "default"); ok || !strings.Contains(out, "NotFound") {
		t.Errorf("the root cluster: (ok=%v) %s", ok, out)
	}
}
