package server_test

import (
	"fmt"
	"maps"
	"net/http"
	"strings"
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
