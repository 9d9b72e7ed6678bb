package server

import (
	"context"
	"encoding/base64"
	"fmt"
	"reflect"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"kubeplay/internal/jsonmap"
	"kubeplay/server/audit"
	"kubeplay/server/authn"
	"kubeplay/server/authz"
	"kubeplay/server/catalog"
	"kubeplay/server/validation"
)

// The admission plugins of CertificateSigningRequests: who may approve
// and sign a request is a permission on its signer (the synthetic
// resource signers of certificates.k8s.io, named by the signerName or by
// its domain's wildcard "<domain>/*"), and nobody may ask the
// kube-apiserver-client signer for a system:masters certificate.

const kubeAPIServerClientSigner = "kubernetes.io/kube-apiserver-client"

// admitSigningRequest is CertificateSubjectRestriction, in the validating
// phase of a new request: a request to the kube-apiserver-client signer
// may not name system:masters among its subject's organizations.
func admitSigningRequest(_ *admission, ctx context.Context, res *catalog.Resource, _ string, obj object) (func(podSecurity func() error) error, error) {
	return func(podSecurity func() error) error {
		if err := podSecurity(); err != nil {
			return err
		}
		var refusal error
		if spec := jsonmap.Child(obj, "spec"); str(spec, "signerName") == kubeAPIServerClientSigner {
			orgs, err := requestOrganizations(str(spec, "request"))
			switch {
			case err != nil:
				refusal = fmt.Errorf("failed to parse CSR: %v", err)
			case slices.Contains(orgs, authn.Masters):
				refusal = fmt.Errorf("use of %s signer with %s group is not allowed", kubeAPIServerClientSigner, authn.Masters)
			}
		}
		if refusal != nil {
			refusal = apierrors.NewForbidden(res.GroupResource(), str(metadata(obj), "name"), refusal)
		}
		return audit.FromContext(ctx).Ran(validating("CertificateSubjectRestriction"), refusal)
	}, nil
}

// requestOrganizations are the subject's organizations of a certificate
// request, as spec.request holds it (base64 of PEM, in JSON).
func requestOrganizations(b64 string) ([]string, error) {
	data, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return nil, err
	}
	csr, err := validation.ParseCertificateRequest(data)
	if err != nil {
		return nil, err
	}
	return csr.Subject.Organization, nil
}

// admitSigningRequestChange is CertificateApproval on a write of
// /approval (its user must be allowed to approve for the request's
// signer) and CertificateSigning on a write of /status that changes the
// certificate or the conditions (to sign for it). Both look at the stored
// request's signer, which the write may not change.
func admitSigningRequestChange(s *admission, ctx context.Context, req *request, obj, old object) error {
	plugin, verb := "", ""
	switch req.subresource {
	case "approval":
		plugin, verb = "CertificateApproval", "approve"
	case "status":
		plugin, verb = "CertificateSigning", "sign"
		status, was := jsonmap.Child(obj, "status"), jsonmap.Child(old, "status")
		if reflect.DeepEqual(status["certificate"], was["certificate"]) && reflect.DeepEqual(status["conditions"], was["conditions"]) {
			return audit.FromContext(ctx).Ran(validating(plugin), nil)
		}
	default:
		return nil
	}
	var refusal error
	if signer := str(jsonmap.Child(old, "spec"), "signerName"); !s.mayForSigner(ctx, verb, signer) {
		refusal = apierrors.NewForbidden(req.res.GroupResource(), req.name,
			fmt.Errorf("user not permitted to %s requests with signerName %q", verb, signer))
	}
	return audit.FromContext(ctx).Ran(validating(plugin), refusal)
}

// mayForSigner says whether the request's user may verb (approve, sign)
// the signer named signerName, or every signer of its domain. An
// authorizer that fails says no, as kube-apiserver's plugins hear it.
func (s *admission) mayForSigner(ctx context.Context, verb, signerName string) bool {
	domain, _, _ := strings.Cut(signerName, "/")
	for _, name := range []string{signerName, domain + "/*"} {
		allowed, _, err := s.authz.Authorize(ctx, authz.Attributes{User: authn.UserFrom(ctx), Verb: verb, ResourceRequest: true,
			APIGroup: "certificates.k8s.io", APIVersion: "*", Resource: "signers", Name: name})
		if err == nil && allowed {
			return true
		}
	}
	return false
}
