package server

import (
	"context"
	"errors"
	"fmt"
	"maps"

	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/server/catalog"
	"kubeplay/server/encoding"
)

// admitSchema applies the rules of a type beyond object metadata to an object
// about to be written (old is nil for a create): a CRD is defaulted and
// validated; a custom object is pruned of unknown fields (reported as the
// request's fieldValidation says), defaulted and validated against its
// CRD's schema.
func (s *Server) admitSchema(ctx context.Context, req *request, obj, old object) error {
	res := req.res
	switch {
	case isCRDs(res) && req.subresource == "":
		// A v1beta1 CRD is checked as v1, but for what v1beta1 allows or
		// forbids besides.
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
	case res.Custom != nil:
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

	}
	return nil
}

// unknownFields are the reports of the unknown fields pruning found
// (`unknown field "spec.foo"`).
func unknownFields(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = fmt.Sprintf("unknown field %q", p)
	}
	return out
}

// blocking reports whether schema errors keep kube-apiserver from
// evaluating CEL rules: a value of the wrong type, a missing or unsupported
// one, or one too long or with too many items.
func blocking(errs field.ErrorList) bool {
	for _, e := range errs {
		switch e.Type {
		case field.ErrorTypeNotSupported, field.ErrorTypeRequired, field.ErrorTypeTooLong, field.ErrorTypeTooMany, field.ErrorTypeTypeInvalid:
			return true
		}
	}
	return false
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

// afterWrite runs what kube-apiserver's controllers do once an object is
// written: a CRD's names are accepted and its resource served; a deleted
// CRD goes once its last object has.
func (s *Server) afterWrite(ctx context.Context, res *catalog.Resource, obj object) error {
	switch {
	case res.Custom != nil && deleting(obj):
		// The object may have been the last of a deleted CRD's.
		return s.cleanupCRD(ctx, res.Custom.CRD)
	case isCRDs(res) && !deleting(obj):
		return s.establish(ctx, storedCRD(res, obj))
	}
	return nil
}

// statusOnly is the object an update of the status subresource writes, as
// the type's status strategy says: the new status, the stored spec (and
// whatever else is neither metadata nor status), and the new metadata but
// for what the strategy keeps as stored; or, for the types whose /status
// changes the status alone, the stored object with the new status (and
// the managedFields the field manager computed for the update, or the
// client sent). HorizontalPodAutoscalers also keep the annotations that
// hold their autoscaling/v1 view.
func statusOnly(res *catalog.Resource, obj, old object) object {
	st := strategyOf(res)
	if !st.statusOnlyStatus {
		out, was := deepCopyObject(obj), deepCopyObject(old)
		for k := range desiredState(out) {
			delete(out, k)
		}
		maps.Copy(out, desiredState(was))
		md, oldMD := metadata(out), metadata(was)
		for _, k := range st.statusIgnoresMetadata {
			if v, ok := oldMD[k]; ok {
				md[k] = v
			} else {
				delete(md, k)
			}
		}
		prepareForUpdate(res, "status", out, old)
		if isHPA(res) {
			keepHPAAnnotations(out, old)
		}
		return out
	}
	out := deepCopyObject(old)
	if st, ok := obj["status"]; ok {
		out["status"] = st
	} else {
		delete(out, "status")
	}
	md := metadata(out)
	md["resourceVersion"] = metadata(obj)["resourceVersion"]
	if mf, ok := metadata(obj)["managedFields"]; ok {
		md["managedFields"] = mf
	} else {
		delete(md, "managedFields")
	}
	return out
}
