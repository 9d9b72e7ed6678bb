package server

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"sync"
	"time"
)

// The cluster's certificate authority, as kubeadm's /etc/kubernetes/pki/ca:
// what kube-controller-manager publishes as ca.crt (the kube-root-ca.crt
// ConfigMaps, the service-account-token Secrets) and signs approved
// CertificateSigningRequests with. The server creates it once and keeps
// it, key and certificate, in its store outside /registry/ (no API serves
// it), so a persistent sandbox keeps its CA across restarts.
//
// The CA is the cluster's own: a sandbox reached through the playground
// is served over whatever TLS the process has, and kubeplay serve --tls or
// kubeplay kube-apiserver present a serving certificate of their own
// (tls.crt, --cert-dir, --tls-cert-file) that this CA did not sign. So the
// published ca.crt verifies what the CA signs (the certificates of
// CertificateSigningRequests), not the serving certificate: no pod runs
// here that could call the API through kubernetes.default.svc and need it.

const clusterCAKey = "/kubeplay/cluster-ca"

// clusterCAValidity is how long the CA is valid, as kubeadm's (ten years).
const clusterCAValidity = 10 * 365 * 24 * time.Hour

// ClusterCA is the cluster's certificate authority.
type ClusterCA struct {
	// CertPEM is the CA's certificate, PEM-encoded.
	CertPEM []byte
	cert    *x509.Certificate
	key     crypto.Signer
}

// clusterCAHolder loads the CA once; the zero value is ready.
type clusterCAHolder struct {
	mu sync.Mutex
	ca *ClusterCA
}

// ClusterCA returns the cluster's CA, creating it the first time.
func (s *Server) ClusterCA(ctx context.Context) (*ClusterCA, error) {
	h := &s.clusterCA
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ca != nil {
		return h.ca, nil
	}
	kv, err := s.reg.ownEntry(ctx, clusterCAKey, s.newClusterCA)
	if err != nil {
		return nil, err
	}
	ca, err := parseClusterCA(kv.Value)
	if err != nil {
		return nil, fmt.Errorf("%s is corrupt: %w", clusterCAKey, err)
	}
	h.ca = ca
	return ca, nil
}

// newClusterCA makes a new CA: its certificate and key, PEM-encoded.
func (s *Server) newClusterCA() ([]byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	// The clock may be a sandbox's, which scenarios move forward; the
	// certificate is checked against real clocks too: backdated by a day.
	now := s.reg.now()
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(0),
		Subject:               pkix.Name{CommonName: "kubernetes"},
		NotBefore:             now.Add(-24 * time.Hour),
		NotAfter:              now.Add(clusterCAValidity),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment | x509.KeyUsageCertSign,
	}
	if tmpl.SerialNumber, err = randomSerial(); err != nil {
		return nil, err
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	return append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})...), nil
}

func parseClusterCA(value []byte) (*ClusterCA, error) {
	certBlock, rest := pem.Decode(value)
	keyBlock, _ := pem.Decode(rest)
	if certBlock == nil || keyBlock == nil {
		return nil, errors.New("no certificate and key")
	}
	cert, err := x509.ParseCertificate(certBlock.Bytes)
	if err != nil {
		return nil, err
	}
	key, err := x509.ParseECPrivateKey(keyBlock.Bytes)
	if err != nil {
		return nil, err
	}
	return &ClusterCA{CertPEM: pem.EncodeToMemory(certBlock), cert: cert, key: key}, nil
}

func randomSerial() (*big.Int, error) {
	return rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
}

// Sign issues a certificate for pub as tmpl describes it (subject, usages,
// names, validity), signed by the CA, and returns it PEM-encoded. Its
// validity ends with the CA's at the latest, and it gets a random serial
// number, as kube-controller-manager's signer gives.
func (ca *ClusterCA) Sign(tmpl *x509.Certificate, pub crypto.PublicKey) ([]byte, error) {
	t := *tmpl
	var err error
	if t.SerialNumber, err = randomSerial(); err != nil {
		return nil, err
	}
	if t.NotAfter.After(ca.cert.NotAfter) {
		t.NotAfter = ca.cert.NotAfter
	}
	t.BasicConstraintsValid = true
	der, err := x509.CreateCertificate(rand.Reader, &t, ca.cert, pub, ca.key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), nil
}
