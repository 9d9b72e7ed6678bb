package server

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"kubeplay/internal/jsonmap"
)

// apiServicesGVR is the resource of the APIServices kube-apiserver keeps,
// one per group version it serves (the built-in ones are bootstrap objects).
var apiServicesGVR = schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}

// syncCRDAPIServices is the work of kube-apiserver's CRD registration
// controller on a CRD just established or removed: each of its group
// versions that custom resources serve has a local APIService, labelled
// as managed by that controller; one no longer served loses it.
func (s *registry) syncCRDAPIServices(ctx context.Context, crd object) error {
	res := s.catalog.Lookup(apiServicesGVR)
	if res == nil {
		return nil // apiregistration.k8s.io switched off
	}
	group := jsonmap.String(crd, "spec", "group")
	for _, v := range jsonmap.List(crd, "spec", "versions") {
		m, _ := v.(map[string]any)
		gv := schema.GroupVersion{Group: group, Version: str(m, "name")}
		name := gv.Version + "." + gv.Group
		obj, _, err := s.getObject(ctx, res, "", name)
		served := len(s.catalog.Resources(gv)) > 0
		switch {
		case apierrors.IsNotFound(err) && served:
			err = s.createBootstrap(ctx, res, objectKey(res, "", name), crdAPIService(gv))
		case err == nil && !served && jsonmap.String(obj, "metadata", "labels", "kube-aggregator.kubernetes.io/automanaged") == "true":
			_, _, err = s.deleteObject(ctx, newResourceStore(res), "", name, &metav1.DeleteOptions{})
		case apierrors.IsNotFound(err):
			err = nil
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// crdAPIService is the APIService kube-apiserver registers for a group
// version of custom resources, with the priorities it gives them all.
func crdAPIService(gv schema.GroupVersion) object {
	return object{
		"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
		"metadata": map[string]any{"name": gv.Version + "." + gv.Group, "labels": map[string]any{"kube-aggregator.kubernetes.io/automanaged": "true"}},
		"spec":     map[string]any{"group": gv.Group, "version": gv.Version, "groupPriorityMinimum": int64(1000), "versionPriority": int64(100)},
	}
}
