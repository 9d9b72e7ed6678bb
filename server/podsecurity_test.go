package server_test

import (
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	psapi "k8s.io/pod-security-admission/api"

	"kubeplay/playground/journal"
	"kubeplay/server"
	"kubeplay/store"
)

// podSecurityNamespace creates namespace ns with labels (a JSON object)
// and its default ServiceAccount, for pods to be admitted there.
func podSecurityNamespace(t testing.TB, h http.Handler, ns, labels string) {
	t.Helper()
	for _, step := range []struct{ path, body string }{
		{"/api/v1/namespaces", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"` + ns + `","labels":` + labels + `}}`},
		{"/api/v1/namespaces/" + ns + "/serviceaccounts", `{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"default"}}`},
	} {
		if w := serve(h, http.MethodPost, step.path, "application/json", step.body); w.Code != http.StatusCreated {
			t.Fatalf("%s: %d %s", step.path, w.Code, w.Body)
		}
	}
}

const nginxPod = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web"},"spec":{"containers":[{"name":"c","image":"nginx"}]}}`

// TestPodSecurity_Audit checks the audit annotations PodSecurity leaves in
// the request journal (kube-apiserver writes them to its audit log): the
// enforced policy of every pod admitted or refused, and what breaks the
// audit level, of pods and of workloads (which are not enforced).
func TestPodSecurity_Audit(t *testing.T) {
	j := journal.New(journal.Limits{}, time.Now)
	h := j.Handler(newTestServer(t))
	podSecurityNamespace(t, h, "plain", `{}`)
	podSecurityNamespace(t, h, "audited", `{"pod-security.kubernetes.io/enforce":"baseline","pod-security.kubernetes.io/audit":"restricted"}`)
	podSecurityNamespace(t, h, "enforced", `{"pod-security.kubernetes.io/enforce":"restricted"}`)
	violations := `would violate PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")`
	deployment := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}}}`
	for _, tc := range []struct {
		name, path, body string
		code             int
		want             map[string]string
	}{
		{"pod in a namespace without labels", "/api/v1/namespaces/plain/pods", nginxPod, http.StatusCreated,
			map[string]string{"pod-security.kubernetes.io/enforce-policy": "privileged:latest"}},
		{"pod breaking the audit level", "/api/v1/namespaces/audited/pods", nginxPod, http.StatusCreated,
			map[string]string{"pod-security.kubernetes.io/enforce-policy": "baseline:latest", "pod-security.kubernetes.io/audit-violations": violations}},
		{"pod refused", "/api/v1/namespaces/enforced/pods", nginxPod, http.StatusForbidden,
			map[string]string{"pod-security.kubernetes.io/enforce-policy": "restricted:latest"}},
		{"workload breaking the audit level", "/apis/apps/v1/namespaces/audited/deployments", deployment, http.StatusCreated,
			map[string]string{"pod-security.kubernetes.io/audit-violations": violations}},
		{"workload in a namespace without labels", "/apis/apps/v1/namespaces/plain/deployments", deployment, http.StatusCreated, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if w := serve(h, http.MethodPost, tc.path, "application/json", tc.body); w.Code != tc.code {
				t.Fatalf("%d %s", w.Code, w.Body)
			}
			entries, _ := j.Page(0, 0)
			if got := entries[len(entries)-1].Audit.Annotations; !maps.Equal(got, tc.want) {
				t.Errorf("audit annotations %v, want %v", got, tc.want)
			}
		})
	}
}

// TestPodSecurity_EmulatedRelease checks that "latest" is the checks of the
// release the server emulates, as kube-apiserver's --emulated-version
// lowers it: a probe's host breaks baseline from v1.34 only.
func TestPodSecurity_EmulatedRelease(t *testing.T) {
	probe := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"probe"},"spec":{"containers":[{"name":"c","image":"nginx","readinessProbe":{"httpGet":{"host":"10.0.0.1","port":80}}}]}}`
	for minor, want := range map[int]int{33: http.StatusCreated, 34: http.StatusForbidden, 35: http.StatusForbidden} {
		h := newTestServerWith(t, server.Options{Version: minor})
		podSecurityNamespace(t, h, "base", `{"pod-security.kubernetes.io/enforce":"baseline"}`)
		w := serve(h, http.MethodPost, "/api/v1/namespaces/base/pods", "application/json", probe)
		if w.Code != want {
			t.Errorf("1.%d: %d %s, want %d", minor, w.Code, w.Body, want)
		}
		if want == http.StatusForbidden && !strings.Contains(w.Body.String(), `violates PodSecurity \"baseline:latest\": probe or lifecycle host`) {
			t.Errorf("1.%d: %s", minor, w.Body)
		}
	}
}

// BenchmarkCreatePodPodSecurity measures creating pods in a namespace
// without PodSecurity labels (the plugin reads the namespace only) and in
// one that enforces, warns and audits restricted (the pod is checked).
func BenchmarkCreatePodPodSecurity(b *testing.B) {
	for name, labels := range map[string]string{
		"unlabelled": `{}`,
		"restricted": `{"pod-security.kubernetes.io/enforce":"restricted","pod-security.kubernetes.io/audit":"restricted"}`,
	} {
		b.Run(name, func(b *testing.B) {
			h := newTestServer(b)
			podSecurityNamespace(b, h, "bench", labels)
			for i := 0; b.Loop(); i++ {
				body := fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p%d"},"spec":{"securityContext":{"runAsNonRoot":true,"seccompProfile":{"type":"RuntimeDefault"}},
"containers":[{"name":"c","image":"nginx","securityContext":{"allowPrivilegeEscalation":false,"capabilities":{"drop":["ALL"]}}}]}}`, i)
				if w := serve(h, http.MethodPost, "/api/v1/namespaces/bench/pods", "application/json", body); w.Code != http.StatusCreated {
					b.Fatalf("create: %d %s", w.Code, w.Body)
				}
			}
		})
	}
}

// TestPodSecurity_ExistingPodsLimit checks the limit on the pods a new
// enforce level is checked against: the first 3000, one pod of each
// controller before the other pods of the same controller (a frozen clock
// keeps the time limit away).
func TestPodSecurity_ExistingPodsLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 3001 pods")
	}
	st, err := store.Open(t.Context(), ":memory:", store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	frozen := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h := newTestServerWith(t, server.Options{Store: st, Now: func() time.Time { return frozen }})
	podSecurityNamespace(t, h, "many", `{}`)
	// 3000 pods of one ReplicaSet, then one of none that breaks baseline,
	// stored as they are (their admission is not what is tested).
	owned := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"%s","namespace":"many","uid":"%[1]s",
"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"rs","uid":"rs-uid","controller":true}]},"spec":{"containers":[{"name":"c","image":"nginx"}]}}`
	for i := range 3000 {
		name := fmt.Sprintf("rs-%04d", i)
		if _, err := st.Create(t.Context(), "/registry/pods/many/"+name, fmt.Appendf(nil, owned, name)); err != nil {
			t.Fatal(err)
		}
	}
	host := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"zz-host","namespace":"many","uid":"zz"},"spec":{"hostNetwork":true,"containers":[{"name":"c","image":"nginx"}]}}`
	if _, err := st.Create(t.Context(), "/registry/pods/many/zz-host", []byte(host)); err != nil {
		t.Fatal(err)
	}
	w := serve(h, http.MethodPatch, "/api/v1/namespaces/many", "application/merge-patch+json", `{"metadata":{"labels":{"pod-security.kubernetes.io/enforce":"restricted"}}}`)
	if w.Code != http.StatusOK {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	restricted := "allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, seccompProfile"
	want := []string{
		`299 - "new PodSecurity enforce level only checked against the first 3000 of 3001 existing pods"`,
		`299 - "existing pods in namespace \"many\" violate the new PodSecurity enforce level \"restricted:latest\""`,
		`299 - "rs-0000 (and 2998 other pods): ` + restricted + `"`,
		`299 - "zz-host: host namespaces, ` + restricted + `"`,
	}
	if got := w.Header().Values("Warning"); !slices.Equal(got, want) {
		t.Errorf("warnings\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestPodSecurity_Configuration checks the plugin configured as
// kube-apiserver's --admission-control-config-file configures it: defaults
// for namespaces without labels (enforce baseline, warn restricted:v1.30),
// and exempt users, namespaces and runtime classes, which are let through
// unchecked with the reason in the audit annotations. The codes, messages
// and warnings are kube-apiserver v1.35.4's, started with that
// configuration (and testdata/auth-tokens.csv); the audit annotations are
// those its plugin writes.
func TestPodSecurity_Configuration(t *testing.T) {
	j := journal.New(journal.Limits{}, time.Now)
	baselineDefaults := psapi.Policy{
		Enforce: psapi.LevelVersion{Level: psapi.LevelBaseline, Version: psapi.LatestVersion()},
		Audit:   psapi.LevelVersion{Level: psapi.LevelRestricted, Version: psapi.LatestVersion()},
		Warn:    psapi.LevelVersion{Level: psapi.LevelRestricted, Version: psapi.MajorMinorVersion(1, 30)},
	}
	h := j.Handler(newTestServerWith(t, server.Options{PodSecurity: &server.PodSecurityConfiguration{
		Defaults:             baselineDefaults,
		ExemptUsernames:      []string{"alice"},
		ExemptNamespaces:     []string{"psa-exempt"},
		ExemptRuntimeClasses: []string{"psa-exempt-rc"},
	}}))
	const (
		plain       = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"plain"},"spec":{"containers":[{"name":"c","image":"nginx"}]}}`
		host        = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"host"},"spec":{"hostNetwork":true,"containers":[{"name":"c","image":"nginx"}]}}`
		hostExempt  = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"host"},"spec":{"runtimeClassName":"psa-exempt-rc","hostNetwork":true,"containers":[{"name":"c","image":"nginx"}]}}`
		deployment  = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{%s"hostNetwork":true,"containers":[{"name":"c","image":"nginx"}]}}}}`
		restricted  = `allowPrivilegeEscalation != false (container \"c\" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container \"c\" must set securityContext.capabilities.drop=[\"ALL\"]), runAsNonRoot != true (pod or container \"c\" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container \"c\" must set securityContext.seccompProfile.type to \"RuntimeDefault\" or \"Localhost\")`
		refused     = `pods \"host\" is forbidden: violates PodSecurity \"baseline:latest\": host namespaces (hostNetwork=true)`
		exemptNS    = `299 - "namespace \"psa-exempt\" is exempt from Pod Security, and the policy (enforce=restricted:latest, audit=restricted:v1.29, warn=baseline:v1.30) will be ignored"`
		nsLabels    = `{"pod-security.kubernetes.io/enforce":"restricted","pod-security.kubernetes.io/warn":"baseline","pod-security.kubernetes.io/audit-version":"v1.29"}`
		exemptLabel = "pod-security.kubernetes.io/exempt"
	)
	for _, step := range []struct{ path, body string }{
		{"/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", `{"metadata":{"name":"alice-bob"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"cluster-admin"},
"subjects":[{"kind":"User","name":"alice","apiGroup":"rbac.authorization.k8s.io"},{"kind":"User","name":"bob","apiGroup":"rbac.authorization.k8s.io"}]}`},
		{"/apis/node.k8s.io/v1/runtimeclasses", `{"metadata":{"name":"psa-exempt-rc"},"handler":"runc"}`},
	} {
		if w := serve(h, http.MethodPost, step.path, "application/json", step.body); w.Code != http.StatusCreated {
			t.Fatalf("%s: %d %s", step.path, w.Code, w.Body)
		}
	}
	podSecurityNamespace(t, h, "psa-default", `{}`)
	for _, tc := range []struct {
		name, method, path, token, body string
		code                            int
		message                         string   // of the Status, if refused
		warnings                        []string // the Warning headers
		annotations                     map[string]string
	}{
		{name: "exempt namespace with a policy of its own", method: http.MethodPost, path: "/api/v1/namespaces",
			body: `{"metadata":{"name":"psa-exempt","labels":` + nsLabels + `}}`, code: http.StatusCreated, warnings: []string{exemptNS}},
		{name: "exempt namespace's default ServiceAccount", method: http.MethodPost, path: "/api/v1/namespaces/psa-exempt/serviceaccounts",
			body: `{"metadata":{"name":"default"}}`, code: http.StatusCreated},
		{name: "default policy: enforce baseline, warn restricted:v1.30", method: http.MethodPost, path: "/api/v1/namespaces/psa-default/pods", body: plain,
			code: http.StatusCreated, warnings: []string{`299 - "would violate PodSecurity \"restricted:v1.30\": ` + restricted + `"`}},
		{name: "default enforce level refuses", method: http.MethodPost, path: "/api/v1/namespaces/psa-default/pods?dryRun=All", body: host,
			code: http.StatusForbidden, message: refused},
		{name: "exempt user", method: http.MethodPost, path: "/api/v1/namespaces/psa-default/pods?dryRun=All", token: "alice-token", body: host,
			code: http.StatusCreated, annotations: map[string]string{exemptLabel: "user"}},
		{name: "user not exempt", method: http.MethodPost, path: "/api/v1/namespaces/psa-default/pods?dryRun=All", token: "bob-token", body: host,
			code: http.StatusForbidden, message: refused},
		{name: "exempt namespace", method: http.MethodPost, path: "/api/v1/namespaces/psa-exempt/pods?dryRun=All", body: host,
			code: http.StatusCreated, annotations: map[string]string{exemptLabel: "namespace"}},
		{name: "exempt runtime class", method: http.MethodPost, path: "/api/v1/namespaces/psa-default/pods", body: hostExempt,
			code: http.StatusCreated, annotations: map[string]string{exemptLabel: "runtimeClass"}},
		{name: "workload warned by the default policy", method: http.MethodPost, path: "/apis/apps/v1/namespaces/psa-default/deployments?dryRun=All", body: fmt.Sprintf(deployment, ""),
			code: http.StatusCreated, warnings: []string{`299 - "would violate PodSecurity \"restricted:v1.30\": host namespaces (hostNetwork=true), ` + restricted + `"`}},
		{name: "workload of an exempt user", method: http.MethodPost, path: "/apis/apps/v1/namespaces/psa-default/deployments?dryRun=All", token: "alice-token", body: fmt.Sprintf(deployment, ""),
			code: http.StatusCreated, annotations: map[string]string{exemptLabel: "user"}},
		{name: "workload of an exempt runtime class", method: http.MethodPost, path: "/apis/apps/v1/namespaces/psa-default/deployments?dryRun=All", body: fmt.Sprintf(deployment, `"runtimeClassName":"psa-exempt-rc",`),
			code: http.StatusCreated, annotations: map[string]string{exemptLabel: "runtimeClass"}},
		{name: "exempt namespace's enforce level relaxed", method: http.MethodPatch, path: "/api/v1/namespaces/psa-exempt",
			body: `{"metadata":{"labels":{"pod-security.kubernetes.io/enforce":"baseline"}}}`, code: http.StatusOK},
		{name: "exempt namespace's enforce level made stricter", method: http.MethodPatch, path: "/api/v1/namespaces/psa-exempt",
			body: `{"metadata":{"labels":{"pod-security.kubernetes.io/enforce":"restricted"}}}`, code: http.StatusOK, warnings: []string{exemptNS}},
		{name: "existing pods checked but those of an exempt runtime class", method: http.MethodPatch, path: "/api/v1/namespaces/psa-default",
			body: `{"metadata":{"labels":{"pod-security.kubernetes.io/enforce":"restricted"}}}`, code: http.StatusOK, warnings: []string{
				`299 - "existing pods in namespace \"psa-default\" violate the new PodSecurity enforce level \"restricted:latest\""`,
				`299 - "plain: allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, seccompProfile"`,
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(tc.method, tc.path, strings.NewReader(tc.body))
			req.Header.Set("Content-Type", "application/json")
			if tc.method == http.MethodPatch {
				req.Header.Set("Content-Type", "application/merge-patch+json")
			}
			if tc.token != "" {
				req.Header.Set("Authorization", "Bearer "+tc.token)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			if w.Code != tc.code {
				t.Fatalf("%d %s, want %d", w.Code, w.Body, tc.code)
			}
			if tc.message != "" && !strings.Contains(w.Body.String(), `"message":"`+tc.message+`"`) {
				t.Errorf("%s, want the message %s", w.Body, tc.message)
			}
			if got := w.Header().Values("Warning"); !slices.Equal(got, tc.warnings) {
				t.Errorf("warnings\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.warnings, "\n"))
			}
			if tc.annotations != nil {
				entries, _ := j.Page(0, 0)
				if got := entries[len(entries)-1].Audit.Annotations; !maps.Equal(got, tc.annotations) {
					t.Errorf("audit annotations %v, want %v", got, tc.annotations)
				}
			}
		})
	}
}
