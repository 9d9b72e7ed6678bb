package server

import "k8s.io/apimachinery/pkg/runtime/schema"

// rbacStrategies are the strategies of rbac.authorization.k8s.io's
// resources: a PUT of a missing role or binding creates it.
var rbacStrategies = map[schema.GroupResource]strategy{
	{Group: "rbac.authorization.k8s.io", Resource: "roles"}:               {createOnUpdate: true},
	{Group: "rbac.authorization.k8s.io", Resource: "rolebindings"}:        {createOnUpdate: true},
	{Group: "rbac.authorization.k8s.io", Resource: "clusterroles"}:        {createOnUpdate: true},
	{Group: "rbac.authorization.k8s.io", Resource: "clusterrolebindings"}: {createOnUpdate: true},
}
