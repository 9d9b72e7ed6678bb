package server_test

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"kubeplay/server"
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
