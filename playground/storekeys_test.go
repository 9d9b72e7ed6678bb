package playground

import "testing"

func TestBuiltinKeyPrefix(t *testing.T) {
	// Where kube-apiserver keeps these objects in etcd.
	for _, tt := range []struct{ got, want string }{
		{podKeyPrefix, "/registry/pods/"},
		{namespaceKeyPrefix, "/registry/namespaces/"},
		{clusterRoleKeyPrefix, "/registry/clusterroles/"},
		{policyKeyPrefix, "/registry/validatingadmissionpolicies/"},
		{builtinKeyPrefix(appsV1("deployments")), "/registry/deployments/"},
		{builtinKeyPrefix(batchV1("jobs")), "/registry/jobs/"},
	} {
		if tt.got != tt.want {
			t.Errorf("key prefix %q, want %q", tt.got, tt.want)
		}
	}
}
