package playground

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestBuiltinKeyPrefix(t *testing.T) {
	// Where kube-apiserver keeps these objects in etcd.
	for _, tt := range []struct{ got, want string }{
		{podKeyPrefix, "/registry/pods/"},
		{namespaceKeyPrefix, "/registry/namespaces/"},
		{clusterRoleKeyPrefix, "/registry/clusterroles/"},
		{policyKeyPrefix, "/registry/validatingadmissionpolicies/"},
	} {
		if tt.got != tt.want {
			t.Errorf("key prefix %q, want %q", tt.got, tt.want)
		}
	}
	// The workloads' queue keys are store keys less objectsRoot, read as
	// "<resource>/<namespace>/<name>".
	gvrs := map[string]schema.GroupVersionResource{
		"deployments": {Group: "apps", Version: "v1", Resource: "deployments"},
		"replicasets": {Group: "apps", Version: "v1", Resource: "replicasets"},
		"jobs":        {Group: "batch", Version: "v1", Resource: "jobs"},
		"pods":        {Version: "v1", Resource: "pods"},
	}
	for resource := range workloadControllers {
		gvr, ok := gvrs[resource]
		if !ok {
			t.Errorf("the workloads look after %s: say where it is stored", resource)
			continue
		}
		if got, want := builtinKeyPrefix(gvr), objectsRoot+resource+"/"; got != want {
			t.Errorf("%v is stored under %q, not %q as the workloads' keys take it", gvr, got, want)
		}
	}
}
