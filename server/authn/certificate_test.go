package authn_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/hex"
	"math/big"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"

	"kubeplay/server/authn"
)

// TestAuthenticator_ClientCertificates: client certificates signed by the
// client CAs are users as kube-apiserver makes them (common name, groups
// from organizations, uid from the UID attribute, the certificate's SHA-256
// as credential id); other credentials are tried when a certificate has no
// common name or does not verify.
func TestAuthenticator_ClientCertificates(t *testing.T) {
	ca, caKey := newCA(t)
	other, otherKey := newCA(t)
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	opts := authn.Options{ClientCAs: pool, Tokens: map[string]authn.User{"t1": {Name: "bob"}}}
	uid := pkix.AttributeTypeAndValue{Type: asn1.ObjectIdentifier{0, 9, 2342, 19200300, 100, 1, 1}, Value: "u-1"}

	alice := newCert(t, ca, caKey, pkix.Name{CommonName: "alice", Organization: []string{"devs", "system:masters"}}, x509.ExtKeyUsageClientAuth)
	withUID := newCert(t, ca, caKey, pkix.Name{CommonName: "carol", ExtraNames: []pkix.AttributeTypeAndValue{uid}}, x509.ExtKeyUsageClientAuth)
	noName := newCert(t, ca, caKey, pkix.Name{Organization: []string{"devs"}}, x509.ExtKeyUsageClientAuth)
	serverOnly := newCert(t, ca, caKey, pkix.Name{CommonName: "alice"}, x509.ExtKeyUsageServerAuth)
	foreign := newCert(t, other, otherKey, pkix.Name{CommonName: "mallory"}, x509.ExtKeyUsageClientAuth)

	credential := func(c *x509.Certificate) map[string][]string {
		sum := sha256.Sum256(c.Raw)
		return map[string][]string{"authentication.kubernetes.io/credential-id": {"X509SHA256=" + hex.EncodeToString(sum[:])}}
	}
	bob := &authn.User{Name: "bob", Groups: []string{"system:authenticated"}}
	for _, tc := range []struct {
		name  string
		cert  *x509.Certificate
		token string
		want  *authn.User // nil: ErrUnauthorized
	}{
		{"user and groups", alice, "", &authn.User{Name: "alice", Groups: []string{"devs", "system:masters", "system:authenticated"}, Extra: credential(alice)}},
		{"before a token", alice, "t1", &authn.User{Name: "alice", Groups: []string{"devs", "system:masters", "system:authenticated"}, Extra: credential(alice)}},
		{"uid", withUID, "", &authn.User{Name: "carol", UID: "u-1", Groups: []string{"system:authenticated"}, Extra: credential(withUID)}},
		{"no common name: anonymous", noName, "", &authn.User{Name: "system:anonymous", Groups: []string{"system:unauthenticated"}}},
		{"no common name: the token", noName, "t1", bob},
		{"not for client authentication", serverOnly, "", nil},
		{"another CA", foreign, "", nil},
		{"another CA, and a token", foreign, "t1", bob},
		{"another CA, and an unknown token", foreign, "t2", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			r.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{tc.cert}}
			if tc.token != "" {
				r.Header.Set("Authorization", "Bearer "+tc.token)
			}
			got, err := authn.New(opts).Authenticate(r)
			if tc.want == nil {
				if err != authn.ErrUnauthorized {
					t.Errorf("got %+v, %v; want ErrUnauthorized", got, err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func newCA(t *testing.T) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	return sign(t, tmpl, tmpl, &key.PublicKey, key), key
}

func newCert(t *testing.T, ca *x509.Certificate, caKey *ecdsa.PrivateKey, subject pkix.Name, usage x509.ExtKeyUsage) *x509.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: subject,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage}}
	return sign(t, tmpl, ca, &key.PublicKey, caKey)
}

func sign(t *testing.T, tmpl, parent *x509.Certificate, pub *ecdsa.PublicKey, key *ecdsa.PrivateKey) *x509.Certificate {
	t.Helper()
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, pub, key)
	if err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
