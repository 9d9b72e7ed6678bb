package server

import (
	"context"
	"errors"
	"fmt"
	"reflect"

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
// finalizers or grace period on an object being deleted, nothing of an
// immutable ConfigMap's or Secret's data; and the type's own rules (see
// package validation). A subresource's update changes only its part,
// which prepareUpdate takes care of, and which the strategy's
// validateSubresource checks.
func validateUpdate(ctx context.Context, req *request, obj, old object) (field.ErrorList, error) {
	r := req.res
	st := strategyOf(r)
	if req.subresource != "" {
		if st.validateSubresource == nil {
			return nil, nil
		}
		return st.validateSubresource(req.subresource, obj, old), nil
	}
	errs := validation.MetadataOnUpdate(obj, !st.updateSkipsObjectMeta && r.Custom == nil, r.Custom == nil && !st.genericFinalizerNames)
	if r.Custom != nil {
		finalizerErrors(ctx, r, obj) // its warnings; the errors are in errs
	}
	errs = append(errs, validateDeletingUpdate(obj, old)...)
	if r.Group == "" && (r.Resource == "configmaps" || r.Resource == "secrets") && old["immutable"] == true {
		immutable := func(key string) {
			if !reflect.DeepEqual(obj[key], old[key]) {
				errs = append(errs, field.Forbidden(field.NewPath(key), "field is immutable when `immutable` is set"))
			}
		}
		immutable("immutable")
		immutable("data")
		if r.Resource == "configmaps" {
			immutable("binaryData")
		}
	}
	kindErrs, err := validation.Update(ctx, r.GroupVersionKind(), obj, old)
	if err != nil {
		return nil, err
	}
	return append(errs, kindErrs...), nil
}

// errUIDChanged is kube-apiserver's 422 for a patch that changes
// metadata.uid; it checks object metadata twice and so names the field twice.
func errUIDChanged(r *catalog.Resource, name, uid string) error {
	e := field.Invalid(field.NewPath("metadata", "uid"), uid, "field is immutable")
	return errInvalid(r, name, field.ErrorList{e, e})
}
