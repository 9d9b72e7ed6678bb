package server_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"kubeplay/server"
)

// callAPI sends one request to h and returns the code and body.
func callAPI(t testing.TB, h http.Handler, method, path, body string, headers ...string) (int, string) {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i+1] != "" {
			req.Header.Set(headers[i], headers[i+1])
		}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code, rec.Body.String()
}

// The answers below were taken from kube-apiserver v1.35.4 with
// --authorization-mode=RBAC (whose anonymous caller is RBAC-checked).
func TestServer_Anonymous(t *testing.T) {
	const forbidden = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"namespaces is forbidden: User \"system:anonymous\" cannot list resource \"namespaces\" in API group \"\" at the cluster scope","reason":"Forbidden","details":{"kind":"namespaces"},"code":403}`
	const unauthorized = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}`
	for _, tc := range []struct {
		name      string
		anonymous server.Anonymous
		code      int
		body      string
		healthz   int
	}{
		{"admin", server.AnonymousAdmin, http.StatusOK, "", http.StatusOK},
		{"rbac", server.AnonymousRBAC, http.StatusForbidden, forbidden, http.StatusOK},
		{"denied", server.AnonymousDenied, http.StatusUnauthorized, unauthorized, http.StatusUnauthorized},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newTestServerWith(t, server.Options{Access: server.Access{Anonymous: tc.anonymous}})
			code, body := callAPI(t, h, http.MethodGet, "/api/v1/namespaces", "")
			if code != tc.code || (tc.body != "" && strings.TrimSpace(body) != tc.body) {
				t.Errorf("GET /api/v1/namespaces = %d %s, want %d %s", code, body, tc.code, tc.body)
			}
			if code, _ := callAPI(t, h, http.MethodGet, "/healthz", ""); code != tc.healthz {
				t.Errorf("GET /healthz = %d, want %d", code, tc.healthz)
			}
			// A token is honoured, and a bad one refused, in every mode.
			if code, body := callAPI(t, h, http.MethodGet, "/api/v1/namespaces", "", "Authorization", "Bearer oracle-token"); code != http.StatusOK {
				t.Errorf("GET as oracle-admin = %d %s", code, body)
			}
			if code, _ := callAPI(t, h, http.MethodGet, "/api/v1/namespaces", "", "Authorization", "Bearer nope"); code != http.StatusUnauthorized {
				t.Errorf("GET with an unknown token = %d, want 401", code)
			}
		})
	}
}

// TestSelfSubjectRulesReview checks the rules kube-apiserver reported for
// the same bindings. It lists them in no fixed order (its RBAC cache is a
// map), so they are compared as sets.
func TestSelfSubjectRulesReview(t *testing.T) {
	h := newTestServer(t)
	for _, step := range []struct{ path, body string }{
		{"/api/v1/namespaces", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"dev"}}`},
		{"/apis/rbac.authorization.k8s.io/v1/namespaces/dev/roles", `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role","metadata":{"name":"cm-reader"},"rules":[{"apiGroups":[""],"resources":["configmaps"],"verbs":["get","list"]}]}`},
		{"/apis/rbac.authorization.k8s.io/v1/namespaces/dev/rolebindings", `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","metadata":{"name":"alice-cm"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"cm-reader"},"subjects":[{"kind":"User","name":"alice"}]}`},
		{"/apis/rbac.authorization.k8s.io/v1/namespaces/dev/rolebindings", `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","metadata":{"name":"broken"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"missing"},"subjects":[{"kind":"User","name":"alice"}]}`},
	} {
		if code, body := callAPI(t, h, http.MethodPost, step.path, step.body); code != http.StatusCreated {
			t.Fatalf("POST %s: %d %s", step.path, code, body)
		}
	}
	code, body := callAPI(t, h, http.MethodPost, "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
		`{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectRulesReview","spec":{"namespace":"dev"}}`, "Authorization", "Bearer alice-token")
	if code != http.StatusCreated {
		t.Fatalf("SelfSubjectRulesReview: %d %s", code, body)
	}
	const oracle = `{"kind":"SelfSubjectRulesReview","apiVersion":"authorization.k8s.io/v1","metadata":{},"spec":{},"status":{"resourceRules":[{"verbs":["create"],"apiGroups":["authorization.k8s.io"],"resources":["selfsubjectaccessreviews","selfsubjectrulesreviews"]},{"verbs":["create"],"apiGroups":["authentication.k8s.io"],"resources":["selfsubjectreviews"]},{"verbs":["get","list"],"apiGroups":[""],"resources":["configmaps"]}],"nonResourceRules":[{"verbs":["get"],"nonResourceURLs":["/api","/api/*","/apis","/apis/*","/healthz","/livez","/openapi","/openapi/*","/readyz","/version","/version/"]},{"verbs":["get"],"nonResourceURLs":["/healthz","/livez","/readyz","/version","/version/"]}],"incomplete":false,"evaluationError":"role.rbac.authorization.k8s.io \"missing\" not found"}}`
	got, want := sortedRules(t, body), sortedRules(t, oracle)
	gj, _ := json.Marshal(got)
	wj, _ := json.Marshal(want)
	if string(gj) != string(wj) {
		t.Errorf("SelfSubjectRulesReview\n got: %s\nwant: %s", gj, wj)
	}
}

// sortedRules decodes a SelfSubjectRulesReview with its rule lists sorted.
func sortedRules(t *testing.T, body string) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatal(err)
	}
	status := v["status"].(map[string]any)
	for _, key := range []string{"resourceRules", "nonResourceRules"} {
		rules, _ := status[key].([]any)
		slices.SortFunc(rules, func(a, b any) int {
			aj, _ := json.Marshal(a)
			bj, _ := json.Marshal(b)
			return strings.Compare(string(aj), string(bj))
		})
	}
	return v
}

// The authorizer keeps the roles and bindings it decoded, but every change
// to one takes effect at the next request, as unrelated writes come and go.
func TestAuthorization_FollowsRBACChanges(t *testing.T) {
	h := newTestServerWith(t, server.Options{})
	const rbac = "/apis/rbac.authorization.k8s.io/v1/namespaces/dev/"
	admin := func(method, path, body string, want int) {
		t.Helper()
		if code, got := callAPI(t, h, method, path, body); code != want {
			t.Fatalf("%s %s: %d %s, want %d", method, path, code, got, want)
		}
	}
	alice := func(want int) {
		t.Helper()
		admin(http.MethodPost, "/api/v1/namespaces/dev/configmaps", `{"metadata":{"generateName":"unrelated-"}}`, http.StatusCreated)
		if code, got := callAPI(t, h, http.MethodGet, "/api/v1/namespaces/dev/configmaps/x", "", "Authorization", "Bearer alice-token"); code != want {
			t.Fatalf("alice's GET: %d %s, want %d", code, got, want)
		}
	}
	admin(http.MethodPost, "/api/v1/namespaces", `{"metadata":{"name":"dev"}}`, http.StatusCreated)
	admin(http.MethodPost, "/api/v1/namespaces/dev/configmaps", `{"metadata":{"name":"x"}}`, http.StatusCreated)
	alice(http.StatusForbidden)
	admin(http.MethodPost, rbac+"rolebindings", `{"metadata":{"name":"alice-cm"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"cm-reader"},"subjects":[{"kind":"User","name":"alice"}]}`, http.StatusCreated)
	alice(http.StatusForbidden) // the role does not exist yet
	admin(http.MethodPost, rbac+"roles", `{"metadata":{"name":"cm-reader"},"rules":[{"apiGroups":[""],"resources":["configmaps"],"verbs":["get"]}]}`, http.StatusCreated)
	alice(http.StatusOK)
	admin(http.MethodPut, rbac+"roles/cm-reader", `{"metadata":{"name":"cm-reader"},"rules":[{"apiGroups":[""],"resources":["configmaps"],"verbs":["list"]}]}`, http.StatusOK)
	alice(http.StatusForbidden)
	admin(http.MethodPut, rbac+"roles/cm-reader", `{"metadata":{"name":"cm-reader"},"rules":[{"apiGroups":[""],"resources":["configmaps"],"verbs":["get"]}]}`, http.StatusOK)
	alice(http.StatusOK)
	admin(http.MethodDelete, rbac+"rolebindings/alice-cm", "", http.StatusOK)
	alice(http.StatusForbidden)
	admin(http.MethodPost, "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", `{"metadata":{"name":"alice-view"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"cm-getter"},"subjects":[{"kind":"User","name":"alice"}]}`, http.StatusCreated)
	alice(http.StatusForbidden)
	admin(http.MethodPost, "/apis/rbac.authorization.k8s.io/v1/clusterroles", `{"metadata":{"name":"cm-getter"},"rules":[{"apiGroups":[""],"resources":["configmaps"],"verbs":["get"]}]}`, http.StatusCreated)
	alice(http.StatusOK)
	admin(http.MethodDelete, "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/alice-view", "", http.StatusOK)
	alice(http.StatusForbidden)
}

// BenchmarkAuthorization measures a GET of one ConfigMap as the
// anonymous administrator (no RBAC evaluation) and as alice, whose
// permission comes from a RoleBinding evaluated after the default
// ClusterRoleBindings.
func BenchmarkAuthorization(b *testing.B) {
	for _, bc := range []struct{ name, auth string }{{"anonymous-admin", ""}, {"rbac-rolebinding", "Bearer alice-token"}} {
		b.Run(bc.name, func(b *testing.B) {
			h := newTestServerWith(b, server.Options{})
			for _, step := range []struct{ path, body string }{
				{"/api/v1/namespaces", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"dev"}}`},
				{"/api/v1/namespaces/dev/configmaps", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"}}`},
				{"/apis/rbac.authorization.k8s.io/v1/namespaces/dev/roles", `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role","metadata":{"name":"cm-reader"},"rules":[{"apiGroups":[""],"resources":["configmaps"],"verbs":["get"]}]}`},
				{"/apis/rbac.authorization.k8s.io/v1/namespaces/dev/rolebindings", `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","metadata":{"name":"alice-cm"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"cm-reader"},"subjects":[{"kind":"User","name":"alice"}]}`},
			} {
				if code, body := callAPI(b, h, http.MethodPost, step.path, step.body); code != http.StatusCreated {
					b.Fatalf("POST %s: %d %s", step.path, code, body)
				}
			}
			for b.Loop() {
				if code, body := callAPI(b, h, http.MethodGet, "/api/v1/namespaces/dev/configmaps/x", "", "Authorization", bc.auth); code != http.StatusOK {
					b.Fatalf("GET: %d %s", code, body)
				}
			}
		})
	}
}
