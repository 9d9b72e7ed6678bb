package playground_test

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"kubeplay/playground/journal"
)

func TestSandbox_Journal(t *testing.T) {
	sb := openSandbox(t)
	h := sb.Handler()
	do(t, h, "POST", "/api/v1/namespaces", `{"metadata":{"name":"doomed"}}`)
	do(t, h, "DELETE", "/api/v1/namespaces/doomed", "")
	waitFor(t, "the namespace to be removed", func() bool {
		code, _ := do(t, h, "GET", "/api/v1/namespaces/doomed", "")
		return code == 404
	})

	entries, _ := sb.Journal().Page(0, 0)
	create := slices.IndexFunc(entries, func(e journal.Entry) bool {
		return e.Method == "POST" && e.Path == "/api/v1/namespaces"
	})
	if create < 0 {
		t.Fatalf("no POST of the namespace among %d entries", len(entries))
	}
	if e := entries[create]; e.Status != 201 || !strings.Contains(string(e.Request.Body), `"doomed"`) || !strings.Contains(string(e.Response.Body), `"uid"`) {
		t.Errorf("the create: %s %s %d %s -> %s", e.Method, e.Path, e.Status, e.Request.Body, e.Response.Body)
	}
	// The namespace controller's own requests are there too, the /finalize
	// that let the namespace go among them.
	finalize := slices.IndexFunc(entries, func(e journal.Entry) bool {
		return e.Method == "PUT" && e.Path == "/api/v1/namespaces/doomed/finalize"
	})
	if finalize < 0 {
		t.Fatalf("no /finalize request in the journal")
	}
	if ua := entries[finalize].UserAgent; !strings.HasPrefix(ua, "kube-controller-manager/") {
		t.Errorf("/finalize sent by %q", ua)
	}
}

// TestSandbox_JournalAudit checks that each entry says who the request ran
// as and which admission stages it passed through, in order, naming the one
// that rejected it.
func TestSandbox_JournalAudit(t *testing.T) {
	sb := openSandbox(t)
	h := sb.Handler()
	// Once the controllers have written what a new namespace gets, the
	// last request to each path below is the test's.
	waitForDefaultServiceAccount(t, h, "default")
	waitFor(t, "kube-root-ca.crt", func() bool {
		code, _ := do(t, h, "GET", "/api/v1/namespaces/default/configmaps/kube-root-ca.crt", "")
		return code == http.StatusOK
	})
	do(t, h, "POST", "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies", `{"metadata":{"name":"no-blue"},
		"spec":{"matchConstraints":{"resourceRules":[{"apiGroups":[""],"apiVersions":["v1"],"operations":["CREATE"],"resources":["configmaps"]}]},
		"validations":[{"expression":"!has(object.data) || !('color' in object.data) || object.data.color != 'blue'"}]}}`)
	do(t, h, "POST", "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings", `{"metadata":{"name":"no-blue-everywhere"},
		"spec":{"policyName":"no-blue","validationActions":["Deny"]}}`)
	send := func(body string, header ...string) journal.Entry {
		t.Helper()
		req := httptest.NewRequest("POST", "/api/v1/namespaces/default/configmaps", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		for i := 0; i < len(header); i += 2 {
			req.Header.Add(header[i], header[i+1])
		}
		h.ServeHTTP(httptest.NewRecorder(), req)
		return lastEntry(t, sb.Journal(), req.Method, req.URL.Path)
	}
	stages := func(e journal.Entry) []string {
		var out []string
		for _, s := range e.Audit.Admission {
			name := s.Phase + " " + s.Plugin
			if s.Binding != "" {
				name += " " + s.Policy + "/" + s.Binding
			}
			if s.Rejected {
				name += " rejected"
			}
			out = append(out, name)
		}
		return out
	}

	admitted := send(`{"metadata":{"name":"red"},"data":{"color":"red"}}`)
	if admitted.Status != 201 || admitted.Audit.User == nil || admitted.Audit.User.Name != "system:anonymous" ||
		admitted.Audit.ImpersonatedBy != nil || admitted.Audit.Decision != "allow" {
		t.Errorf("admitted: %d %+v", admitted.Status, admitted.Audit)
	}
	want := []string{"mutating NamespaceLifecycle", "validating ValidatingAdmissionPolicy no-blue/no-blue-everywhere", "validating ResourceQuota"}
	if got := stages(admitted); !slices.Equal(got, want) {
		t.Errorf("admitted went through %q, want %q", got, want)
	}
	denied := send(`{"metadata":{"name":"blue"},"data":{"color":"blue"}}`)
	want = []string{"mutating NamespaceLifecycle", "validating ValidatingAdmissionPolicy no-blue/no-blue-everywhere rejected"}
	if got := stages(denied); denied.Status != 422 || !slices.Equal(got, want) {
		t.Errorf("denied: %d, went through %q, want %q", denied.Status, got, want)
	}

	pod := httptest.NewRequest("POST", "/api/v1/namespaces/default/pods", strings.NewReader(`{"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"nginx"}]}}`))
	pod.Header.Set("Content-Type", "application/json")
	h.ServeHTTP(httptest.NewRecorder(), pod)
	want = []string{"mutating NamespaceLifecycle", "mutating LimitRanger", "mutating ServiceAccount", "mutating Priority",
		"mutating DefaultTolerationSeconds", "mutating RuntimeClass", "mutating PodTopologyLabels", "validating LimitRanger", "validating PodSecurity", "validating RuntimeClass", "validating ValidatingAdmissionPolicy", "validating ResourceQuota"}
	if got := stages(lastEntry(t, sb.Journal(), "POST", pod.URL.Path)); !slices.Equal(got, want) {
		t.Errorf("a pod went through %q, want %q", got, want)
	}

	// Impersonated, and forbidden by RBAC before admission.
	forbidden := send(`{"metadata":{"name":"x"}}`, "Impersonate-User", "alice", "Impersonate-Group", "devs")
	a := forbidden.Audit
	if forbidden.Status != 403 || a.User == nil || a.User.Name != "alice" || !slices.Equal(a.User.Groups, []string{"devs", "system:authenticated"}) ||
		a.ImpersonatedBy == nil || a.ImpersonatedBy.Name != "system:anonymous" || a.Decision != "forbid" || len(a.Admission) != 0 {
		t.Errorf("forbidden: %d %+v (by %+v)", forbidden.Status, a, a.ImpersonatedBy)
	}
	// Authorized, then refused by RBAC's own check; a PUT that creates,
	// refused by the second authorization it needs.
	do(t, h, "POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles", `{"metadata":{"name":"role-writer"},
		"rules":[{"apiGroups":["rbac.authorization.k8s.io"],"resources":["roles"],"verbs":["create","update"]}]}`)
	do(t, h, "POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings", `{"metadata":{"name":"role-writers"},
		"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"role-writer"},"subjects":[{"kind":"User","name":"alice"}]}`)
	do(t, h, "POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles", `{"metadata":{"name":"role-updater"},
		"rules":[{"apiGroups":["rbac.authorization.k8s.io"],"resources":["roles"],"verbs":["update"]}]}`)
	do(t, h, "POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings", `{"metadata":{"name":"role-updaters"},
		"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"role-updater"},"subjects":[{"kind":"User","name":"bob"}]}`)
	as := func(user, method, path, body string) journal.Entry {
		t.Helper()
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Impersonate-User", user)
		h.ServeHTTP(httptest.NewRecorder(), req)
		return lastEntry(t, sb.Journal(), method, path)
	}
	escalating := as("alice", "POST", "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles",
		`{"metadata":{"name":"secrets"},"rules":[{"apiGroups":[""],"resources":["secrets"],"verbs":["get"]}]}`)
	if a := escalating.Audit; escalating.Status != 403 || a.Decision != "allow" || a.RefusedBy != "RBAC escalation check" {
		t.Errorf("escalating: %d %+v", escalating.Status, a)
	}
	creating := as("bob", "PUT", "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles/empty", `{"metadata":{"name":"empty"}}`)
	if a := creating.Audit; creating.Status != 403 || a.Decision != "forbid" || a.RefusedBy != "" {
		t.Errorf("a PUT that creates, without create: %d %+v", creating.Status, a)
	}

	do(t, h, "DELETE", "/api/v1/namespaces/default", "")
	if got := stages(lastEntry(t, sb.Journal(), "DELETE", "/api/v1/namespaces/default")); !slices.Equal(got, []string{"mutating NamespaceLifecycle rejected"}) {
		t.Errorf("deleting the default namespace went through %q", got)
	}
	missing := httptest.NewRequest("POST", "/api/v1/namespaces/nowhere/configmaps", strings.NewReader(`{"metadata":{"name":"x"}}`))
	missing.Header.Set("Content-Type", "application/json")
	h.ServeHTTP(httptest.NewRecorder(), missing)
	if got := stages(lastEntry(t, sb.Journal(), "POST", missing.URL.Path)); !slices.Equal(got, []string{"mutating NamespaceLifecycle rejected"}) {
		t.Errorf("a create in a missing namespace went through %q", got)
	}
}

// lastEntry is the newest entry of a method request to path (the
// sandbox's controllers send requests of their own meanwhile).
func lastEntry(t *testing.T, j *journal.Journal, method, path string) journal.Entry {
	t.Helper()
	entries, _ := j.Page(0, 0)
	for _, e := range slices.Backward(entries) {
		if e.Method == method && e.Path == path {
			return e
		}
	}
	t.Fatalf("no %s %s in the journal", method, path)
	return journal.Entry{}
}
