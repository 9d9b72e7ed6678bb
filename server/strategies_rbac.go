package server

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"kubeplay/server/validation"
)

// rbacStrategies are the strategies of rbac.authorization.k8s.io's
// resources: a PUT of a missing role or binding creates it.
var rbacStrategies = map[schema.GroupResource]strategy{
	{Group: "rbac.authorization.k8s.io", Resource: "roles"}: {
		createOnUpdate: true, validate: validation.Role, validateUpdate: validation.RoleUpdate,
	},
	{Group: "rbac.authorization.k8s.io", Resource: "rolebindings"}: {
		createOnUpdate: true, validate: validation.RoleBinding, validateUpdate: validation.RoleBindingUpdate,
	},
	{Group: "rbac.authorization.k8s.io", Resource: "clusterroles"}: {
		createOnUpdate: true, validate: validation.ClusterRole, validateUpdate: validation.ClusterRoleUpdate,
	},
	{Group: "rbac.authorization.k8s.io", Resource: "clusterrolebindings"}: {
		createOnUpdate: true, validate: validation.ClusterRoleBinding, validateUpdate: validation.ClusterRoleBindingUpdate,
	},
}
