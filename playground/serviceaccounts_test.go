package playground_test

import (
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"net/http"
	"strings"
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

// A service-account-token Secret gets a token the API accepts, the CA and
// the namespace; it goes with its ServiceAccount, and its token with it.
func TestServiceAccountTokenController(t *testing.T) {
	sb := openSandbox(t)
	h := sb.Handler()
	mustDo(t, h, 201, "POST", "/api/v1/namespaces/default/serviceaccounts", `{"metadata":{"name":"robot"}}`)
	secret := "/api/v1/namespaces/default/secrets/robot-token"
	mustDo(t, h, 201, "POST", "/api/v1/namespaces/default/secrets",
		`{"metadata":{"name":"robot-token","annotations":{"kubernetes.io/service-account.name":"robot"}},"type":"kubernetes.io/service-account-token"}`)
	var data map[string]any
	waitFor(t, "the token", func() bool {
		_, s := do(t, h, "GET", secret, "")
		data, _ = s["data"].(map[string]any)
		return data["token"] != nil
	})
	decode := func(k string) string {
		b, err := base64.StdEncoding.DecodeString(data[k].(string))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if ns := decode("namespace"); ns != "default" {
		t.Errorf("namespace %q", ns)
	}
	if !strings.HasPrefix(decode("ca.crt"), "-----BEGIN CERTIFICATE-----") {
		t.Errorf("ca.crt %q", decode("ca.crt"))
	}
	review := func() map[string]any {
		out := mustDo(t, h, 201, "POST", "/apis/authentication.k8s.io/v1/tokenreviews", `{"spec":{"token":"`+decode("token")+`"}}`)
		return out["status"].(map[string]any)
	}
	status := review()
	if user, _ := status["user"].(map[string]any); status["authenticated"] != true || user["username"] != "system:serviceaccount:default:robot" {
		t.Errorf("token review: %v", status)
	}
	mustDo(t, h, 200, "DELETE", "/api/v1/namespaces/default/serviceaccounts/robot", "")
	waitFor(t, "the Secret to go with its ServiceAccount", gone(t, h, secret))
	if status := review(); status["authenticated"] == true {
		t.Errorf("the token of a deleted Secret: %v", status)
	}
}
