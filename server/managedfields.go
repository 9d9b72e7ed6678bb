package server

import (
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/server/catalog"
	"kubeplay/server/fieldmanager"
	"kubeplay/server/openapi"
)

// writeOptions are the query parameters of a create, update or patch.
type writeOptions struct {
	// manager is the fieldManager, else the one derived from the User-Agent.
	manager string
	dryRun  bool
	force   bool
}

// dryRunRequested reports whether a write asks not to be persisted (its
// dryRun values are checked by writeOptionsOf).
func dryRunRequested(r *http.Request) bool { return len(r.URL.Query()["dryRun"]) > 0 }

// writeOptionsOf reads and checks the options of a write; invalid ones are
// the 422 kube-apiserver gives for them, naming optionsKind (CreateOptions,
// UpdateOptions, PatchOptions). patchType is the Content-Type of a patch.
func writeOptionsOf(r *http.Request, optionsKind, patchType string) (writeOptions, error) {
	q := r.URL.Query()
	opts := writeOptions{manager: q.Get("fieldManager"), dryRun: dryRunRequested(r), force: QueryBool(q, "force")}
	var errs field.ErrorList
	switch optionsKind {
	case "CreateOptions":
		errs = metav1validation.ValidateCreateOptions(&metav1.CreateOptions{
			DryRun: q["dryRun"], FieldManager: opts.manager, FieldValidation: q.Get("fieldValidation")})
	case "UpdateOptions":
		errs = metav1validation.ValidateUpdateOptions(&metav1.UpdateOptions{
			DryRun: q["dryRun"], FieldManager: opts.manager, FieldValidation: q.Get("fieldValidation")})
	case "PatchOptions":
		var force *bool
		if q.Has("force") {
			force = &opts.force
		}
		errs = metav1validation.ValidatePatchOptions(&metav1.PatchOptions{
			DryRun: q["dryRun"], FieldManager: opts.manager, FieldValidation: q.Get("fieldValidation"), Force: force}, types.PatchType(patchType))
	}
	if len(errs) > 0 {
		return writeOptions{}, errInvalidOptions(optionsKind, errs)
	}
	if opts.manager == "" {
		opts.manager = fieldmanager.ManagerFromUserAgent(r.UserAgent())
	}
	return opts, nil
}

// errInvalidOptions is the 422 for invalid query parameters of a write.
func errInvalidOptions(optionsKind string, errs field.ErrorList) error {
	return apierrors.NewInvalid(schema.GroupKind{Group: "meta.k8s.io", Kind: optionsKind}, "", errs)
}

// fieldManager returns the field manager of rs's resource written through
// subresource.
func (s *registry) fieldManager(rs *resourceStore, subresource string) (*fieldmanager.FieldManager, error) {
	res, resets := rs.res, rs.strategy.resets[subresource]
	// The status is written elsewhere, so not recorded here.
	statusElsewhere := rs.hasStatus && !rs.writesStatus(subresource)
	if res.Custom != nil {
		tc, err := s.customTypeConverter(res)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		f, err := s.fields.ForType(tc, res.GroupVersionKind(), subresource, statusElsewhere, resets)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		return f, nil
	}
	var f *fieldmanager.FieldManager
	var err error
	if catalog.SharesStorage(res) {
		f, err = s.fields.ForVersions(res.GroupVersionKind(), subresource, statusElsewhere, resets, convertVersion)
	} else {
		f, err = s.fields.For(res.GroupVersionKind(), subresource, statusElsewhere, resets)
	}
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	return f, nil
}

// trackUpdate records in obj's managedFields what manager changed from live
// (nil for a create) and returns obj.
func (s *registry) trackUpdate(rs *resourceStore, subresource string, live, obj object, manager string) (object, error) {
	f, err := s.fieldManager(rs, subresource)
	if err != nil {
		return nil, err
	}
	return fieldmanager.Update(f, live, obj, manager), nil
}

// customTypeConverter types the objects of a custom resource by its CRD's
// schema, built once per version of the CRD.
func (s *registry) customTypeConverter(res *catalog.Resource) (managedfields.TypeConverter, error) {
	if tc, ok := s.customTypes.Load(res.Custom); ok {
		return tc.(managedfields.TypeConverter), nil
	}
	schemas, err := openapi.CustomSchemas(customType(res))
	if err != nil {
		return nil, err
	}
	tc, err := fieldmanager.CustomTypeConverter(schemas, res.Custom.PreserveUnknownFields)
	if err != nil {
		return nil, err
	}
	actual, _ := s.customTypes.LoadOrStore(res.Custom, tc)
	return actual.(managedfields.TypeConverter), nil
}
