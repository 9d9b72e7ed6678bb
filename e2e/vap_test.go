package e2e_test

import (
	"testing"

	"kubeplay/e2e"
)

// vapPolicies are a ValidatingAdmissionPolicy whose binding denies
// configmaps with more than two keys or a bad name, and one whose binding
// warns about configmaps created without labels.
const vapPolicies = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: demo}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: ["v1"]
      operations: ["CREATE","UPDATE"]
      resources: ["configmaps"]
  validations:
  - expression: "!has(object.data) || size(object.data) <= 2"
  - expression: "!object.metadata.name.startsWith('bad')"
    message: "name must not start with bad"
    reason: Forbidden
  - expression: "!object.metadata.name.startsWith('worse')"
    messageExpression: "'name ' + object.metadata.name + ' is worse'"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: demo-binding}
spec:
  policyName: demo
  validationActions: [Deny]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: warn}
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["configmaps"]
  validations:
  - expression: "has(object.metadata.labels)"
    message: "configmaps should have labels"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: warn-binding}
spec:
  policyName: warn
  validationActions: [Warn]
`

// TestKubectl_ValidatingAdmissionPolicy applies policies and bindings with
// kubectl and shows its denials and warnings; the expected outputs are
// kubectl's against kube-apiserver v1.35.
func TestKubectl_ValidatingAdmissionPolicy(t *testing.T) {
	k := e2e.Kubectl(t, e2e.Start(t, t.TempDir()).URL)
	expect := func(got, want string) {
		t.Helper()
		if got != want {
			t.Errorf("kubectl printed\n%s\nwant\n%s", got, want)
		}
	}
	expect(k.Stdin(vapPolicies).Succeeds("apply", "-f", "-"),
		"validatingadmissionpolicy.admissionregistration.k8s.io/demo created\n"+
			"validatingadmissionpolicybinding.admissionregistration.k8s.io/demo-binding created\n"+
			"validatingadmissionpolicy.admissionregistration.k8s.io/warn created\n"+
			"validatingadmissionpolicybinding.admissionregistration.k8s.io/warn-binding created\n")
	const warning = "Warning: Validation failed for ValidatingAdmissionPolicy 'warn' with binding 'warn-binding': configmaps should have labels\n"
	expect(k.Succeeds("create", "configmap", "ok", "--from-literal=a=1"), warning+"configmap/ok created\n")
	expect(k.Fails("create", "configmap", "big", "--from-literal=a=1", "--from-literal=b=2", "--from-literal=c=3"),
		warning+`error: failed to create configmap: configmaps "big" is forbidden: ValidatingAdmissionPolicy 'demo' with binding 'demo-binding' denied request: failed expression: !has(object.data) || size(object.data) <= 2`+"\n")
	expect(k.Fails("create", "configmap", "badname"),
		warning+`error: failed to create configmap: configmaps "badname" is forbidden: ValidatingAdmissionPolicy 'demo' with binding 'demo-binding' denied request: name must not start with bad`+"\n")
	expect(k.Fails("create", "configmap", "worsename"),
		warning+`error: failed to create configmap: configmaps "worsename" is forbidden: ValidatingAdmissionPolicy 'demo' with binding 'demo-binding' denied request: name worsename is worse`+"\n")
	expect(k.Succeeds("label", "cm", "ok", "x=y"), "configmap/ok labeled\n")
	expect(k.Fails("patch", "cm", "ok", "-p", `{"data":{"b":"1","c":"2"}}`),
		`The configmaps "ok" is invalid: : ValidatingAdmissionPolicy 'demo' with binding 'demo-binding' denied request: failed expression: !has(object.data) || size(object.data) <= 2`+"\n")
}
