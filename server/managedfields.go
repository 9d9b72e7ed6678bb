package server

import (
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/server/catalog"
	"kubeplay/server/fieldmanager"
	"kubeplay/server/openapi"
)

// fieldManagerOf returns the manager a write is recorded under: the
// fieldManager parameter, else the one derived from the User-Agent. An
// invalid fieldManager is the 422 kube-apiserver gives for the request's
// options (optionsKind: CreateOptions, UpdateOptions, PatchOptions).
func fieldManagerOf(r *http.Request, optionsKind string) (string, error) {
	name := r.URL.Query().Get("fieldManager")
	if errs := metav1validation.ValidateFieldManager(name, field.NewPath("fieldManager")); len(errs) > 0 {
		return "", errInvalidOptions(optionsKind, errs)
	}
	if name == "" {
		name = fieldmanager.ManagerFromUserAgent(r.UserAgent())
	}
	return name, nil
}

// errInvalidOptions is the 422 for invalid query parameters of a write.
func errInvalidOptions(optionsKind string, errs field.ErrorList) error {
	return apierrors.NewInvalid(schema.GroupKind{Group: "meta.k8s.io", Kind: optionsKind}, "", errs)
}

// fieldManager returns the field manager of res written through subresource.
func (s *Server) fieldManager(res *catalog.Resource, subresource string) (*managedfields.FieldManager, error) {
	if res.Custom != nil {
		tc, err := s.customTypeConverter(res)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		f, err := s.fields.ForType(tc, res.GroupVersionKind(), subresource, hasStatus(res))
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		return f, nil
	}
	f, err := s.fields.For(res.GroupVersionKind(), subresource, hasStatus(res))
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	return f, nil
}

// trackUpdate records in obj's managedFields what manager changed from live
// (nil for a create) and returns obj.
func (s *Server) trackUpdate(res *catalog.Resource, subresource string, live, obj object, manager string) (object, error) {
	f, err := s.fieldManager(res, subresource)
	if err != nil {
		return nil, err
	}
	return fieldmanager.Update(f, res.GroupVersionKind(), live, obj, manager), nil
}

// customTypeConverter types the objects of a custom resource by its CRD's
// schema, built once per version of the CRD.
func (s *Server) customTypeConverter(res *catalog.Resource) (managedfields.TypeConverter, error) {
	if tc, ok := s.customTypes.Load(res.Custom); ok {
		return tc.(managedfields.TypeConverter), nil
	}
	schemas, err := openapi.CustomSchemas(customType(res))
	if err != nil {
		return nil, err
	}
	tc, err := fieldmanager.CustomTypeConverter(schemas)
	if err != nil {
		return nil, err
	}
	actual, _ := s.customTypes.LoadOrStore(res.Custom, tc)
	return actual.(managedfields.TypeConverter), nil
}
