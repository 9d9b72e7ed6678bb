package playground_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"kubeplay/playground"
)

// openSandbox opens a sandbox running every controller but kubeadm's
// add-ons (see openCluster), once its default namespace has what the
// controllers give every namespace (the default ServiceAccount, which pods
// need, and kube-root-ca.crt), as a cluster's has by the time anyone uses it.
func openSandbox(t *testing.T) *playground.Sandbox {
	t.Helper()
	return withRootCA(t, openSandboxWith(t, playground.Options{}))
}

// openCluster opens a sandbox as openSandbox does, but as a user gets one:
// kube-system's add-ons (kube-proxy, kindnet, CoreDNS) included. Their
// fourteen pods, their events and the controllers' passes over them are
// six sevenths of a sandbox's start, so only tests about the whole cluster
// pay for them.
func openCluster(t *testing.T) *playground.Sandbox {
	t.Helper()
	addons := playground.Controllers{Off: map[string]bool{"kubeadm": false}}
	return withRootCA(t, openSandboxWith(t, playground.Options{Controllers: addons}))
}

// withRootCA returns sb once the root CA publisher has given its default
// namespace kube-root-ca.crt.
func withRootCA(t *testing.T, sb *playground.Sandbox) *playground.Sandbox {
	t.Helper()
	waitFor(t, "kube-root-ca.crt in default", func() bool {
		code, _ := do(t, sb.Handler(), "GET", "/api/v1/namespaces/default/configmaps/kube-root-ca.crt", "")
		return code == 200
	})
	return sb
}

func do(t testing.TB, h http.Handler, method, path, body string) (int, map[string]any) {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var out map[string]any
	json.Unmarshal(rec.Body.Bytes(), &out)
	return rec.Code, out
}

// waitFor polls cond until it holds. The deadline only bounds a broken run:
// it is the test binary's own (less a margin to report), so that a loaded
// machine makes a test slower, never failed.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	if d, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if end, ok := d.Deadline(); ok {
			deadline = end.Add(-10 * time.Second)
		}
	}
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestNamespaceController_DeletesContentThenNamespace(t *testing.T) {
	h := openSandbox(t).Handler()
	if code, _ := do(t, h, "POST", "/api/v1/namespaces", `{"metadata":{"name":"doomed"}}`); code != 201 {
		t.Fatalf("create namespace: %d", code)
	}
	do(t, h, "POST", "/api/v1/namespaces/doomed/configmaps", `{"metadata":{"name":"a"}}`)
	do(t, h, "POST", "/apis/apps/v1/namespaces/doomed/deployments", `{"metadata":{"name":"d"},"spec":{"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}}}`)
	do(t, h, "POST", "/api/v1/namespaces/doomed/secrets", `{"metadata":{"name":"held","finalizers":["example.com/hold"]}}`)

	code, ns := do(t, h, "DELETE", "/api/v1/namespaces/doomed", "")
	if code != 200 || ns["status"].(map[string]any)["phase"] != "Terminating" {
		t.Fatalf("delete namespace: %d %v", code, ns)
	}
	if code, _ := do(t, h, "POST", "/api/v1/namespaces/doomed/configmaps", `{"metadata":{"name":"late"}}`); code != 403 {
		t.Errorf("create in terminating namespace: %d, want 403", code)
	}
	waitFor(t, "content without finalizers to be deleted", func() bool {
		c1, _ := do(t, h, "GET", "/api/v1/namespaces/doomed/configmaps/a", "")
		c2, _ := do(t, h, "GET", "/apis/apps/v1/namespaces/doomed/deployments/d", "")
		return c1 == 404 && c2 == 404
	})
	// The secret's finalizer holds it, and so the namespace.
	code, secret := do(t, h, "GET", "/api/v1/namespaces/doomed/secrets/held", "")
	if code != 200 || secret["metadata"].(map[string]any)["deletionTimestamp"] == nil {
		t.Fatalf("held secret: %d %v", code, secret)
	}
	if code, _ := do(t, h, "GET", "/api/v1/namespaces/doomed", ""); code != 200 {
		t.Fatalf("namespace gone while content remains: %d", code)
	}
	secret["metadata"].(map[string]any)["finalizers"] = []any{}
	b, _ := json.Marshal(secret)
	if code, out := do(t, h, "PUT", "/api/v1/namespaces/doomed/secrets/held", string(b)); code != 200 {
		t.Fatalf("remove finalizer: %d %v", code, out)
	}
	waitFor(t, "the namespace to be removed", func() bool {
		code, _ := do(t, h, "GET", "/api/v1/namespaces/doomed", "")
		return code == 404
	})
}

// Pods go first (OrderedNamespaceDeletion): while a pod held by its
// finalizer remains, the rest of the namespace's content stays.
func TestNamespaceController_PodsFirst(t *testing.T) {
	sb := openSandbox(t)
	h := sb.Handler()
	if code, _ := do(t, h, "POST", "/api/v1/namespaces", `{"metadata":{"name":"ordered"}}`); code != 201 {
		t.Fatalf("create namespace: %d", code)
	}
	waitForDefaultServiceAccount(t, h, "ordered")
	mustDo(t, h, 201, "POST", "/api/v1/namespaces/ordered/pods", `{"metadata":{"name":"p","finalizers":["example.com/hold"]},"spec":{"containers":[{"name":"c","image":"pause"}]}}`)
	mustDo(t, h, 201, "POST", "/api/v1/namespaces/ordered/configmaps", `{"metadata":{"name":"cm"}}`)
	mustDo(t, h, 200, "DELETE", "/api/v1/namespaces/ordered", "")
	waitFor(t, "the pod's deletion to begin", func() bool {
		_, pod := do(t, h, "GET", "/api/v1/namespaces/ordered/pods/p", "")
		md, _ := pod["metadata"].(map[string]any)
		return md["deletionTimestamp"] != nil
	})
	waitIdle(t, sb)
	if code, _ := do(t, h, "GET", "/api/v1/namespaces/ordered/configmaps/cm", ""); code != 200 {
		t.Fatalf("the ConfigMap went while a pod remained: %d", code)
	}
	_, pod := do(t, h, "GET", "/api/v1/namespaces/ordered/pods/p", "")
	pod["metadata"].(map[string]any)["finalizers"] = []any{}
	b, _ := json.Marshal(pod)
	mustDo(t, h, 200, "PUT", "/api/v1/namespaces/ordered/pods/p", string(b))
	waitFor(t, "the namespace to be removed", func() bool {
		code, _ := do(t, h, "GET", "/api/v1/namespaces/ordered", "")
		return code == 404
	})
}
