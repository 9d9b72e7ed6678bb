package server

import (
	"context"
	"errors"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/server/catalog"
	"kubeplay/server/encoding"
)

// customStrategy is the strategy of every custom resource: generations
// tracked, updates conditional, objects checked against their CRD's
// schema. It is set in init, as its hooks reach back to strategyOf.
var customStrategy strategy

func init() {
	customStrategy = strategy{
		tracksGeneration:    true,
		conditionalUpdate:   true,
		keepsStatusOnCreate: true,
		statusOnlyStatus:    true,
		// A new custom object has no status.
		prepareForCreate: func(obj object) { delete(obj, "status") },
		admit:            (*registry).admitCustom,
		// A deleted object may have been the last of a deleted CRD's.
		afterWrite: func(s *registry, ctx context.Context, res *catalog.Resource, obj object) error {
			if !deleting(obj) {
				return nil
			}
			return s.cleanupCRD(ctx, res.Custom.CRD)
		},
		afterDelete: func(s *registry, ctx context.Context, res *catalog.Resource) error {
			return s.cleanupCRD(ctx, res.Custom.CRD)
		},
	}
}

// admitCustom checks a custom object about to be written (old nil on
// create) against its CRD's schema: it is pruned of unknown fields
// (reported as the request's fieldValidation says), defaulted and
// validated, then its validation rules are evaluated.
func (s *registry) admitCustom(ctx context.Context, req *request, obj, old object) error {
	res := req.res
	if old == nil && res.Custom.Terminating {
		return apierrors.NewForbidden(res.GroupResource(), str(metadata(obj), "name"), errors.New("create not allowed while custom resource definition is terminating"))
	}
	sch := res.Custom.Schema
	if unknown := sch.Prune(obj); len(unknown) > 0 {
		switch req.fieldValidation {
		case "Ignore":
		case "Strict":
			return encoding.BadRequest("%s in version %q cannot be handled as a %s: strict decoding error: %s", res.Kind, res.Version, res.Kind, strings.Join(unknownFields(unknown), ", "))
		default:
			warn(ctx, unknownFields(unknown)...)
		}
	}
	sch.ApplyDefaults(obj)
	errs := sch.Validate(obj, old)
	switch {
	case blocking(errs) && res.Custom.Rules != nil:
		errs = append(errs, field.Invalid(nil, nil, "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"))
	case !blocking(errs):
		ruleErrs, err := res.Custom.Rules.Validate(ctx, obj, old)
		if err != nil {
			return err
		}
		errs = append(errs, ruleErrs...)
	}
	if len(errs) > 0 {
		return errInvalid(res, str(metadata(obj), "name"), errs)
	}
	return nil
}
