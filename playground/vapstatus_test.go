package playground_test

import (
	"encoding/json"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"kubeplay/playground"
	"kubeplay/playground/journal"
	"kubeplay/server/releases"
)

const policiesPath = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies"

// policyBody is a ValidatingAdmissionPolicy on apps/v1 resources with the
// given spec fields besides matchConstraints.
func policyBody(name string, resources []string, spec map[string]any) string {
	return groupPolicyBody(name, "apps", resources, spec)
}

// groupPolicyBody is policyBody for resources of group's v1.
func groupPolicyBody(name, group string, resources []string, spec map[string]any) string {
	spec["matchConstraints"] = map[string]any{"resourceRules": []any{map[string]any{
		"apiGroups": []string{group}, "apiVersions": []string{"v1"}, "operations": []string{"CREATE", "UPDATE"}, "resources": resources}}}
	b, _ := json.Marshal(map[string]any{"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
		"metadata": map[string]any{"name": name}, "spec": spec})
	return string(b)
}

func validations(exprs ...string) []any {
	var out []any
	for _, e := range exprs {
		out = append(out, map[string]any{"expression": e})
	}
	return out
}

// typeChecked waits until the policy's status has observed its generation
// and returns its status.typeChecking.
func typeChecked(t *testing.T, h http.Handler, name string) map[string]any {
	t.Helper()
	var status map[string]any
	waitFor(t, name+" to be type-checked", func() bool {
		obj := mustDo(t, h, 200, "GET", policiesPath+"/"+name, "")
		status, _ = obj["status"].(map[string]any)
		gen := obj["metadata"].(map[string]any)["generation"]
		return status != nil && status["observedGeneration"] == gen
	})
	tc, _ := status["typeChecking"].(map[string]any)
	return tc
}

func warningsOf(tc map[string]any) map[string]string {
	out := map[string]string{}
	list, _ := tc["expressionWarnings"].([]any)
	for _, w := range list {
		m := w.(map[string]any)
		out[m["fieldRef"].(string)] = m["warning"].(string)
	}
	return out
}

func TestValidatingAdmissionPolicyStatus(t *testing.T) {
	sb := openSandbox(t)
	h := sb.Handler()

	// The documentation's examples: a typo'd field, against one kind and
	// against two.
	mustDo(t, h, 201, "POST", policiesPath, policyBody("one", []string{"deployments"}, map[string]any{"validations": validations("object.replicas > 1")}))
	mustDo(t, h, 201, "POST", policiesPath, policyBody("two", []string{"deployments", "replicasets"}, map[string]any{"validations": validations("object.replicas > 1")}))
	// Each type's lines end in a newline, which the documentation's
	// examples leave out and kube-controller-manager writes.
	const deploymentWarning = "apps/v1, Kind=Deployment: ERROR: <input>:1:7: undefined field 'replicas'\n | object.replicas > 1\n | ......^\n"
	const replicaSetWarning = "apps/v1, Kind=ReplicaSet: ERROR: <input>:1:7: undefined field 'replicas'\n | object.replicas > 1\n | ......^\n"
	if got, want := warningsOf(typeChecked(t, h, "one")), map[string]string{"spec.validations[0].expression": deploymentWarning}; !reflect.DeepEqual(got, want) {
		t.Errorf("one: warnings %q, want %q", got, want)
	}
	if got, want := warningsOf(typeChecked(t, h, "two")), map[string]string{"spec.validations[0].expression": deploymentWarning + "\n" + replicaSetWarning}; !reflect.DeepEqual(got, want) {
		t.Errorf("two: warnings %q, want %q", got, want)
	}

	// A correct policy, with typed variables, params and message: an empty
	// typeChecking. Fixing the spec moves observedGeneration on.
	correct := map[string]any{
		"paramKind": map[string]any{"apiVersion": "v1", "kind": "ConfigMap"},
		"variables": []any{map[string]any{"name": "replicas", "expression": "object.spec.replicas"}},
		"validations": []any{map[string]any{"expression": "variables.replicas <= int(params.data.max) && object.metadata.labels['app'] != ''",
			"messageExpression": "'at most ' + params.data.max + ' replicas'"}},
	}
	mustDo(t, h, 201, "POST", policiesPath, policyBody("correct", []string{"deployments"}, correct))
	if tc := typeChecked(t, h, "correct"); tc == nil || len(tc) != 0 {
		t.Errorf("correct: typeChecking %v, want {}", tc)
	}

	// Typos in params, a variable's type and a message expression are each
	// reported; the new generation is observed.
	broken := map[string]any{
		"paramKind": map[string]any{"apiVersion": "v1", "kind": "ConfigMap"},
		"variables": []any{map[string]any{"name": "replicas", "expression": "object.spec.replicas"}},
		"validations": []any{
			map[string]any{"expression": "variables.replicas <= int(params.dat.max)", "messageExpression": "'at most ' + variables.replicas"},
		},
	}
	obj := mustDo(t, h, 200, "PUT", policiesPath+"/correct", policyBody("correct", []string{"deployments"}, broken))
	if gen := obj["metadata"].(map[string]any)["generation"]; gen != 2.0 {
		t.Fatalf("generation after the update: %v, want 2", gen)
	}
	want := map[string]string{
		"spec.validations[0].expression": "apps/v1, Kind=Deployment: ERROR: <input>:1:33: undefined field 'dat'\n" +
			" | variables.replicas <= int(params.dat.max)\n" +
			" | ................................^\n",
		"spec.validations[0].messageExpression": "apps/v1, Kind=Deployment: ERROR: <input>:1:12: found no matching overload for '_+_' applied to '(string, int)'\n" +
			" | 'at most ' + variables.replicas\n" +
			" | ...........^\n",
	}
	if got := warningsOf(typeChecked(t, h, "correct")); !reflect.DeepEqual(got, want) {
		t.Errorf("broken: warnings %q, want %q", got, want)
	}

	// Fixed again: no warnings (server-side apply drops the emptied
	// typeChecking).
	mustDo(t, h, 200, "PUT", policiesPath+"/correct", policyBody("correct", []string{"deployments"}, correct))
	if tc := typeChecked(t, h, "correct"); len(tc) != 0 {
		t.Errorf("fixed: typeChecking %v, want none", tc)
	}

	// The status is the controller's, applied as kube-controller-manager
	// applies it.
	obj = mustDo(t, h, 200, "GET", policiesPath+"/correct", "")
	var managers []string
	for _, e := range obj["metadata"].(map[string]any)["managedFields"].([]any) {
		m := e.(map[string]any)
		if m["subresource"] == "status" {
			managers = append(managers, m["manager"].(string)+" "+m["operation"].(string))
		}
	}
	if want := []string{"validatingadmissionpolicy-status Apply"}; !reflect.DeepEqual(managers, want) {
		t.Errorf("status managers %q, want %q", managers, want)
	}

	// The kinds a wildcard matches are not checked.
	wild := policyBody("wild", []string{"*"}, map[string]any{"validations": validations("object.replicas > 1")})
	mustDo(t, h, 201, "POST", policiesPath, wild)
	if tc := typeChecked(t, h, "wild"); tc == nil || len(tc) != 0 {
		t.Errorf("wild: typeChecking %v, want {}", tc)
	}
}

// kindsIn lists the kinds a warning names.
func kindsIn(warning string) []string {
	var out []string
	for _, line := range strings.Split(warning, "\n") {
		if _, rest, ok := strings.Cut(line, ", Kind="); ok && !strings.HasPrefix(line, " ") {
			kind, _, _ := strings.Cut(rest, ":")
			out = append(out, kind)
		}
	}
	return out
}

// At most ten kinds of a resource rule are checked, the first by group,
// version and resource (a resource that does not exist does not count);
// custom resources are checked, and typed as params, by the schema their
// CRD publishes (for gadgets: apiVersion, kind and metadata only).
func TestValidatingAdmissionPolicyStatus_Limits(t *testing.T) {
	sb := openSandbox(t)
	h := sb.Handler()
	resources := []string{"replicationcontrollers", "configmaps", "endpoints", "events", "limitranges", "namespaces", "nodes",
		"nosuchresources", "persistentvolumeclaims", "persistentvolumes", "pods", "podtemplates"}
	nosuch := map[string]any{"validations": validations("object.nosuchfield == 1")}
	mustDo(t, h, 201, "POST", policiesPath, groupPolicyBody("eleven", "", resources, nosuch))
	first10 := []string{"ConfigMap", "Endpoints", "Event", "LimitRange", "Namespace", "Node", "PersistentVolume", "PersistentVolumeClaim", "Pod", "PodTemplate"}
	if got := kindsIn(warningsOf(typeChecked(t, h, "eleven"))["spec.validations[0].expression"]); !reflect.DeepEqual(got, first10) {
		t.Errorf("eleven: kinds checked %q, want %q", got, first10)
	}
	// The limit is per rule: split in two rules, all eleven are checked.
	split := map[string]any{"validations": validations("object.nosuchfield == 1"), "matchConstraints": map[string]any{"resourceRules": []any{
		map[string]any{"apiGroups": []string{""}, "apiVersions": []string{"v1"}, "operations": []string{"CREATE"}, "resources": resources[:6]},
		map[string]any{"apiGroups": []string{""}, "apiVersions": []string{"v1"}, "operations": []string{"CREATE"}, "resources": resources[6:]},
	}}}
	b, _ := json.Marshal(map[string]any{"metadata": map[string]any{"name": "split"}, "spec": split})
	mustDo(t, h, 201, "POST", policiesPath, string(b))
	all := append(slices.Clone(first10), "ReplicationController")
	if got := kindsIn(warningsOf(typeChecked(t, h, "split"))["spec.validations[0].expression"]); !reflect.DeepEqual(got, all) {
		t.Errorf("split: kinds checked %q, want %q", got, all)
	}

	mustDo(t, h, 201, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", gadgetsCRD)
	waitFor(t, "gadgets to be served", func() bool {
		code, _ := do(t, h, "GET", "/apis/example.com/v1/gadgets", "")
		return code == 200
	})
	custom := map[string]any{"paramKind": map[string]any{"apiVersion": "example.com/v1", "kind": "Gadget"},
		"validations": validations("object.nosuchfield == params.nosuchfield")}
	mustDo(t, h, 201, "POST", policiesPath, groupPolicyBody("custom", "example.com", []string{"gadgets"}, custom))
	const customWarning = "example.com/v1, Kind=Gadget: ERROR: <input>:1:7: undefined field 'nosuchfield'\n" +
		" | object.nosuchfield == params.nosuchfield\n | ......^\n" +
		"ERROR: <input>:1:29: undefined field 'nosuchfield'\n | object.nosuchfield == params.nosuchfield\n | ............................^\n"
	if got, want := warningsOf(typeChecked(t, h, "custom")), map[string]string{"spec.validations[0].expression": customWarning}; !reflect.DeepEqual(got, want) {
		t.Errorf("custom: warnings %q, want %q", got, want)
	}
	// A built-in kind checked with custom params.
	mixed := map[string]any{"paramKind": map[string]any{"apiVersion": "example.com/v1", "kind": "Gadget"},
		"validations": validations("object.metadata.name == params.metadata.name", "object.spec.replicas == params.nosuchfield")}
	mustDo(t, h, 201, "POST", policiesPath, policyBody("mixed", []string{"deployments"}, mixed))
	if got := warningsOf(typeChecked(t, h, "mixed")); len(got) != 1 || !strings.Contains(got["spec.validations[1].expression"], "undefined field 'nosuchfield'") {
		t.Errorf("mixed: warnings %q, want one on params.nosuchfield", got)
	}
}

// The conformance suite's check of a policy on a custom resource: its
// CRD's schema types the object.
func TestValidatingAdmissionPolicyStatus_CustomResource(t *testing.T) {
	sb := openSandbox(t)
	h := sb.Handler()
	const crontabs = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"crontabs.stable.example.com"},
"spec":{"group":"stable.example.com","scope":"Namespaced","names":{"plural":"crontabs","singular":"crontab","kind":"CronTab","shortNames":["ct"]},
"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","properties":{"spec":{"type":"object",
"properties":{"cronSpec":{"type":"string"},"image":{"type":"string"},"replicas":{"type":"integer"}}}}}}}]}}`
	mustDo(t, h, 201, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crontabs)
	correct := map[string]any{"validations": validations("object.spec.replicas > 1", "object.metadata.labels['a'] == object.spec.image")}
	mustDo(t, h, 201, "POST", policiesPath, groupPolicyBody("correct", "stable.example.com", []string{"crontabs"}, correct))
	if tc := typeChecked(t, h, "correct"); tc == nil || len(tc) != 0 {
		t.Errorf("correct: typeChecking %v, want {}", tc)
	}
	confused := map[string]any{"validations": validations("object.spec.replicas > '1'", "object.spec.maxRetries < 10")}
	mustDo(t, h, 201, "POST", policiesPath, groupPolicyBody("confused", "stable.example.com", []string{"crontabs"}, confused))
	got := warningsOf(typeChecked(t, h, "confused"))
	for ref, want := range map[string]string{
		"spec.validations[0].expression": "found no matching overload for '_>_' applied to '(int, string)'",
		"spec.validations[1].expression": "undefined field 'maxRetries'",
	} {
		if !strings.Contains(got[ref], want) {
			t.Errorf("confused: %s warning %q, want it to contain %q", ref, got[ref], want)
		}
	}
	if len(got) != 2 {
		t.Errorf("confused: warnings %q, want two", got)
	}
}

func TestValidatingAdmissionPolicyStatus_Disabled(t *testing.T) {
	sb := openSandboxWith(t, playground.Options{Controllers: playground.Controllers{}.Without("validatingAdmissionPolicyStatus")})
	h := sb.Handler()
	mustDo(t, h, 201, "POST", policiesPath, policyBody("one", []string{"deployments"}, map[string]any{"validations": validations("object.replicas > 1")}))
	if status, _ := mustDo(t, h, 200, "GET", policiesPath+"/one", "")["status"].(map[string]any); len(status) != 0 {
		t.Errorf("status %v with the controller off", status)
	}
	// Switched on, the controller catches up with the policy.
	sb.SetControllers(playground.Controllers{})
	if got := warningsOf(typeChecked(t, h, "one")); len(got) != 1 {
		t.Errorf("warnings %q, want one", got)
	}
}

// An emulated release before v1.30 serves no v1 policies, and its
// kube-controller-manager has no such controller: the controller sends no
// request until the release serves them, then checks new policies.
func TestValidatingAdmissionPolicyStatus_NotServed(t *testing.T) {
	sb := openSandboxWith(t, playground.Options{Version: 21})
	waitIdle(t, sb) // the controllers have started and looked at everything
	seq := lastSeq(t, sb)
	sb.SetVersion(releases.Newest)
	for _, e := range requestsOf(t, sb, policyStatusSA, 0) {
		if e.Seq <= seq {
			t.Errorf("%s %s in a release without v1 policies", e.Method, e.Path)
		}
	}
	h := sb.Handler()
	mustDo(t, h, 201, "POST", policiesPath, policyBody("one", []string{"deployments"}, map[string]any{"validations": validations("object.replicas > 1")}))
	if got := warningsOf(typeChecked(t, h, "one")); len(got) != 1 {
		t.Errorf("warnings %q, want one", got)
	}
}

// A policy whose status write fails is retried with a per-key backoff,
// each wait twice the last (client-go's default: from 5 ms), not at a
// fixed pace; once the write succeeds, the controller stops.
func TestValidatingAdmissionPolicyStatus_RetriesFailedWrite(t *testing.T) {
	sb := openSandbox(t)
	h := sb.Handler()
	waitIdle(t, sb)

	// The controller may read policies but no longer write their status.
	const rolePath = "/apis/rbac.authorization.k8s.io/v1/clusterroles/system:controller:" + policyStatusSA
	role := mustDo(t, h, 200, "GET", rolePath, "")
	rules := role["rules"].([]any)
	role["rules"] = slices.DeleteFunc(slices.Clone(rules), func(r any) bool {
		return strings.Contains(jsonOf(r), `"validatingadmissionpolicies/status"`)
	})
	mustDo(t, h, 200, "PUT", rolePath, jsonOf(role))

	mustDo(t, h, 201, "POST", policiesPath, policyBody("one", []string{"deployments"}, map[string]any{"validations": validations("object.replicas > 1")}))
	const statusPath = policiesPath + "/one/status"
	var writes []journal.Entry
	waitFor(t, "four failed status writes", func() bool {
		writes = writes[:0]
		for _, e := range requestsOf(t, sb, policyStatusSA, 0) {
			if e.Method == "PATCH" && e.Path == statusPath && e.Done {
				writes = append(writes, e)
			}
		}
		return len(writes) >= 4
	})
	for i, w := range writes {
		if w.Status != http.StatusForbidden {
			t.Fatalf("status write %d: %d, want 403", i+1, w.Status)
		}
		// The wait after the i-th failure is at least 5 ms << (i-1); a
		// slow machine only waits longer.
		if i > 0 {
			if gap, least := w.Time.Sub(writes[i-1].Time), 5*time.Millisecond<<(i-1); gap < least {
				t.Errorf("status write %d came %v after the last, less than the backoff of %v", i+1, gap, least)
			}
		}
	}

	// Allowed again, the next retry writes the status, and that is all.
	role = mustDo(t, h, 200, "GET", rolePath, "")
	role["rules"] = rules
	mustDo(t, h, 200, "PUT", rolePath, jsonOf(role))
	if got := warningsOf(typeChecked(t, h, "one")); len(got) != 1 {
		t.Errorf("warnings %q, want one", got)
	}
	seq := lastSeq(t, sb)
	time.Sleep(500 * time.Millisecond)
	if reqs := requestsOf(t, sb, policyStatusSA, seq); len(reqs) > 0 {
		t.Errorf("requests after the status was written: %s", describe(reqs))
	}
}

// Its work done, the controller sends nothing more: a policy created or
// changed costs one read and one status write, and the status write, which
// leaves the status up to date, does not bring the policy back.
func TestValidatingAdmissionPolicyStatus_Quiet(t *testing.T) {
	sb := openSandbox(t)
	h := sb.Handler()
	waitIdle(t, sb)
	start := lastSeq(t, sb)

	spec := func(expr string) string {
		return policyBody("one", []string{"deployments"}, map[string]any{"validations": validations(expr)})
	}
	mustDo(t, h, 201, "POST", policiesPath, spec("object.replicas > 1"))
	typeChecked(t, h, "one")
	mustDo(t, h, 200, "PUT", policiesPath+"/one", spec("object.spec.replicas > 1"))
	if tc := typeChecked(t, h, "one"); len(warningsOf(tc)) != 0 {
		t.Errorf("warnings %q after the fix, want none", warningsOf(tc))
	}

	seq := lastSeq(t, sb)
	time.Sleep(500 * time.Millisecond)
	if reqs := requestsOf(t, sb, policyStatusSA, seq); len(reqs) > 0 {
		t.Errorf("requests once the status was up to date: %s", describe(reqs))
	}
	const get, write = "GET " + policiesPath + "/one", "PATCH " + policiesPath + "/one/status"
	if got, want := describe(requestsOf(t, sb, policyStatusSA, start)), strings.Join([]string{get, write, get, write}, ", "); got != want {
		t.Errorf("requests %s, want %s", got, want)
	}
}
