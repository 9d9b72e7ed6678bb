package playground_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"net/http"
	"testing"
	"time"
)

// certificateRequest is a base64 PEM certificate request for subject.
func certificateRequest(t *testing.T, subject pkix.Name) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: subject}, key)
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}))
}

// A kubelet's request for a client certificate, from someone who may make
// one, is approved and signed by the cluster's CA for as long as it asks;
// an approved request the signer cannot sign fails.
func TestCertificateControllers(t *testing.T) {
	sb := openSandbox(t)
	h := sb.Handler()
	const csrs = "/apis/certificates.k8s.io/v1/certificatesigningrequests"
	mustDo(t, h, 201, "POST", csrs, `{"metadata":{"name":"node-1"},"spec":{"signerName":"kubernetes.io/kube-apiserver-client-kubelet",`+
		`"usages":["digital signature","client auth"],"expirationSeconds":3600,"request":"`+
		certificateRequest(t, pkix.Name{CommonName: "system:node:node-1", Organization: []string{"system:nodes"}})+`"}}`)
	var csr map[string]any
	waitFor(t, "the certificate", func() bool {
		_, csr = do(t, h, "GET", csrs+"/node-1", "")
		status, _ := csr["status"].(map[string]any)
		return status["certificate"] != nil
	})
	status := csr["status"].(map[string]any)
	approved := status["conditions"].([]any)[0].(map[string]any)
	if approved["type"] != "Approved" || approved["reason"] != "AutoApproved" || approved["message"] != "Auto approving kubelet client certificate after SubjectAccessReview." {
		t.Errorf("condition %v", approved)
	}
	raw, _ := base64.StdEncoding.DecodeString(status["certificate"].(string))
	block, _ := pem.Decode(raw)
	if block == nil {
		t.Fatalf("certificate %q", raw)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if cert.Subject.CommonName != "system:node:node-1" || len(cert.ExtKeyUsage) != 1 || cert.ExtKeyUsage[0] != x509.ExtKeyUsageClientAuth {
		t.Errorf("certificate for %v, usages %v", cert.Subject, cert.ExtKeyUsage)
	}
	if life := cert.NotAfter.Sub(cert.NotBefore); life != time.Hour+5*time.Minute {
		t.Errorf("valid for %v, want an hour (backdated five minutes)", life)
	}
	_, rootCA := do(t, h, "GET", "/api/v1/namespaces/default/configmaps/kube-root-ca.crt", "")
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM([]byte(rootCA["data"].(map[string]any)["ca.crt"].(string)))
	if _, err := cert.Verify(x509.VerifyOptions{Roots: roots, CurrentTime: cert.NotBefore.Add(time.Minute), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("the certificate does not verify against kube-root-ca.crt: %v", err)
	}

	// Approved by hand, with a usage a client certificate cannot have.
	mustDo(t, h, 201, "POST", csrs, `{"metadata":{"name":"server"},"spec":{"signerName":"kubernetes.io/kube-apiserver-client",`+
		`"usages":["client auth","server auth"],"request":"`+certificateRequest(t, pkix.Name{CommonName: "someone"})+`"}}`)
	_, bad := do(t, h, "GET", csrs+"/server", "")
	bad["status"] = map[string]any{"conditions": []any{map[string]any{"type": "Approved", "status": "True", "reason": "ByHand"}}}
	mustDo(t, h, http.StatusOK, "PUT", csrs+"/server/approval", jsonOf(bad))
	waitFor(t, "the failure", func() bool {
		_, bad = do(t, h, "GET", csrs+"/server", "")
		conds := bad["status"].(map[string]any)["conditions"].([]any)
		last := conds[len(conds)-1].(map[string]any)
		return last["type"] == "Failed" && last["reason"] == "SignerValidationFailure" && last["message"] == "invalid usage for client certificate: server auth"
	})
	waitIdle(t, sb)
}
