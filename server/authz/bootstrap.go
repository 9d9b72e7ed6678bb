package authz

import (
	_ "embed"
	"encoding/json"
)

// bootstrapJSON holds the ClusterRoles, ClusterRoleBindings, Roles and
// RoleBindings kube-apiserver v1.35 creates on an empty cluster (with their
// rbac.authorization.kubernetes.io/autoupdate annotation and
// kubernetes.io/bootstrapping: rbac-defaults label), as
// `kubectl get clusterroles,clusterrolebindings,roles,rolebindings -A -o json`
// printed them, less uid, resourceVersion, creationTimestamp and
// managedFields.
//
//go:embed bootstrap.json
var bootstrapJSON []byte

// Bootstrap returns a fresh copy of the default RBAC objects.
func Bootstrap() ([]map[string]any, error) {
	var objs []map[string]any
	err := json.Unmarshal(bootstrapJSON, &objs)
	return objs, err
}
