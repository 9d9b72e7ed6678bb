package server

import (
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/server/catalog"
)

// errUIDPrecondition is the 409 for an update whose metadata.uid names
// another object than the one stored under its name.
func errUIDPrecondition(r *catalog.Resource, ns, name, uid, stored string) error {
	return apierrors.NewConflict(r.GroupResource(), name, errors.New(fmt.Sprintf(
		"StorageError: invalid object, Code: 4, Key: %s, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: %s, UID in object meta: %s",
		objectKey(r, ns, name), uid, stored)))
}

// errUIDChanged is kube-apiserver's 422 for a patch that changes
// metadata.uid; it checks object metadata twice and so names the field twice.
func errUIDChanged(r *catalog.Resource, name, uid string) error {
	e := field.Invalid(field.NewPath("metadata", "uid"), uid, "field is immutable")
	return errInvalid(r, name, field.ErrorList{e, e})
}
