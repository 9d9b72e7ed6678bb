package server_test

import (
	"fmt"
	"maps"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"kubeplay/playground/journal"
)

const (
	policiesPath = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies"
	bindingsPath = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings"
)

// sizePolicy is a policy on configmaps allowing at most max data keys.
func sizePolicy(max int, resourceVersion string) string {
	return fmt.Sprintf(`{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingAdmissionPolicy","metadata":{"name":"size","resourceVersion":%q},
"spec":{"matchConstraints":{"resourceRules":[{"apiGroups":[""],"apiVersions":["v1"],"operations":["CREATE"],"resources":["configmaps"]}]},
"variables":[{"name":"keys","expression":"has(object.data) ? size(object.data) : 0"}],
"validations":[{"expression":"variables.keys <= %d"}]}}`, resourceVersion, max)
}

func setUpSizePolicy(tb testing.TB, h http.Handler) {
	tb.Helper()
	if w := serve(h, http.MethodPost, policiesPath, "application/json", sizePolicy(1, "")); w.Code != http.StatusCreated {
		tb.Fatalf("policy: %d %s", w.Code, w.Body)
	}
	binding := `{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingAdmissionPolicyBinding","metadata":{"name":"size"},"spec":{"policyName":"size","validationActions":["Deny"]}}`
	if w := serve(h, http.MethodPost, bindingsPath, "application/json", binding); w.Code != http.StatusCreated {
		tb.Fatalf("binding: %d %s", w.Code, w.Body)
	}
}

// TestAdmissionPolicy_Updated checks that a request sees a policy's latest
// version, not the one compiled for an earlier request.
func TestAdmissionPolicy_Updated(t *testing.T) {
	h := newTestServer(t)
	setUpSizePolicy(t, h)
	cm := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"two"},"data":{"a":"1","b":"2"}}`
	w := serve(h, http.MethodPost, "/api/v1/namespaces/default/configmaps", "application/json", cm)
	if w.Code != http.StatusUnprocessableEntity || !strings.Contains(w.Body.String(), `failed expression: variables.keys \u003c= 1`) {
		t.Fatalf("with max 1: %d %s", w.Code, w.Body)
	}
	w = serve(h, http.MethodGet, policiesPath+"/size", "", "")
	rv := strings.Split(strings.Split(w.Body.String(), `"resourceVersion":"`)[1], `"`)[0]
	if w := serve(h, http.MethodPut, policiesPath+"/size", "application/json", sizePolicy(2, rv)); w.Code != http.StatusOK {
		t.Fatalf("update: %d %s", w.Code, w.Body)
	}
	if w := serve(h, http.MethodPost, "/api/v1/namespaces/default/configmaps", "application/json", cm); w.Code != http.StatusCreated {
		t.Fatalf("with max 2: %d %s", w.Code, w.Body)
	}
}

// BenchmarkCreateWithPolicy measures creating configmaps without a
// ValidatingAdmissionPolicy and with one (with a variable) that checks and
// admits them, compiled once.
func BenchmarkCreateWithPolicy(b *testing.B) {
	for _, withPolicy := range []bool{false, true} {
		b.Run(fmt.Sprintf("policy=%v", withPolicy), func(b *testing.B) {
			h := newTestServer(b)
			if withPolicy {
				setUpSizePolicy(b, h)
			}
			for i := 0; b.Loop(); i++ {
				body := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c%d"},"data":{"a":"1"}}`, i)
				if w := serve(h, http.MethodPost, "/api/v1/namespaces/default/configmaps", "application/json", body); w.Code != http.StatusCreated {
					b.Fatalf("create: %d %s", w.Code, w.Body)
				}
			}
		})
	}
}

// TestAdmissionPolicy_Audit checks that a policy's audit annotations and its
// failures under an Audit binding reach the request journal (kube-apiserver
// writes them to its audit log) and nothing else: no denial, no warning.
func TestAdmissionPolicy_Audit(t *testing.T) {
	j := journal.New(journal.Limits{}, time.Now)
	h := j.Handler(newTestServer(t))
	policy := `{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingAdmissionPolicy","metadata":{"name":"audited"},
"spec":{"matchConstraints":{"resourceRules":[{"apiGroups":[""],"apiVersions":["v1"],"operations":["CREATE"],"resources":["configmaps"]}]},
"validations":[{"expression":"object.metadata.name != 'x'","messageExpression":"'not ' + object.metadata.name"}],
"auditAnnotations":[{"key":"name","valueExpression":"'cm ' + object.metadata.name"},{"key":"none","valueExpression":"null"}]}}`
	binding := `{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingAdmissionPolicyBinding","metadata":{"name":"audited"},"spec":{"policyName":"audited","validationActions":["Audit"]}}`
	for path, body := range map[string]string{policiesPath: policy, bindingsPath: binding} {
		if w := serve(h, http.MethodPost, path, "application/json", body); w.Code != http.StatusCreated {
			t.Fatalf("%s: %d %s", path, w.Code, w.Body)
		}
	}
	for name, want := range map[string]map[string]string{
		"x": {"audited/name": "cm x",
			"validation.policy.admission.k8s.io/validation_failure": `[{"message":"not x","policy":"audited","binding":"audited","validationActions":["Audit"]}]`},
		"y": {"audited/name": "cm y"},
	} {
		cm := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q}}`, name)
		w := serve(h, http.MethodPost, "/api/v1/namespaces/default/configmaps", "application/json", cm)
		if w.Code != http.StatusCreated || w.Header().Get("Warning") != "" {
			t.Fatalf("%s: %d %v %s", name, w.Code, w.Header(), w.Body)
		}
		entries, _ := j.Page(0, 0)
		if got := entries[len(entries)-1].Audit.Annotations; !maps.Equal(got, want) {
			t.Errorf("%s: audit annotations %v, want %v", name, got, want)
		}
	}
}

// TestAdmissionPolicy_AuthorizerReadsTheStore checks that a policy's
// authorizer checks, answered by RBAC from the store, work while requests
// wait for their evaluation, several at once. In the browser the policy runs
// in the CEL module and calls the engine back while the request's goroutine
// waits (package celeval): a lock or store connection held across that wait
// would deadlock here, under `go tool task test:wasm`.
func TestAdmissionPolicy_AuthorizerReadsTheStore(t *testing.T) {
	h := newTestServer(t)
	for _, step := range []struct{ path, body string }{
		{"/api/v1/namespaces", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"dev"}}`},
		{"/apis/rbac.authorization.k8s.io/v1/namespaces/dev/roles", `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role","metadata":{"name":"cm-writer"},"rules":[{"apiGroups":[""],"resources":["configmaps"],"verbs":["create"]}]}`},
		{"/apis/rbac.authorization.k8s.io/v1/namespaces/dev/rolebindings", `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","metadata":{"name":"alice-cm"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"cm-writer"},"subjects":[{"kind":"User","name":"alice"}]}`},
		{policiesPath, `{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingAdmissionPolicy","metadata":{"name":"readers"},
"spec":{"matchConstraints":{"resourceRules":[{"apiGroups":[""],"apiVersions":["v1"],"operations":["CREATE"],"resources":["configmaps"]}]},
"validations":[{"expression":"authorizer.group('').resource('secrets').namespace('dev').check('get').allowed() || object.metadata.name.startsWith('ok')","message":"may not read secrets"}]}}`},
		{bindingsPath, `{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingAdmissionPolicyBinding","metadata":{"name":"readers"},"spec":{"policyName":"readers","validationActions":["Deny"]}}`},
	} {
		if code, body := callAPI(t, h, http.MethodPost, step.path, step.body); code != http.StatusCreated {
			t.Fatalf("POST %s: %d %s", step.path, code, body)
		}
	}
	type answer struct {
		code int
		body string
	}
	names := []string{"ok-1", "ok-2", "ok-3", "denied"}
	answers := make([]answer, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Go(func() {
			cm := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q}}`, name)
			answers[i].code, answers[i].body = callAPI(t, h, http.MethodPost, "/api/v1/namespaces/dev/configmaps", cm, "Authorization", "Bearer alice-token")
		})
	}
	wg.Wait()
	for i, name := range names {
		want := http.StatusCreated
		if name == "denied" {
			want = http.StatusUnprocessableEntity
		}
		if answers[i].code != want || want != http.StatusCreated && !strings.Contains(answers[i].body, "may not read secrets") {
			t.Errorf("%s: %d %s, want %d", name, answers[i].code, answers[i].body, want)
		}
	}
}
