package playground_test

import (
	"crypto/x509"
	"encoding/pem"
	"net/http"
	"testing"
)

// waitForDefaultServiceAccount waits for the serviceaccount controller to
// make namespace ns's default ServiceAccount, which a pod there needs: as
// in a cluster, a pod created in a namespace just made may come too soon.
func waitForDefaultServiceAccount(t testing.TB, h http.Handler, ns string) {
	t.Helper()
	waitFor(t, "the default ServiceAccount of "+ns, func() bool {
		code, _ := do(t, h, "GET", "/api/v1/namespaces/"+ns+"/serviceaccounts/default", "")
		return code == http.StatusOK
	})
}

// Every namespace gets its default ServiceAccount and the kube-root-ca.crt
// ConfigMap, made again when deleted, the ConfigMap put back when changed;
// a terminating namespace gets neither again.
func TestServiceAccountController_DefaultAndRootCA(t *testing.T) {
	sb := openSandbox(t)
	h := sb.Handler()
	for _, ns := range []string{"default", "kube-system", "kube-public", "kube-node-lease"} {
		waitForDefaultServiceAccount(t, h, ns)
	}
	mustDo(t, h, 201, "POST", "/api/v1/namespaces", `{"metadata":{"name":"team"}}`)
	waitForDefaultServiceAccount(t, h, "team")
	rootCA := "/api/v1/namespaces/team/configmaps/kube-root-ca.crt"
	var cm map[string]any
	waitFor(t, "kube-root-ca.crt", func() bool {
		code, out := do(t, h, "GET", rootCA, "")
		cm = out
		return code == http.StatusOK
	})
	md := cm["metadata"].(map[string]any)
	if d := md["annotations"].(map[string]any)["kubernetes.io/description"]; d != "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters." {
		t.Errorf("description %q", d)
	}
	caPEM := cm["data"].(map[string]any)["ca.crt"].(string)
	block, _ := pem.Decode([]byte(caPEM))
	if block == nil {
		t.Fatalf("ca.crt is no PEM: %q", caPEM)
	}
	ca, err := x509.ParseCertificate(block.Bytes)
	if err != nil || !ca.IsCA {
		t.Fatalf("ca.crt: %v, CA %v", err, ca != nil && ca.IsCA)
	}
	if ua := md["managedFields"].([]any)[0].(map[string]any)["manager"]; ua != "kube-controller-manager" {
		t.Errorf("manager %v", ua)
	}

	mustDo(t, h, 200, "DELETE", "/api/v1/namespaces/team/serviceaccounts/default", "")
	waitForDefaultServiceAccount(t, h, "team")
	mustDo(t, h, 200, "PUT", rootCA, `{"metadata":{"name":"kube-root-ca.crt"},"data":{"ca.crt":"changed"}}`)
	waitFor(t, "ca.crt put back", func() bool {
		_, cm := do(t, h, "GET", rootCA, "")
		data, _ := cm["data"].(map[string]any)
		annotations, _ := cm["metadata"].(map[string]any)["annotations"].(map[string]any)
		return data["ca.crt"] == caPEM && annotations["kubernetes.io/description"] != nil
	})
	mustDo(t, h, 200, "DELETE", rootCA, "")
	waitFor(t, "kube-root-ca.crt made again", func() bool {
		code, _ := do(t, h, "GET", rootCA, "")
		return code == http.StatusOK
	})
	// The CA is the sandbox's: every namespace publishes the same.
	_, other := do(t, h, "GET", "/api/v1/namespaces/default/configmaps/kube-root-ca.crt", "")
	if got := other["data"].(map[string]any)["ca.crt"]; got != caPEM {
		t.Errorf("default's ca.crt differs from team's")
	}

	// A namespace held in Terminating gets no new ServiceAccount.
	createCM(t, h, "team", "held", `"finalizers":["example.com/hold"]`)
	mustDo(t, h, 200, "DELETE", "/api/v1/namespaces/team", "")
	waitFor(t, "the namespace's ServiceAccount to go", gone(t, h, "/api/v1/namespaces/team/serviceaccounts/default"))
	waitIdle(t, sb)
	if code, _ := do(t, h, "GET", "/api/v1/namespaces/team/serviceaccounts/default", ""); code != http.StatusNotFound {
		t.Errorf("a terminating namespace's default ServiceAccount: %d", code)
	}
	assertStaysIdle(t, sb)
}
