package app

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestParseCommandLine(t *testing.T) {
	known := map[string]string{"secure-port": "int", "allow-privileged": "bool", "v": "Level", "help": "bool"}
	tests := []struct {
		name    string
		args    []string
		values  map[string][]string
		unknown []string
		rest    []string
		err     string
	}{
		{name: "equals", args: []string{"--secure-port=6443"}, values: map[string][]string{"secure-port": {"6443"}}},
		{name: "separate value", args: []string{"--secure-port", "6443"}, values: map[string][]string{"secure-port": {"6443"}}},
		{name: "switch", args: []string{"--allow-privileged", "--v=4"}, values: map[string][]string{"allow-privileged": {"true"}, "v": {"4"}}},
		{name: "one dash, -h", args: []string{"-v", "2", "-h"}, values: map[string][]string{"v": {"2"}, "help": {"true"}}},
		{name: "repeated", args: []string{"--v=1", "--v=2"}, values: map[string][]string{"v": {"1", "2"}}},
		{name: "unknown flags take a value only after =", args: []string{"--nope", "arg", "--other=x", "--nope"},
			values: map[string][]string{"nope": {"true", "true"}, "other": {"x"}}, unknown: []string{"nope", "other"}, rest: []string{"arg"}},
		{name: "after --", args: []string{"--", "--v=1"}, values: map[string][]string{}, rest: []string{"--v=1"}},
		{name: "missing value", args: []string{"--secure-port"}, err: "flag needs an argument: --secure-port"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cl, err := parseCommandLine(tt.args, known)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("error %v, want %s", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(cl.values, tt.values) || !reflect.DeepEqual(cl.unknown, tt.unknown) || !reflect.DeepEqual(cl.args, tt.rest) {
				t.Errorf("got values %v, unknown %v, args %v; want %v, %v, %v", cl.values, cl.unknown, cl.args, tt.values, tt.unknown, tt.rest)
			}
		})
	}
}

func TestCommandLine(t *testing.T) {
	tests := []struct{ argv, want []string }{
		{[]string{"/usr/bin/kubeplay", "serve"}, []string{"serve"}},
		{[]string{"/assets/kube-apiserver", "--secure-port=1"}, []string{"kube-apiserver", "--secure-port=1"}},
		{[]string{"etcd", "--data-dir=x"}, []string{"etcd", "--data-dir=x"}},
	}
	for _, tt := range tests {
		if got := CommandLine(tt.argv); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("CommandLine(%q) = %q, want %q", tt.argv, got, tt.want)
		}
	}
}

// TestKubeAPIServer_Help: envtest runs the binary with --help and passes a
// flag only if a line of the help starts with it.
func TestKubeAPIServer_Help(t *testing.T) {
	var out strings.Builder
	if err := Run(t.Context(), []string{"kube-apiserver", "--help"}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	for name := range kubeAPIServerFlags {
		if !regexp.MustCompile(`(?m)^\s*--` + name + `\b`).MatchString(out.String()) {
			t.Errorf("--help does not list --%s", name)
		}
	}
	// Removed from kube-apiserver in 1.24; envtest passes it to a binary
	// that lists it.
	if strings.Contains(out.String(), "--insecure-port") {
		t.Errorf("--help lists --insecure-port")
	}
}

// TestKubeAPIServer_EnvtestCommandLine starts kube-apiserver with the
// command line envtest (controller-runtime v0.23) gives it and checks what
// envtest relies on: the serving certificate written into --cert-dir,
// /healthz for anonymous, client certificates of --client-ca-file as users.
func TestKubeAPIServer_EnvtestCommandLine(t *testing.T) {
	dir := t.TempDir()
	ca, caKey := newTestCA(t, "envtest-environment")
	os.WriteFile(filepath.Join(dir, "client-cert-auth-ca.crt"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Raw}), 0o640)
	// The ServiceAccount signing key and its certificate, as envtest writes
	// them: an ECDSA key in PKCS #8, a self-signed CA certificate.
	saCert, saKey := newTestCA(t, "sa-signer")
	os.WriteFile(filepath.Join(dir, "sa-signer.crt"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: saCert.Raw}), 0o640)
	pkcs8, err := x509.MarshalPKCS8PrivateKey(saKey)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "sa-signer.key"), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8}), 0o640)
	port := freePort(t)
	args := []string{"kube-apiserver",
		"--advertise-address=127.0.0.1", "--allow-privileged=true", "--authorization-mode=RBAC", "--bind-address=127.0.0.1",
		"--cert-dir=" + dir, "--client-ca-file=" + filepath.Join(dir, "client-cert-auth-ca.crt"),
		"--disable-admission-plugins=ServiceAccount", "--etcd-servers=http://127.0.0.1:2379", "--secure-port=" + port,
		"--service-account-issuer=https://127.0.0.1:" + port + "/", "--service-account-key-file=" + filepath.Join(dir, "sa-signer.crt"),
		"--service-account-signing-key-file=" + filepath.Join(dir, "sa-signer.key"), "--service-cluster-ip-range=10.0.0.0/24",
	}
	var stderr strings.Builder
	base := startServing(t, args, &stderr)
	if stderr.Len() > 0 {
		t.Errorf("warnings for envtest's command line:\n%s", &stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "apiserver.crt")); err != nil {
		t.Errorf("the serving certificate: %v", err)
	}

	anonymous := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	res, err := anonymous.Get(base + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || string(body) != "ok" {
		t.Errorf("GET /healthz: %d %s, want 200 ok", res.StatusCode, body)
	}

	whoami := func(cert tls.Certificate) (int, map[string]any) {
		c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true, Certificates: []tls.Certificate{cert}}}}
		res, err := c.Post(base+"/apis/authentication.k8s.io/v1/selfsubjectreviews", "application/json",
			strings.NewReader(`{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}`))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var review map[string]any
		json.NewDecoder(res.Body).Decode(&review)
		return res.StatusCode, review
	}
	code, review := whoami(newTestClientCert(t, ca, caKey, "alice", "devs"))
	userInfo, _ := review["status"].(map[string]any)["userInfo"].(map[string]any)
	if code != http.StatusCreated || userInfo["username"] != "alice" || !reflect.DeepEqual(userInfo["groups"], []any{"devs", "system:authenticated"}) {
		t.Errorf("who am I with alice's certificate: %d %v", code, review)
	}
	other, otherKey := newTestCA(t, "another CA")
	if code, review := whoami(newTestClientCert(t, other, otherKey, "mallory")); code != http.StatusUnauthorized {
		t.Errorf("who am I with a certificate of another CA: %d %v, want 401", code, review)
	}

	// ServiceAccount tokens: signed with --service-account-signing-key-file,
	// verified with --service-account-key-file, by the issuer of
	// --service-account-issuer.
	admin := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true,
		Certificates: []tls.Certificate{newTestClientCert(t, ca, caKey, "admin", "system:masters")}}}}
	call := func(c *http.Client, method, path, body string, header ...string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		res, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	for _, step := range []struct{ path, body string }{
		{"/api/v1/namespaces", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"dev"}}`},
		{"/api/v1/namespaces/dev/serviceaccounts", `{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"robot"}}`},
	} {
		if code, body := call(admin, http.MethodPost, step.path, step.body); code != http.StatusCreated {
			t.Fatalf("POST %s: %d %s", step.path, code, body)
		}
	}
	code, answer := call(admin, http.MethodPost, "/api/v1/namespaces/dev/serviceaccounts/robot/token", `{"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest","spec":{}}`)
	var tr struct {
		Status struct{ Token string }
	}
	if code != http.StatusCreated || json.Unmarshal([]byte(answer), &tr) != nil {
		t.Fatalf("TokenRequest: %d %s", code, answer)
	}
	issuer := "https://127.0.0.1:" + port + "/"
	claims, err := verifyES256(tr.Status.Token, saCert.PublicKey.(*ecdsa.PublicKey))
	if err != nil {
		t.Fatalf("the token does not verify with sa-signer.crt: %v", err)
	}
	if claims["iss"] != issuer || !reflect.DeepEqual(claims["aud"], []any{issuer}) || claims["sub"] != "system:serviceaccount:dev:robot" {
		t.Errorf("the token's claims: %v", claims)
	}
	_, answer = call(admin, http.MethodGet, "/api/v1/namespaces/dev/serviceaccounts/robot", "")
	var sa struct {
		Metadata struct{ UID string }
	}
	json.Unmarshal([]byte(answer), &sa)
	now := time.Now().Unix()
	token := signES256(t, saKey, map[string]any{"iss": issuer, "aud": []string{issuer}, "sub": "system:serviceaccount:dev:robot",
		"iat": now, "nbf": now, "exp": now + 600, "jti": "by-the-test",
		"kubernetes.io": map[string]any{"namespace": "dev", "serviceaccount": map[string]any{"name": "robot", "uid": sa.Metadata.UID}}})
	code, answer = call(anonymous, http.MethodPost, "/apis/authentication.k8s.io/v1/selfsubjectreviews",
		`{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}`, "Authorization", "Bearer "+token)
	if code != http.StatusCreated || !strings.Contains(answer, `"username":"system:serviceaccount:dev:robot"`) {
		t.Errorf("who am I with a token signed by sa-signer.key: %d %s", code, answer)
	}
	// RBAC lets ServiceAccounts read the issuer discovery documents.
	code, answer = call(anonymous, http.MethodGet, "/.well-known/openid-configuration", "", "Authorization", "Bearer "+token)
	if want := `{"issuer":"` + issuer + `","jwks_uri":"https://127.0.0.1:` + port + `/openid/v1/jwks","response_types_supported":["id_token"],"subject_types_supported":["public"],"id_token_signing_alg_values_supported":["ES256"]}`; code != http.StatusOK || answer != want {
		t.Errorf("GET /.well-known/openid-configuration: %d %s\nwant %s", code, answer, want)
	}
}

// signES256 signs claims with key as a JSON Web Token, ES256.
func signES256(t *testing.T, key *ecdsa.PrivateKey, claims map[string]any) string {
	t.Helper()
	header, _ := json.Marshal(map[string]string{"alg": "ES256"})
	payload, _ := json.Marshal(claims)
	signed := base64.RawURLEncoding.EncodeToString(header) + "." + base64.RawURLEncoding.EncodeToString(payload)
	sum := sha256.Sum256([]byte(signed))
	r, s, err := ecdsa.Sign(rand.Reader, key, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	return signed + "." + base64.RawURLEncoding.EncodeToString(sig)
}

// verifyES256 checks an ES256 token's signature with key and returns its
// claims.
func verifyES256(token string, key *ecdsa.PublicKey) (map[string]any, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return nil, errors.New("not a JWT")
	}
	var header struct{ Alg string }
	if b, err := base64.RawURLEncoding.DecodeString(parts[0]); err != nil || json.Unmarshal(b, &header) != nil || header.Alg != "ES256" {
		return nil, fmt.Errorf("header %s", parts[0])
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || len(sig) != 64 {
		return nil, errors.New("not an ES256 signature")
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if !ecdsa.Verify(key, sum[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
		return nil, errors.New("bad signature")
	}
	var claims map[string]any
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return nil, err
	}
	return claims, json.Unmarshal(b, &claims)
}

// TestKubeAPIServer_Warnings: flags kube-apiserver has but kubeplay does
// not implement, and flags it does not have, are reported in a line each,
// and do not stop it.
func TestKubeAPIServer_Warnings(t *testing.T) {
	var stderr strings.Builder
	startServing(t, []string{"kube-apiserver", "--bind-address=127.0.0.1", "--secure-port=" + freePort(t), "--cert-dir=" + t.TempDir(),
		"--audit-log-path=/tmp/audit", "--profiling=false", "--no-such-flag", "--authorization-mode=Node,RBAC",
		"--feature-gates=WatchList=true,InPlacePodVerticalScaling=true"}, &stderr)
	want := "kubeplay: ignoring flags kube-apiserver v1.35.4 does not have: --no-such-flag\n" +
		"kubeplay: ignoring kube-apiserver flags kubeplay does not implement: --audit-log-path, --profiling\n" +
		"kubeplay: ignoring --authorization-mode Node is not implemented: RBAC decides\n" +
		"kubeplay: ignoring feature gates kubeplay does not follow: InPlacePodVerticalScaling=true\n"
	if stderr.String() != want {
		t.Errorf("stderr:\n%s\nwant:\n%s", &stderr, want)
	}
	err := Run(t.Context(), []string{"kube-apiserver", "--feature-gates=WatchList=maybe"}, io.Discard, io.Discard)
	if err == nil || err.Error() != "--feature-gates: invalid value of WatchList=maybe: want true or false" {
		t.Errorf("a gate that is neither true nor false: %v", err)
	}
}

func TestEtcdStandIn(t *testing.T) {
	port := freePort(t)
	base := "http://127.0.0.1:" + port
	startServing(t, []string{"etcd", "--listen-client-urls=" + base, "--advertise-client-urls=" + base,
		"--listen-peer-urls=http://127.0.0.1:0", "--data-dir=" + t.TempDir(), "--unsafe-no-fsync=true"}, io.Discard)
	res, err := http.Get(base + "/health")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || string(body) != `{"health":"true","reason":""}` {
		t.Errorf("GET /health: %d %s", res.StatusCode, body)
	}
	var help strings.Builder
	if err := Run(t.Context(), []string{"etcd", "--help"}, &help, io.Discard); err != nil || !strings.Contains(help.String(), "\n      --unsafe-no-fsync\n") {
		t.Errorf("etcd --help: %v\n%s", err, &help)
	}
}

func TestEnvtestAssets(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "assets")
	if err := Run(t.Context(), []string{"envtest-assets", "--controllers=false", dir}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"kube-apiserver", "etcd"} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.Mode()&0o100 == 0 {
			t.Errorf("%s: %v, %v", name, fi, err)
		}
	}
	args, err := os.ReadFile(filepath.Join(dir, assetsArgsFile))
	if err != nil || !strings.HasSuffix(string(args), "\n--kubeplay-controllers=false\n") {
		t.Errorf("%s: %q, %v", assetsArgsFile, args, err)
	}
	if err := Run(t.Context(), []string{"envtest-assets", dir}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, assetsArgsFile)); !os.IsNotExist(err) {
		t.Errorf("%s after envtest-assets with no flags: %v", assetsArgsFile, err)
	}
}

// startServing runs the command args until the test ends, and returns the
// URL it serves once it says it is serving.
func startServing(t *testing.T, args []string, stderr io.Writer) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := Run(ctx, args, pw, stderr)
		pw.CloseWithError(io.EOF)
		done <- err
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("%s: %v", args[0], err)
		}
	})
	line, err := bufio.NewReader(pr).ReadString('\n')
	go io.Copy(io.Discard, pr)
	if err != nil {
		cancel()
		t.Fatalf("%s: %v", args[0], <-done)
	}
	url := regexp.MustCompile(`https?://[0-9.:]+`).FindString(line)
	if url == "" {
		t.Fatalf("%s says %q", args[0], line)
	}
	return url
}

// freePort returns a port nothing listens on, as envtest picks one.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}

func newTestCA(t *testing.T, name string) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return ca, key
}

func newTestClientCert(t *testing.T, ca *x509.Certificate, caKey *ecdsa.PrivateKey, user string, groups ...string) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: user, Organization: groups},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// TestKubeAPIServer_AlwaysAllow: with AlwaysAllow after RBAC, a user no role
// grants anything may do anything, as with kube-apiserver; with RBAC alone
// it may not.
func TestKubeAPIServer_AlwaysAllow(t *testing.T) {
	for _, tt := range []struct {
		modes string
		want  int
	}{{"RBAC", http.StatusForbidden}, {"RBAC,AlwaysAllow", http.StatusOK}} {
		dir := t.TempDir()
		ca, caKey := newTestCA(t, "envtest-environment")
		os.WriteFile(filepath.Join(dir, "ca.crt"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Raw}), 0o640)
		port := freePort(t)
		base := startServing(t, []string{"kube-apiserver", "--authorization-mode=" + tt.modes, "--bind-address=127.0.0.1",
			"--cert-dir=" + dir, "--client-ca-file=" + filepath.Join(dir, "ca.crt"), "--secure-port=" + port}, io.Discard)
		cert := newTestClientCert(t, ca, caKey, "alice")
		c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true, Certificates: []tls.Certificate{cert}}}}
		res, err := c.Get(base + "/api/v1/secrets")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != tt.want {
			t.Errorf("--authorization-mode=%s: alice lists secrets: %d, want %d", tt.modes, res.StatusCode, tt.want)
		}
		// With AlwaysAllow, kube-apiserver turns anonymous requests away.
		anonymous := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
		if res, err = anonymous.Get(base + "/api/v1/secrets"); err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if want := map[bool]int{false: http.StatusForbidden, true: http.StatusUnauthorized}[tt.want == http.StatusOK]; res.StatusCode != want {
			t.Errorf("--authorization-mode=%s: anonymous lists secrets: %d, want %d", tt.modes, res.StatusCode, want)
		}
	}
}

// TestServiceAccountIssuerFlags: the ServiceAccount issuer's flags are
// checked as kube-apiserver checks them, and the discovery document's
// jwks_uri is made as kube-apiserver makes it.
func TestServiceAccountIssuerFlags(t *testing.T) {
	dir := t.TempDir()
	_, key := newTestCA(t, "sa")
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(dir, "sa.key")
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), 0o600)
	keys := []string{"--service-account-key-file=" + keyFile, "--service-account-signing-key-file=" + keyFile}
	tests := []struct {
		name    string
		args    []string
		jwksURI string
		err     string
	}{
		{name: "none: kubeplay's own key"},
		{name: "advertise address", args: append([]string{"--service-account-issuer=https://a", "--advertise-address=10.1.2.3"}, keys...), jwksURI: "https://10.1.2.3:6443/openid/v1/jwks"},
		{name: "IPv6 advertise address", args: append([]string{"--service-account-issuer=https://a", "--advertise-address=fd00::1"}, keys...), jwksURI: "https://[fd00::1]:6443/openid/v1/jwks"},
		{name: "external host with a port", args: append([]string{"--service-account-issuer=https://a", "--external-hostname=api.example:8443", "--advertise-address=10.1.2.3"}, keys...), jwksURI: "https://api.example:8443/openid/v1/jwks"},
		{name: "JWKS URI", args: append([]string{"--service-account-issuer=https://a", "--service-account-jwks-uri=https://keys.example/jwks"}, keys...), jwksURI: "https://keys.example/jwks"},
		{name: "JWKS URI not https", args: append([]string{"--service-account-issuer=https://a", "--service-account-jwks-uri=http://keys.example/jwks"}, keys...), err: "service-account-jwks-uri requires https scheme, parsed as: http://keys.example/jwks"},
		{name: "no issuer", args: keys, err: "service-account-issuer is a required flag"},
		{name: "issuer twice", args: append([]string{"--service-account-issuer=https://a", "--service-account-issuer=https://a"}, keys...), err: `service-account-issuer "https://a" is already specified`},
		{name: "no key file", args: []string{"--service-account-issuer=https://a", "--service-account-signing-key-file=" + keyFile}, err: "either `--service-account-key-file` or `--service-account-signing-endpoint` must be set"},
		{name: "no signing key", args: []string{"--service-account-issuer=https://a", "--service-account-key-file=" + keyFile}, err: "--service-account-signing-key-file, --service-account-issuer, and --api-audiences should be specified together"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cl, err := parseCommandLine(tt.args, kubeAPIServerFlags)
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := serviceAccountIssuer(cl, "6443")
			switch {
			case tt.err != "":
				if err == nil || err.Error() != tt.err {
					t.Errorf("error %v, want %s", err, tt.err)
				}
			case err != nil:
				t.Error(err)
			case tt.jwksURI == "" && cfg != nil:
				t.Errorf("got %+v, want nil", cfg)
			case tt.jwksURI != "" && (cfg == nil || cfg.JWKSURI != tt.jwksURI || cfg.SigningKey == nil || len(cfg.PublicKeys) != 1):
				t.Errorf("got %+v, want jwks_uri %s and the keys", cfg, tt.jwksURI)
			}
		})
	}
}
