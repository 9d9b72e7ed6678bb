package server_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"kubeplay/server"
	"kubeplay/server/authn"
)

// TestTokenRequest checks the tokens kubeplay issues against the shape of
// the ones kube-apiserver v1.35.4 issued (--service-account-issuer
// https://kubernetes.default.svc.cluster.local) and what a request with
// one is authenticated as.
func TestTokenRequest(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	h := newTestServerWith(t, server.Options{Now: func() time.Time { return now }})
	for _, step := range []struct{ path, body string }{
		{"/api/v1/namespaces", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"dev"}}`},
		{"/api/v1/namespaces/dev/serviceaccounts", `{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"sa1"}}`},
	} {
		if code, body := callAPI(t, h, http.MethodPost, step.path, step.body); code != http.StatusCreated {
			t.Fatalf("POST %s: %d %s", step.path, code, body)
		}
	}
	_, body := callAPI(t, h, http.MethodGet, "/api/v1/namespaces/dev/serviceaccounts/sa1", "")
	var sa struct {
		Metadata struct{ UID string } `json:"metadata"`
	}
	json.Unmarshal([]byte(body), &sa)

	request := func(spec string) (int, map[string]any) {
		t.Helper()
		code, body := callAPI(t, h, http.MethodPost, "/api/v1/namespaces/dev/serviceaccounts/sa1/token", `{"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest","spec":`+spec+`}`)
		var tr map[string]any
		json.Unmarshal([]byte(body), &tr)
		return code, tr
	}
	code, tr := request(`{}`)
	if code != http.StatusCreated {
		t.Fatalf("TokenRequest: %d %v", code, tr)
	}
	status := tr["status"].(map[string]any)
	token := status["token"].(string)
	delete(status, "token")
	want := map[string]any{
		"kind": "TokenRequest", "apiVersion": "authentication.k8s.io/v1",
		"metadata": map[string]any{"name": "sa1", "namespace": "dev", "uid": sa.Metadata.UID, "creationTimestamp": "2026-01-02T03:04:05Z"},
		"spec":     map[string]any{"audiences": []any{"https://kubernetes.default.svc.cluster.local"}, "expirationSeconds": float64(3600), "boundObjectRef": nil},
		"status":   map[string]any{"expirationTimestamp": "2026-01-02T04:04:05Z"},
	}
	if !reflect.DeepEqual(tr, want) {
		t.Errorf("TokenRequest\n got: %v\nwant: %v", tr, want)
	}

	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("token %q is not a JWT", token)
	}
	var header, claims map[string]any
	for i, into := range []*map[string]any{&header, &claims} {
		b, err := base64.RawURLEncoding.DecodeString(parts[i])
		if err != nil || json.Unmarshal(b, into) != nil {
			t.Fatalf("token part %d: %v", i, err)
		}
	}
	if header["alg"] != "RS256" || header["kid"] == "" {
		t.Errorf("header %v", header)
	}
	jti, _ := claims["jti"].(string)
	wantClaims := map[string]any{
		"aud": []any{"https://kubernetes.default.svc.cluster.local"},
		"exp": float64(now.Add(time.Hour).Unix()), "iat": float64(now.Unix()), "nbf": float64(now.Unix()),
		"iss": "https://kubernetes.default.svc.cluster.local", "jti": jti,
		"kubernetes.io": map[string]any{"namespace": "dev", "serviceaccount": map[string]any{"name": "sa1", "uid": sa.Metadata.UID}},
		"sub":           "system:serviceaccount:dev:sa1",
	}
	if jti == "" || !reflect.DeepEqual(claims, wantClaims) {
		t.Errorf("claims\n got: %v\nwant: %v", claims, wantClaims)
	}

	whoami := func(token string) (int, string) {
		t.Helper()
		return callAPI(t, h, http.MethodPost, "/apis/authentication.k8s.io/v1/selfsubjectreviews", `{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}`, "Authorization", "Bearer "+token)
	}
	code, body = whoami(token)
	wantUser := `{"username":"system:serviceaccount:dev:sa1","uid":"` + sa.Metadata.UID + `","groups":["system:serviceaccounts","system:serviceaccounts:dev","system:authenticated"],"extra":{"authentication.kubernetes.io/credential-id":["JTI=` + jti + `"]}}`
	var ssr struct {
		Status struct{ UserInfo json.RawMessage } `json:"status"`
	}
	json.Unmarshal([]byte(body), &ssr)
	if code != http.StatusCreated || !sameJSON(t, string(ssr.Status.UserInfo), wantUser) {
		t.Errorf("whoami with the token: %d %s, want userInfo %s", code, body, wantUser)
	}

	// Tokens for another audience, expired ones, and those of a deleted
	// ServiceAccount are refused.
	_, other := request(`{"audiences":["foo"]}`)
	if code, body := whoami(other["status"].(map[string]any)["token"].(string)); code != http.StatusUnauthorized {
		t.Errorf("token for audience foo: %d %s", code, body)
	}
	now = now.Add(time.Hour)
	if code, body := whoami(token); code != http.StatusUnauthorized {
		t.Errorf("expired token: %d %s", code, body)
	}
	now = now.Add(-time.Minute)
	if code, body := whoami(token); code != http.StatusCreated {
		t.Errorf("token before it expires: %d %s", code, body)
	}
	callAPI(t, h, http.MethodDelete, "/api/v1/namespaces/dev/serviceaccounts/sa1", "")
	if code, body := whoami(token); code != http.StatusUnauthorized {
		t.Errorf("token of a deleted ServiceAccount: %d %s", code, body)
	}
}

func sameJSON(t *testing.T, a, b string) bool {
	t.Helper()
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// TestServiceAccountIssuer_Configured: with the issuer, keys and audiences
// of kube-apiserver's flags, tokens are issued by the first issuer, for
// the API's audiences, signed by the signing key; tokens of any issuer,
// signed by any of the public keys, for one of the audiences, are accepted.
func TestServiceAccountIssuer_Configured(t *testing.T) {
	signing, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	other, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	issuer := &server.ServiceAccountIssuer{
		Issuers:    []string{"https://issuer.example", "https://old.example"},
		SigningKey: signing, PublicKeys: []crypto.PublicKey{&signing.PublicKey, &other.PublicKey},
		Audiences: []string{"api", "api2"}, JWKSURI: "https://keys.example/jwks",
	}
	h := newTestServerWith(t, server.Options{Access: server.Access{ServiceAccountIssuer: issuer}})
	for _, step := range []struct{ path, body string }{
		{"/api/v1/namespaces", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"dev"}}`},
		{"/api/v1/namespaces/dev/serviceaccounts", `{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"sa1"}}`},
	} {
		if code, body := callAPI(t, h, http.MethodPost, step.path, step.body); code != http.StatusCreated {
			t.Fatalf("POST %s: %d %s", step.path, code, body)
		}
	}
	_, body := callAPI(t, h, http.MethodPost, "/api/v1/namespaces/dev/serviceaccounts/sa1/token", `{"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest","spec":{}}`)
	var tr struct {
		Spec   struct{ Audiences []string }
		Status struct{ Token string }
	}
	json.Unmarshal([]byte(body), &tr)
	if !reflect.DeepEqual(tr.Spec.Audiences, []string{"api", "api2"}) {
		t.Errorf("a TokenRequest's default audiences: %v, want the API's", tr.Spec.Audiences)
	}
	signingKey, _ := authn.NewPublicKey(&signing.PublicKey)
	var claims struct {
		Iss string
		Aud []string
		Sub string
	}
	if err := authn.Verify(tr.Status.Token, []authn.PublicKey{signingKey}, &claims); err != nil {
		t.Fatalf("the issued token does not verify with the signing key: %v", err)
	}
	if claims.Iss != "https://issuer.example" || !reflect.DeepEqual(claims.Aud, []string{"api", "api2"}) || claims.Sub != "system:serviceaccount:dev:sa1" {
		t.Errorf("claims %+v", claims)
	}

	_, body = callAPI(t, h, http.MethodGet, "/api/v1/namespaces/dev/serviceaccounts/sa1", "")
	var sa struct {
		Metadata struct{ UID string }
	}
	json.Unmarshal([]byte(body), &sa)
	signer, err := authn.NewSigner(other)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().Unix()
	sign := func(iss string, aud ...string) string {
		t.Helper()
		token, err := signer.Sign(map[string]any{"iss": iss, "aud": aud, "sub": "system:serviceaccount:dev:sa1", "iat": now, "nbf": now, "exp": now + 3600, "jti": "j1",
			"kubernetes.io": map[string]any{"namespace": "dev", "serviceaccount": map[string]any{"name": "sa1", "uid": sa.Metadata.UID}}})
		if err != nil {
			t.Fatal(err)
		}
		return token
	}
	whoami := func(token string) int {
		t.Helper()
		code, _ := callAPI(t, h, http.MethodPost, "/apis/authentication.k8s.io/v1/selfsubjectreviews", `{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}`, "Authorization", "Bearer "+token)
		return code
	}
	for _, tt := range []struct {
		name  string
		token string
		want  int
	}{
		{"issued", tr.Status.Token, http.StatusCreated},
		{"signed by another public key's private key, by the second issuer", sign("https://old.example", "api2"), http.StatusCreated},
		{"of an issuer not configured", sign("https://kubernetes.default.svc.cluster.local", "api"), http.StatusUnauthorized},
		{"for another audience", sign("https://issuer.example", "elsewhere"), http.StatusUnauthorized},
	} {
		if code := whoami(tt.token); code != tt.want {
			t.Errorf("a token %s: %d, want %d", tt.name, code, tt.want)
		}
	}

	review := func(audiences string) (status struct {
		Authenticated bool
		Audiences     []string
	}) {
		t.Helper()
		_, body := callAPI(t, h, http.MethodPost, "/apis/authentication.k8s.io/v1/tokenreviews",
			`{"apiVersion":"authentication.k8s.io/v1","kind":"TokenReview","spec":{"token":"`+tr.Status.Token+`","audiences":`+audiences+`}}`)
		var out struct{ Status json.RawMessage }
		json.Unmarshal([]byte(body), &out)
		json.Unmarshal(out.Status, &status)
		return status
	}
	if got := review(`[]`); !got.Authenticated || !reflect.DeepEqual(got.Audiences, []string{"api", "api2"}) {
		t.Errorf("TokenReview for the API's audiences: %+v", got)
	}
	if got := review(`["x","api2"]`); !got.Authenticated || !reflect.DeepEqual(got.Audiences, []string{"api2"}) {
		t.Errorf("TokenReview for x and api2: %+v, want authenticated for api2", got)
	}
	if got := review(`["x"]`); got.Authenticated {
		t.Errorf("TokenReview for x: %+v, want not authenticated", got)
	}

	code, body := callAPI(t, h, http.MethodGet, "/.well-known/openid-configuration", "")
	if want := `{"issuer":"https://issuer.example","jwks_uri":"https://keys.example/jwks","response_types_supported":["id_token"],"subject_types_supported":["public"],"id_token_signing_alg_values_supported":["ES256","RS256"]}`; code != http.StatusOK || body != want {
		t.Errorf("GET /.well-known/openid-configuration: %d %s\nwant %s", code, body, want)
	}
	code, body = callAPI(t, h, http.MethodGet, "/openid/v1/jwks", "")
	var jwks struct {
		Keys []struct{ Kty, Alg, Crv string }
	}
	json.Unmarshal([]byte(body), &jwks)
	if code != http.StatusOK || len(jwks.Keys) != 2 || jwks.Keys[0].Alg != "RS256" || jwks.Keys[1].Alg != "ES256" || jwks.Keys[1].Crv != "P-256" {
		t.Errorf("GET /openid/v1/jwks: %d %s", code, body)
	}
}

// TestIssuerDiscovery checks the issuer discovery documents against
// kube-apiserver v1.35.4's (the oracle's --service-account-key-file, whose
// public key is testdata/oracle-service-account-key.pub; the jwks_uri is
// made of its --advertise-address and --secure-port).
func TestIssuerDiscovery(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "oracle-service-account-key.pub"))
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(raw)
	pub, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	signing, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	h := newTestServerWith(t, server.Options{Access: server.Access{ServiceAccountIssuer: &server.ServiceAccountIssuer{
		Issuers: []string{"https://kubernetes.default.svc.cluster.local"}, SigningKey: signing, PublicKeys: []crypto.PublicKey{pub},
		JWKSURI: "https://127.0.0.1:6453/openid/v1/jwks",
	}}})
	oracle, send := exchanges(t, h, []exchange{
		{Method: http.MethodGet, Path: "/.well-known/openid-configuration"},
		{Method: http.MethodGet, Path: "/.well-known/openid-configuration/"},
		{Method: http.MethodGet, Path: "/openid/v1/jwks"},
		{Method: http.MethodGet, Path: "/openid/v1/jwks/"},
		{Method: http.MethodPost, Path: "/openid/v1/jwks"},
		{Method: http.MethodHead, Path: "/.well-known/openid-configuration"},
		{Method: http.MethodGet, Path: "/openid/v1/jwks", Header: map[string]string{"Accept": "application/json"}},
		{Method: http.MethodGet, Path: "/openid/v1/jwks", Header: map[string]string{"Accept": "text/html, application/jwk-set+json;q=0.1"}},
		{Method: http.MethodGet, Path: "/.well-known/openid-configuration", Header: map[string]string{"Accept": "application/yaml"}},
	})
	for _, e := range oracle {
		checkExchange(t, send(e), e, true)
	}
}
