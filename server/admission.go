package server

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/server/audit"
	"kubeplay/server/authn"
	"kubeplay/server/authz"
)

// admitCreate runs, on an object a request is about to create (dry runs
// included), what kube-apiserver runs between decoding and storing it, in
// its order:
//
//  1. Mutating admission (after NamespaceLifecycle, which the callers run
//     first): the plugins of the resource's strategy (admitNew): on a new
//     Pod, a new claim; then the mutating webhooks.
//  2. The resource's own authorization of the write (authorizeWrite): for
//     roles and bindings, the RBAC escalation check (kube-apiserver's RBAC
//     storage makes it after mutating admission).
//  3. The type's validation, on the object with its server-set metadata,
//     with metaErrs, the errors of its name and finalizers found before
//     (kube-apiserver reports them in the same 422).
//  4. For a create by PUT or by apply, the authorization of the create
//     verb besides the request's own.
//  5. Validating admission (the validating phase of those plugins, with
//     PodSecurity in its place among them, then admitValidating's), which
//     may only reject or warn.
func (s *admission) admitCreate(ctx context.Context, req *request, obj object, metaErrs field.ErrorList, dryRun bool) error {
	res, rs := req.res, req.store
	var validate func(podSecurity func() error) error
	if admitNew := rs.strategy.admitNew; admitNew != nil {
		var err error
		if validate, err = admitNew(s, ctx, res, req.namespace, obj); err != nil {
			return err
		}
	}
	if _, err := s.admitMutatingWebhooks(ctx, req, obj, nil, dryRun, nil); err != nil {
		return err
	}
	if err := s.authorizeWrite(ctx, req, obj, nil); err != nil {
		return err
	}
	s.prepareForCreate(rs, obj)
	if prepare := rs.strategy.prepareForCreateBy; prepare != nil {
		prepare(ctx, obj)
	}
	if errs, err := rs.validateCreate(ctx, obj); err != nil {
		return err
	} else if errs = append(metaErrs, errs...); len(errs) > 0 {
		return rs.errInvalid(str(metadata(obj), "name"), errs)
	}
	if req.verb != "create" {
		if err := s.authorizeCreate(ctx, req); err != nil {
			return err
		}
	}
	podSecurity := func() error { return s.admitPodSecurity(ctx, req, obj, nil) }
	if validate == nil {
		validate = func(podSecurity func() error) error { return podSecurity() }
	}
	if err := validate(podSecurity); err != nil {
		return err
	}
	return s.admitValidating(ctx, req, obj, nil, dryRun)
}

// admitValidating is the validating admission of kube-apiserver's default
// plugins that applies to every resource, in their order, on a create (old
// nil), an update or a delete (obj nil): PodSecurity (on an update: a
// create's runs among its type's plugins, admitCreate),
// ValidatingAdmissionPolicy, the validating webhooks, then ResourceQuota.
func (s *admission) admitValidating(ctx context.Context, req *request, obj, old object, dryRun bool) error {
	if old != nil {
		if err := s.admitPodSecurity(ctx, req, obj, old); err != nil {
			return err
		}
	}
	if err := s.admitPolicies(ctx, req, obj, old, dryRun); err != nil {
		return err
	}
	if err := s.admitValidatingWebhooks(ctx, req, obj, old, dryRun); err != nil {
		return err
	}
	return s.admitQuota(ctx, req, obj, old, dryRun)
}

// admitDeletion is the admission of a delete of obj: the mutating webhooks
// (which may not change it), then admitValidating.
func (s *admission) admitDeletion(ctx context.Context, req *request, obj object, dryRun bool) error {
	if _, err := s.admitMutatingWebhooks(ctx, req, nil, obj, dryRun, nil); err != nil {
		return err
	}
	return s.admitValidating(ctx, req, nil, obj, dryRun)
}

// authorizeCreate is kube-apiserver's second authorization of a PUT or an
// apply that creates its object: its user must also be allowed to create.
func (s *admission) authorizeCreate(ctx context.Context, req *request) error {
	attrs := authz.Attributes{User: authn.UserFrom(ctx), Verb: "create", ResourceRequest: true,
		APIGroup: req.group, APIVersion: req.version, Resource: req.resource, Namespace: req.namespace, Name: req.name}
	allowed, reason, err := s.authz.Authorize(ctx, attrs)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	if !allowed {
		if rec := audit.FromContext(ctx); rec != nil {
			rec.Decision, rec.Reason = "forbid", reason
		}
		return authz.Forbidden(attrs, reason)
	}
	return nil
}

// authorizeWrite is the type's own authorization of a create (old nil)
// or an update, made after mutating admission and before the type's
// validation (strategy.authorizeWrite).
func (s *admission) authorizeWrite(ctx context.Context, req *request, obj, old object) error {
	if authorize := req.store.strategy.authorizeWrite; authorize != nil {
		return authorize(s, ctx, req, obj, old)
	}
	return nil
}
