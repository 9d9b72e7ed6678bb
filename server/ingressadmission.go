package server

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"kubeplay/internal/jsonmap"
	"kubeplay/server/audit"
	"kubeplay/server/catalog"
)

var ingressClassesGVR = schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "ingressclasses"}

// admitIngress is DefaultIngressClass: a new Ingress that names no class
// (neither by spec.ingressClassName nor by the legacy annotation) gets the
// default IngressClass; of several defaults, the newest, as
// DefaultStorageClass chooses.
func admitIngress(s *admission, ctx context.Context, _ *catalog.Resource, _ string, obj object) (func(podSecurity func() error) error, error) {
	rec := audit.FromContext(ctx)
	if _, named := jsonmap.Child(obj, "spec")["ingressClassName"]; named {
		return nil, rec.Ran(mutating("DefaultIngressClass"), nil)
	}
	if _, named := jsonmap.Child(obj, "metadata", "annotations")["kubernetes.io/ingress.class"]; named {
		return nil, rec.Ran(mutating("DefaultIngressClass"), nil)
	}
	name, err := s.newestDefault(ctx, ingressClassesGVR, func(annotations map[string]string) bool {
		return annotations["ingressclass.kubernetes.io/is-default-class"] == "true"
	})
	if name != "" {
		jsonmap.Ensure(obj, "spec")["ingressClassName"] = name
	}
	return nil, rec.Ran(mutating("DefaultIngressClass"), err)
}
