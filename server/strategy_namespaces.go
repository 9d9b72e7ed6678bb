package server

import (
	"context"
	"errors"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/internal/jsonmap"
	"kubeplay/server/audit"
	"kubeplay/server/catalog"
	"kubeplay/server/validation"
)

var namespacesGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

// namespaceStrategy is the Namespace's: a namespace starts Active with the
// kubernetes finalizer in its spec, which changes only through /finalize,
// and a DELETE only marks it Terminating for the namespace controller.
var namespaceStrategy = strategy{
	returnsDeletedObject: true,
	selectableFields:     map[string]selectableField{"status.phase": {}},
	isNamespace:          true,
	subresources:         []string{"finalize"},
	validate:             validation.Namespace,
	normalize: func(obj object) {
		md := metadata(obj)
		labels, _ := md["labels"].(map[string]any)
		if labels == nil {
			labels = map[string]any{}
			md["labels"] = labels
		}
		labels["kubernetes.io/metadata.name"] = str(md, "name")
	},
	prepareForCreate: func(obj object) {
		// The client's finalizers stay (to be validated), with the
		// namespace controller's added.
		list, _ := jsonmap.Child(obj, "spec")["finalizers"].([]any)
		if !slices.Contains(list, any("kubernetes")) {
			list = append(list, "kubernetes")
		}
		obj["spec"] = map[string]any{"finalizers": list}
		obj["status"] = map[string]any{"phase": "Active"}
	},
	prepareForUpdate: func(subresource string, obj, old object) {
		if subresource != "finalize" {
			obj["spec"] = old["spec"] // spec.finalizers change only through /finalize
		}
	},
	validateSubresource: func(subresource string, obj, _ object) field.ErrorList {
		switch subresource {
		case "finalize":
			return validation.NamespaceFinalizers(obj)
		case "status":
			return validation.NamespaceStatus(obj)
		}
		return nil
	},
	admitDelete: func(ctx context.Context, res *catalog.Resource, name string) error {
		return audit.FromContext(ctx).Ran(audit.Stage{Phase: audit.Mutating, Plugin: "NamespaceLifecycle"}, errImmortalNamespace(res, name))
	},
	deletePreconditions: namespacePreconditions,
	markDeleted:         (*registry).markNamespaceDeleted,
}

// immortalNamespaces are those the NamespaceLifecycle plugin never lets
// anyone delete.
var immortalNamespaces = map[string]bool{"default": true, "kube-system": true, "kube-public": true}

// errImmortalNamespace is NamespaceLifecycle's answer to a DELETE of
// namespace name: nil unless it is immortal.
func errImmortalNamespace(res *catalog.Resource, name string) error {
	if !immortalNamespaces[name] {
		return nil
	}
	return apierrors.NewForbidden(res.GroupResource(), name, errors.New("this namespace may not be deleted"))
}

// namespacePreconditions checks a namespace's delete preconditions as
// kube-apiserver's namespace registry words them.
func namespacePreconditions(res *catalog.Resource, name string, md map[string]any, pre *metav1.Preconditions) error {
	if pre == nil {
		return nil
	}
	if pre.UID != nil && string(*pre.UID) != str(md, "uid") {
		return apierrors.NewConflict(res.GroupResource(), name, fmt.Errorf("Precondition failed: UID in precondition: %s, UID in object meta: %s", *pre.UID, str(md, "uid")))
	}
	if pre.ResourceVersion != nil && *pre.ResourceVersion != str(md, "resourceVersion") {
		return apierrors.NewConflict(res.GroupResource(), name, fmt.Errorf("Precondition failed: ResourceVersion in precondition: %s, ResourceVersion in object meta: %s", *pre.ResourceVersion, str(md, "resourceVersion")))
	}
	return nil
}

// markNamespaceDeleted is kube-apiserver's namespace registry on DELETE:
// a namespace is never deleted at once, its spec.finalizers hold it for
// the namespace controller, and a second DELETE changes nothing.
func (s *registry) markNamespaceDeleted(ctx context.Context, d *deletion) (int, any, error) {
	if d.wasDeleting {
		return d.answer()
	}
	if list, changed := gcFinalizers(d.store.strategy, d.obj, d.opts); changed {
		setFinalizers(d.obj, list)
	}
	metadata(d.obj)["deletionTimestamp"] = formatTime(s.now())
	if st, ok := d.obj["status"].(map[string]any); ok {
		st["phase"] = "Terminating"
	} else {
		d.obj["status"] = map[string]any{"phase": "Terminating"}
	}
	return s.writeDeleting(ctx, d)
}

// namespaceFinalizers are a namespace's spec.finalizers.
func namespaceFinalizers(obj object) []string {
	spec, _ := obj["spec"].(map[string]any)
	list, _ := spec["finalizers"].([]any)
	out := make([]string, 0, len(list))
	for _, f := range list {
		if s, ok := f.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
