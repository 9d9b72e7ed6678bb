package authz

import (
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Forbidden is kube-apiserver's 403 for a denied request, e.g.
// `configmaps "x" is forbidden: User "alice" cannot get resource
// "configmaps" in API group "" in the namespace "dev"`, followed by
// ": " and reason when there is one.
func Forbidden(attrs Attributes, reason string) error {
	var msg string
	if !attrs.ResourceRequest {
		msg = fmt.Sprintf("User %q cannot %s path %q", attrs.User.Name, attrs.Verb, attrs.Path)
	} else {
		resource := attrs.Resource
		if attrs.Subresource != "" {
			resource += "/" + attrs.Subresource
		}
		scope := "at the cluster scope"
		if attrs.Namespace != "" {
			scope = fmt.Sprintf("in the namespace %q", attrs.Namespace)
		}
		msg = fmt.Sprintf("User %q cannot %s resource %q in API group %q %s", attrs.User.Name, attrs.Verb, resource, attrs.APIGroup, scope)
	}
	if reason != "" {
		msg += ": " + reason
	}
	var gr schema.GroupResource
	if attrs.ResourceRequest {
		gr = schema.GroupResource{Group: attrs.APIGroup, Resource: attrs.Resource}
	}
	return apierrors.NewForbidden(gr, attrs.Name, errors.New(msg))
}
