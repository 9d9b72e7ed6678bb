package e2e_test

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kubeplay/app"
	"kubeplay/e2e"
)

func TestKubectl_RBAC(t *testing.T) {
	kubectl := e2e.Kubectl(t, e2e.Start(t, t.TempDir()).URL)
	k := func(args ...string) (string, bool) {
		t.Helper()
		out, err := kubectl.Run(args...)
		return out, err == nil
	}
	expect := func(out string, ok, wantOK bool, want string) {
		t.Helper()
		if ok != wantOK || !strings.Contains(out, want) {
			t.Errorf("got (ok=%v) %q, want (ok=%v) %q", ok, out, wantOK, want)
		}
	}

	// Anonymous is the local sandbox's administrator.
	out, ok := k("auth", "whoami")
	expect(out, ok, true, "system:anonymous")
	expect(out, ok, true, "system:masters")
	out, ok = k("auth", "can-i", "--list")
	expect(out, ok, true, "*.*")

	// Every other user is what RBAC makes of it.
	out, ok = k("create", "namespace", "dev")
	expect(out, ok, true, "namespace/dev created")
	out, ok = k("--as", "alice", "get", "configmaps", "-n", "dev")
	expect(out, ok, false, `Error from server (Forbidden): configmaps is forbidden: User "alice" cannot list resource "configmaps" in API group "" in the namespace "dev"`)
	out, ok = k("auth", "can-i", "list", "configmaps", "-n", "dev", "--as", "alice")
	expect(out, ok, false, "no")
	out, ok = k("create", "rolebinding", "alice-view", "--clusterrole=view", "--user=alice", "-n", "dev")
	expect(out, ok, true, "rolebinding.rbac.authorization.k8s.io/alice-view created")
	// view gets its rules from the sandbox's aggregation controller.
	deadline := time.Now().Add(e2e.WaitLimit(t))
	for {
		out, ok = k("--as", "alice", "get", "configmaps", "-n", "dev")
		if ok || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	expect(out, ok, true, "No resources found in dev namespace.")
	out, ok = k("auth", "can-i", "list", "configmaps", "-n", "dev", "--as", "alice")
	expect(out, ok, true, "yes")
	out, ok = k("auth", "can-i", "create", "configmaps", "-n", "dev", "--as", "alice")
	expect(out, ok, false, "no")
	out, ok = k("auth", "can-i", "--list", "-n", "dev", "--as", "alice")
	expect(out, ok, true, "configmaps")
	out, ok = k("auth", "whoami", "--as", "alice", "--as-group", "devs")
	expect(out, ok, true, "alice")
	expect(out, ok, true, "[devs system:authenticated]")
}

// TestKubectl_Tokens runs a sandbox with anonymous access off: kubectl
// needs a token from the token file, sent over TLS.
func TestKubectl_Tokens(t *testing.T) {
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens.csv")
	if err := os.WriteFile(tokens, []byte("admin-token,admin,admin-uid,\"system:masters\"\nalice-token,alice,alice-uid,\"devs\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	url := e2e.Start(t, dir, "--tls", "--anonymous", "deny", "--token-auth-file", tokens).URL
	if !strings.HasPrefix(url, "https://") {
		t.Fatalf("serving on %s, want https", url)
	}
	kubectl := func(token string) *e2e.KubectlRunner {
		var buf bytes.Buffer
		args := []string{"kubeconfig", "--server", url, "--certificate-authority", filepath.Join(dir, "tls.crt"), "--token", token}
		if err := app.Run(t.Context(), args, &buf, os.Stderr); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "kubeconfig")
		if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		return e2e.KubectlConfig(t, path)
	}
	// Without credentials kubectl would prompt for a password: ask directly.
	client := tlsClient(t, dir)
	resp, err := client.Get(url + "/api/v1/namespaces")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	const unauthorized = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}`
	if resp.StatusCode != http.StatusUnauthorized || strings.TrimSpace(string(body)) != unauthorized {
		t.Errorf("without a token: %d %s, want 401 %s", resp.StatusCode, body, unauthorized)
	}
	out, err := kubectl("nope").Run("get", "namespaces")
	if err == nil || !strings.Contains(out, "You must be logged in to the server") {
		t.Errorf("with an unknown token: (err=%v) %s, want Unauthorized", err, out)
	}
	out, err = kubectl("alice-token").Run("auth", "whoami")
	if err != nil || !strings.Contains(out, "alice") || !strings.Contains(out, "alice-uid") || !strings.Contains(out, "[devs system:authenticated]") {
		t.Errorf("whoami as alice: (err=%v) %s", err, out)
	}
	out, err = kubectl("alice-token").Run("get", "namespaces")
	if err == nil || !strings.Contains(out, `User "alice" cannot list resource "namespaces"`) {
		t.Errorf("alice lists namespaces: (err=%v) %s, want Forbidden", err, out)
	}
	out, err = kubectl("admin-token").Run("get", "namespaces")
	if err != nil || !strings.Contains(out, "kube-system") {
		t.Errorf("admin lists namespaces: (err=%v) %s", err, out)
	}
}

// TestKubectl_ClientCertificates authenticates kubectl by a client
// certificate signed by --client-ca-file: the user is its common name, its
// groups its organizations.
func TestKubectl_ClientCertificates(t *testing.T) {
	dir := t.TempDir()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test-ca"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "carol", Organization: []string{"devs", "ops"}}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalECPrivateKey(key)
	write := func(name, typ string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: b}), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	caFile, certFile, keyFile := write("ca.crt", "CERTIFICATE", caDER), write("carol.crt", "CERTIFICATE", der), write("carol.key", "EC PRIVATE KEY", keyDER)

	url := e2e.Start(t, dir, "--tls", "--anonymous", "deny", "--client-ca-file", caFile).URL
	var buf bytes.Buffer
	if err := app.Run(t.Context(), []string{"kubeconfig", "--server", url, "--certificate-authority", filepath.Join(dir, "tls.crt")}, &buf, os.Stderr); err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	kubectl := e2e.KubectlConfig(t, kubeconfig)
	out, err := kubectl.Run("--client-certificate", certFile, "--client-key", keyFile, "auth", "whoami")
	// Organizations are a DER SET: they come back sorted by their encoding.
	if err != nil || !strings.Contains(out, "carol") || !strings.Contains(out, "[ops devs system:authenticated]") {
		t.Errorf("whoami with carol's certificate: (err=%v) %s", err, out)
	}
	// A certificate the CA did not sign is refused.
	otherKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	otherDER, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &otherKey.PublicKey, otherKey)
	if err != nil {
		t.Fatal(err)
	}
	otherKeyDER, _ := x509.MarshalECPrivateKey(otherKey)
	out, err = kubectl.Run("--client-certificate", write("self.crt", "CERTIFICATE", otherDER), "--client-key", write("self.key", "EC PRIVATE KEY", otherKeyDER), "get", "namespaces")
	if err == nil || !strings.Contains(out, "You must be logged in to the server") {
		t.Errorf("with a self-signed certificate: (err=%v) %s", err, out)
	}
}
