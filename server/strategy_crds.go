package server

import (
	"context"
	"slices"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/internal/jsonmap"
	"kubeplay/server/apiextensions"
	"kubeplay/server/catalog"
)

// isCRDV1beta1 reports whether r is apiextensions.k8s.io/v1beta1's CRDs
// (served until v1.21), stored in v1's shape as every CRD is.
func isCRDV1beta1(r *catalog.Resource) bool {
	return r.GroupResource() == crdsGVR.GroupResource() && r.Custom == nil && r.Version == "v1beta1"
}

// crdStrategy is the CustomResourceDefinition's: its status comes from its
// spec, its names are accepted and its resource served once it is stored,
// and a deleted CRD first loses its objects.
var crdStrategy = strategy{
	tracksGeneration:      true,
	conditionalUpdate:     true,
	keepsStatusOnCreate:   true, // set by admitCRD from the spec
	admitChecksName:       true, // it must be <plural>.<group>
	genericFinalizerNames: true,
	// Its /status means to reset the metadata, but resets it to the new
	// object's: the changes are kept, not recorded.
	resets: onStatus(metadataPath),
	admit:  (*registry).admitCRD,
	prepareForUpdate: func(subresource string, obj, _ object) {
		if subresource == "" {
			apiextensions.AddStoredVersion(obj)
		}
	},
	afterWrite: func(s *registry, ctx context.Context, res *catalog.Resource, obj object) error {
		if deleting(obj) {
			return nil
		}
		return s.establish(ctx, storedCRD(res, obj))
	},
	markDeleted: (*registry).markCRDDeleted,
}

// admitCRD defaults and validates a CRD about to be written (old nil on
// create). A v1beta1 CRD is checked as v1, but for what v1beta1 allows or
// forbids besides.
func (s *registry) admitCRD(ctx context.Context, req *request, obj, old object) error {
	if req.subresource != "" {
		return nil
	}
	res := req.res
	crd, given := obj, object(nil)
	if isCRDV1beta1(res) {
		crd, given = toStorage(res, obj), obj
	}
	apiextensions.Default(crd, old == nil)
	if old != nil {
		crd["status"] = old["status"] // as the update will keep it
	}
	obj["status"] = crd["status"]
	name := str(metadata(obj), "name")
	errs, err := apiextensions.Validate(ctx, crd, old, given, validateName(res, name, field.NewPath("metadata", "name")))
	if err != nil {
		return err
	}
	if len(errs) > 0 {
		return errInvalid(res, name, errs)
	}
	return nil
}

// markCRDDeleted is kube-apiserver's CRD storage on DELETE: the CRD gets
// the cleanup finalizer and a Terminating condition, and its objects are
// deleted (cleanupCRD) before it goes.
func (s *registry) markCRDDeleted(ctx context.Context, d *deletion) (int, any, error) {
	if d.wasDeleting {
		return s.deleteMarked(ctx, d)
	}
	if list, changed := gcFinalizers(d.store.strategy, d.obj, d.opts); changed {
		setFinalizers(d.obj, list)
	}
	now := formatTime(s.now())
	fs := finalizers(d.obj)
	if !slices.Contains(fs, apiextensions.CleanupFinalizer) {
		setFinalizers(d.obj, append(fs, apiextensions.CleanupFinalizer))
	}
	st := jsonmap.Ensure(d.obj, "status")
	st["conditions"] = append(jsonmap.List(st, "conditions"), apiextensions.Condition("Terminating", "True", "InstanceDeletionPending", "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon", now))
	metadata(d.obj)["deletionTimestamp"] = now
	code, out, err := s.writeDeleting(ctx, d)
	if err == nil && !d.dryRun {
		if o, ok := out.(object); ok {
			s.setCustom(d.name, s.customResources(storedCRD(d.res, o)))
		}
		err = s.cleanupCRD(ctx, d.name)
	}
	return code, out, err
}
