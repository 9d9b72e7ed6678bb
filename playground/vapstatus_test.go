package playground_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"testing"

	"kubeplay/playground"
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

// typeChecked waits until the policy's status reflects its generation and
// returns its status.typeChecking.
func typeChecked(t *testing.T, h http.Handler, name string) map[string]any {
	t.Helper()
	var status map[string]any
	waitFor(t, name+" to be type-checked", func() bool {
		obj := mustDo(t, h, 200, "GET", policiesPath+"/"+name, "")
		status, _ = obj["status"].(map[string]any)
		gen := obj["metadata"].(map[string]any)["generation"]
		return status != nil && status["typeChecking"] != nil && status["observedGeneration"] == gen
	})
	return status["typeChecking"].(map[string]any)
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
	const deploymentWarning = "apps/v1, Kind=Deployment: ERROR: <input>:1:7: undefined field 'replicas'\n | object.replicas > 1\n | ......^"
	const replicaSetWarning = "apps/v1, Kind=ReplicaSet: ERROR: <input>:1:7: undefined field 'replicas'\n | object.replicas > 1\n | ......^"
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
	if tc := typeChecked(t, h, "correct"); len(tc) != 0 {
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
			" | ................................^",
		"spec.validations[0].messageExpression": "apps/v1, Kind=Deployment: ERROR: <input>:1:12: found no matching overload for '_+_' applied to '(string, int)'\n" +
			" | 'at most ' + variables.replicas\n" +
			" | ...........^",
	}
	if got := warningsOf(typeChecked(t, h, "correct")); !reflect.DeepEqual(got, want) {
		t.Errorf("broken: warnings %q, want %q", got, want)
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
	if tc := typeChecked(t, h, "wild"); len(tc) != 0 {
		t.Errorf("wild: typeChecking %v, want {}", tc)
	}
}

// Only the first ten group/version/resource combinations a policy names
// are checked, whether or not they exist; custom resources are not
// checked, nor typed as params.
func TestValidatingAdmissionPolicyStatus_Limits(t *testing.T) {
	sb := openSandbox(t)
	h := sb.Handler()
	// spec.paused is a Deployment's field, not a StatefulSet's.
	paused := func() map[string]any { return map[string]any{"validations": validations("object.spec.paused == true")} }
	var unknown []string
	for i := range 8 {
		unknown = append(unknown, fmt.Sprintf("a%d", i))
	}
	// deployments and statefulsets are the 9th and 10th combinations.
	mustDo(t, h, 201, "POST", policiesPath, policyBody("ten", slices.Concat(unknown, []string{"deployments", "statefulsets"}), paused()))
	// With a 9th unknown resource, statefulsets is the 11th.
	mustDo(t, h, 201, "POST", policiesPath, policyBody("eleven", slices.Concat(unknown, []string{"a8", "deployments", "statefulsets"}), paused()))
	want := "apps/v1, Kind=StatefulSet: ERROR: <input>:1:12: undefined field 'paused'\n | object.spec.paused == true\n | ...........^"
	if got := warningsOf(typeChecked(t, h, "ten")); !reflect.DeepEqual(got, map[string]string{"spec.validations[0].expression": want}) {
		t.Errorf("ten: warnings %q", got)
	}
	if tc := typeChecked(t, h, "eleven"); len(tc) != 0 {
		t.Errorf("eleven: typeChecking %v, want {}", tc)
	}

	mustDo(t, h, 201, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", gadgetsCRD)
	waitFor(t, "gadgets to be served", func() bool {
		code, _ := do(t, h, "GET", "/apis/example.com/v1/gadgets", "")
		return code == 200
	})
	custom := map[string]any{"paramKind": map[string]any{"apiVersion": "example.com/v1", "kind": "Gadget"},
		"validations": validations("object.nosuchfield == params.nosuchfield")}
	mustDo(t, h, 201, "POST", policiesPath, groupPolicyBody("custom", "example.com", []string{"gadgets"}, custom))
	if tc := typeChecked(t, h, "custom"); len(tc) != 0 {
		t.Errorf("custom: typeChecking %v, want {}", tc)
	}
	// A built-in kind checked with custom params: params stay untyped.
	mixed := map[string]any{"paramKind": map[string]any{"apiVersion": "example.com/v1", "kind": "Gadget"},
		"validations": validations("object.spec.replicas == params.nosuchfield")}
	mustDo(t, h, 201, "POST", policiesPath, policyBody("mixed", []string{"deployments"}, mixed))
	if tc := typeChecked(t, h, "mixed"); len(tc) != 0 {
		t.Errorf("mixed: typeChecking %v, want {}", tc)
	}
}

func TestValidatingAdmissionPolicyStatus_Disabled(t *testing.T) {
	sb := openSandboxWith(t, playground.Options{Controllers: playground.Controllers{DisableValidatingAdmissionPolicyStatus: true}})
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
