package server

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/server/catalog"
	"kubeplay/server/validation"
)

// errUIDPrecondition is the 409 for an update whose metadata.uid names
// another object than the one stored under its name.
func errUIDPrecondition(r *catalog.Resource, ns, name, uid, stored string) error {
	return apierrors.NewConflict(r.GroupResource(), name, errors.New(fmt.Sprintf(
		"StorageError: invalid object, Code: 4, Key: %s, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: %s, UID in object meta: %s",
		objectKey(r, ns, name), uid, stored)))
}

// validateUpdate checks, before the update is prepared (so against what the
// client sent), what an update of the main resource may not change: no new
// finalizers or grace period on an object being deleted; and the type's
// own rules (see package validation and the strategy's validateUpdate). A
// subresource's update changes only its part, which prepareUpdate takes
// care of, and which the strategy's validateSubresource checks.
func validateUpdate(ctx context.Context, req *request, obj, old object) (field.ErrorList, error) {
	r := req.res
	st := strategyOf(r)
	if req.subresource != "" {
		if st.validateSubresource == nil {
			return nil, nil
		}
		return st.validateSubresource(req.subresource, obj, old), nil
	}
	errs := validation.MetadataOnUpdate(obj, !st.updateSkipsMetadataChanges, !st.updateSkipsObjectMeta && r.Custom == nil, r.Custom == nil && !st.genericFinalizerNames)
	if r.Custom != nil {
		finalizerErrors(ctx, r, obj) // its warnings; the errors are in errs
	}
	errs = append(errs, validateDeletingUpdate(obj, old)...)
	kindErrs, err := validation.Update(ctx, r.GroupVersionKind(), obj, old)
	if err != nil {
		return nil, err
	}
	errs = append(errs, kindErrs...)
	if st.validateUpdate != nil {
		errs = append(errs, st.validateUpdate(obj, old)...)
	}
	return errs, nil
}

// errUIDChanged is kube-apiserver's 422 for a patch that changes
// metadata.uid; it checks object metadata twice and so names the field twice.
func errUIDChanged(r *catalog.Resource, name, uid string) error {
	e := field.Invalid(field.NewPath("metadata", "uid"), uid, "field is immutable")
	return errInvalid(r, name, field.ErrorList{e, e})
}
