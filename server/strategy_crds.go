package server

import (
	"context"
	"slices"

	"kubeplay/server/catalog"
)

// crdStrategy is the CustomResourceDefinition's: its status comes from its
// spec, its names are accepted and its resource served once it is stored,
// and a deleted CRD first loses its objects.
var crdStrategy = strategy{
	tracksGeneration:    true,
	conditionalUpdate:   true,
	keepsStatusOnCreate: true, // set by admitCRD from the spec
	admitChecksName:     true, // it must be <plural>.<group>
	admit:               (*Server).admitCRD,
	prepareForUpdate: func(subresource string, obj, _ object) {
		if subresource == "" {
			addStoredVersion(obj)
		}
	},
	afterWrite: func(s *Server, ctx context.Context, res *catalog.Resource, obj object) error {
		if deleting(obj) {
			return nil
		}
		return s.establish(ctx, storedCRD(res, obj))
	},
	markDeleted: (*Server).markCRDDeleted,
}

// admitCRD defaults and validates a CRD about to be written (old nil on
// create). A v1beta1 CRD is checked as v1, but for what v1beta1 allows or
// forbids besides.
func (s *Server) admitCRD(ctx context.Context, req *request, obj, old object) error {
	if req.subresource != "" {
		return nil
	}
	res := req.res
	crd, given := obj, object(nil)
	if isCRDV1beta1(res) {
		crd, given = toStorage(res, obj), obj
	}
	defaultCRD(crd, old == nil)
	if old != nil {
		crd["status"] = old["status"] // as the update will keep it
	}
	obj["status"] = crd["status"]
	errs, err := validateCRD(ctx, res, crd, old, given)
	if err != nil {
		return err
	}
	if len(errs) > 0 {
		return errInvalid(res, str(metadata(obj), "name"), errs)
	}
	return nil
}

// addStoredVersion adds a CRD's storage version to its
// status.storedVersions, after an update of its spec.
func addStoredVersion(obj object) {
	st := deepCopyObject(mapAt(obj, "status")) // shared with the stored object's
	obj["status"] = st
	stored := listOf(st, "storedVersions")
	for _, v := range versionsOf(mapAt(obj, "spec")) {
		if b, _ := v["storage"].(bool); b && !slices.Contains(stored, any(str(v, "name"))) {
			stored = append(stored, str(v, "name"))
		}
	}
	st["storedVersions"] = stored
}

// markCRDDeleted is kube-apiserver's CRD storage on DELETE: the CRD gets
// the cleanup finalizer and a Terminating condition, and its objects are
// deleted (cleanupCRD) before it goes.
func (s *Server) markCRDDeleted(ctx context.Context, d *deletion) (int, any, error) {
	if d.wasDeleting {
		return s.deleteMarked(ctx, d)
	}
	if list, changed := gcFinalizers(d.res, d.obj, d.opts); changed {
		setFinalizers(d.obj, list)
	}
	now := formatTime(s.now())
	fs := finalizers(d.obj)
	if !slices.Contains(fs, crdCleanupFinalizer) {
		setFinalizers(d.obj, append(fs, crdCleanupFinalizer))
	}
	st := mapAt(d.obj, "status")
	st["conditions"] = append(listOf(st, "conditions"), condition("Terminating", "True", "InstanceDeletionPending", "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon", now))
	metadata(d.obj)["deletionTimestamp"] = now
	code, out, err := s.writeDeleting(ctx, d)
	if err == nil && !d.dryRun {
		if o, ok := out.(object); ok {
			s.setCustom(d.name, customResources(storedCRD(d.res, o)))
		}
		err = s.cleanupCRD(ctx, d.name)
	}
	return code, out, err
}
