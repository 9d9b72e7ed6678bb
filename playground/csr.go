package playground

import (
	"context"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"kubeplay/internal/jsonmap"
	"kubeplay/server"
	"kubeplay/server/inproc"
	"kubeplay/server/validation"
	"kubeplay/store"
)

// kube-controller-manager's certificate controllers: the approver approves
// a kubelet's request for its client certificate when the requester may
// ask for one (as a SubjectAccessReview says); the signer signs approved
// requests of the built-in signers with the cluster's CA.

var (
	csrApprovingDef = controllerDef{name: "csrApproving", title: "csrapproving controller", serviceAccount: "certificate-controller",
		start: func(sb *Sandbox) reconciler {
			return &csrApprover{c: inproc.New(sb.handler, controllerAgent("certificate-controller"))}
		}}
	csrSigningDef = controllerDef{name: "csrSigning", title: "csrsigning controller", serviceAccount: "certificate-controller",
		start: func(sb *Sandbox) reconciler {
			return &csrSigner{c: inproc.New(sb.handler, controllerAgent("certificate-controller")), api: sb.api, now: sb.clock.Now}
		}}
)

var (
	csrsGVR       = schema.GroupVersionResource{Group: "certificates.k8s.io", Version: "v1", Resource: "certificatesigningrequests"}
	csrsKeyPrefix = builtinKeyPrefix(csrsGVR)
)

// The built-in signers the signer signs for.
const (
	kubeAPIServerClientSigner        = "kubernetes.io/kube-apiserver-client"
	kubeAPIServerClientKubeletSigner = "kubernetes.io/kube-apiserver-client-kubelet"
	kubeletServingSigner             = "kubernetes.io/kubelet-serving"
)

// csrKeys are the keys of both controllers: the names of the requests
// that change.
type csrKeys struct{ c *inproc.Client }

func (k csrKeys) resync(ctx context.Context, done func(jsonmap.Object) bool) ([]string, error) {
	csrs, err := list(ctx, k.c, allPath(csrsGVR))
	if err != nil {
		return nil, err
	}
	var keys []string
	for _, csr := range csrs {
		if !done(csr) {
			keys = append(keys, jsonmap.String(csr, "metadata", "name"))
		}
	}
	return keys, nil
}

func (k csrKeys) keysOf(ev store.Event, q queue) {
	if name, ok := strings.CutPrefix(ev.KV.Key, csrsKeyPrefix); ok && ev.Type != store.Deleted {
		q.Add(name)
	}
}

// get reads the request name and its certificate request; nil if the
// request is gone or done (done says when).
func (k csrKeys) get(ctx context.Context, name string, done func(jsonmap.Object) bool) (jsonmap.Object, *x509.CertificateRequest, error) {
	csr, err := get(ctx, k.c, allPath(csrsGVR)+"/"+name)
	if err != nil || csr == nil || done(csr) {
		return nil, nil, err
	}
	req, err := parseCertificateRequest(jsonmap.String(csr, "spec", "request"))
	if err != nil {
		// The API validated it: this cannot be mended by trying again.
		slog.Warn("certificate controller", "csr", name, "err", fmt.Errorf("unable to parse csr %q: %w", name, err))
		return nil, nil, nil
	}
	return csr, req, nil
}

// parseCertificateRequest reads spec.request (base64 of a PEM block) and
// checks its signature.
func parseCertificateRequest(request string) (*x509.CertificateRequest, error) {
	raw, err := base64.StdEncoding.DecodeString(request)
	if err != nil {
		return nil, err
	}
	req, err := validation.ParseCertificateRequest(raw)
	if err != nil {
		return nil, err
	}
	return req, req.CheckSignature()
}

// csrCondition reports whether the request has a condition of type t
// whose status is True (an Approved one without status counts, as
// kube-controller-manager reads it).
func csrCondition(csr jsonmap.Object, t string) bool {
	for _, c := range jsonmap.Items(jsonmap.Child(csr, "status")["conditions"]) {
		if c["type"] == t && (c["status"] == "True" || c["status"] == nil) {
			return true
		}
	}
	return false
}

// usages are the request's spec.usages.
func usages(csr jsonmap.Object) []string {
	return jsonmap.Strings(jsonmap.Child(csr, "spec"), "usages")
}

// sameUsages reports whether got holds the usages of one of wants, in any
// order.
func sameUsages(got []string, wants ...[]string) bool {
	g := slices.Sorted(slices.Values(got))
	g = slices.Compact(g)
	for _, w := range wants {
		if slices.Equal(g, slices.Sorted(slices.Values(w))) {
			return true
		}
	}
	return false
}

// kubeletClientError says why req is not a kubelet's request for its
// client certificate; nil if it is.
func kubeletClientError(req *x509.CertificateRequest, use []string) error {
	switch {
	case !slices.Equal(req.Subject.Organization, []string{"system:nodes"}):
		return errors.New("subject organization is not system:nodes")
	case len(req.DNSNames) > 0:
		return errors.New("DNS subjectAltNames are not allowed")
	case len(req.EmailAddresses) > 0:
		return errors.New("Email subjectAltNames are not allowed")
	case len(req.IPAddresses) > 0:
		return errors.New("IP subjectAltNames are not allowed")
	case len(req.URIs) > 0:
		return errors.New("URI subjectAltNames are not allowed")
	case !strings.HasPrefix(req.Subject.CommonName, "system:node:"):
		return errors.New("subject common name does not begin with system:node:")
	case !sameUsages(use, []string{"digital signature", "key encipherment", "client auth"}, []string{"digital signature", "client auth"}):
		return errors.New("usages did not match [client auth digital signature key encipherment]")
	}
	return nil
}

// kubeletServingError says why req is not a kubelet's request for its
// serving certificate; nil if it is.
func kubeletServingError(req *x509.CertificateRequest, use []string) error {
	switch {
	case !slices.Equal(req.Subject.Organization, []string{"system:nodes"}):
		return errors.New("subject organization is not system:nodes")
	case len(req.DNSNames) == 0 && len(req.IPAddresses) == 0:
		return errors.New("DNS or IP subjectAltName is required")
	case len(req.EmailAddresses) > 0:
		return errors.New("Email subjectAltNames are not allowed")
	case len(req.URIs) > 0:
		return errors.New("URI subjectAltNames are not allowed")
	case !sameUsages(use, []string{"digital signature", "key encipherment", "server auth"}, []string{"digital signature", "server auth"}):
		return errors.New("usages did not match [digital signature key encipherment server auth]")
	case !strings.HasPrefix(req.Subject.CommonName, "system:node:"):
		return errors.New("subject common name does not begin with system:node:")
	}
	return nil
}

// apiServerClientError says why usages do not fit a client certificate.
func apiServerClientError(use []string) error {
	client := false
	for _, u := range use {
		switch u {
		case "digital signature", "key encipherment":
		case "client auth":
			client = true
		default:
			return fmt.Errorf("invalid usage for client certificate: %s", u)
		}
	}
	if !client {
		return errors.New("missing required usage for client certificate: client auth")
	}
	return nil
}

// csrApprover is kube-controller-manager's csrapproving controller. Its
// keys are request names.
type csrApprover struct{ c *inproc.Client }

// decided: a request approved, denied or signed is not the approver's.
func decided(csr jsonmap.Object) bool {
	return jsonmap.String(csr, "status", "certificate") != "" || csrCondition(csr, "Approved") || csrCondition(csr, "Denied")
}

func (a *csrApprover) resync(ctx context.Context, _ int64) ([]string, error) {
	return csrKeys{a.c}.resync(ctx, decided)
}

func (a *csrApprover) keysOf(ev store.Event, q queue) { csrKeys{}.keysOf(ev, q) }

// A kubelet may ask for a client certificate for itself (selfnodeclient)
// or for any node (nodeclient): the first the requester may ask for
// approves the request.
var approvals = []struct {
	subresource, message string
	self                 bool
}{
	{"selfnodeclient", "Auto approving self kubelet client certificate after SubjectAccessReview.", true},
	{"nodeclient", "Auto approving kubelet client certificate after SubjectAccessReview.", false},
}

func (a *csrApprover) reconcile(ctx context.Context, name string) (time.Duration, error) {
	csr, req, err := csrKeys{a.c}.get(ctx, name, decided)
	if err != nil || csr == nil {
		return 0, err
	}
	spec := jsonmap.Child(csr, "spec")
	if jsonmap.String(spec, "signerName") != kubeAPIServerClientKubeletSigner || kubeletClientError(req, usages(csr)) != nil {
		return 0, nil
	}
	for _, ap := range approvals {
		if ap.self && jsonmap.String(spec, "username") != req.Subject.CommonName {
			continue
		}
		allowed, err := a.mayCreate(ctx, spec, ap.subresource)
		if err != nil || !allowed {
			if err != nil {
				return 0, err
			}
			continue
		}
		status := jsonmap.Ensure(csr, "status")
		conds, _ := status["conditions"].([]any)
		status["conditions"] = append(conds, map[string]any{"type": "Approved", "status": "True", "reason": "AutoApproved", "message": ap.message})
		err = a.c.Do(ctx, "PUT", allPath(csrsGVR)+"/"+name+"/approval", csr, nil)
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			return 0, nil // a newer change names the request again
		}
		return 0, err
	}
	return 0, nil
}

// mayCreate asks, as a SubjectAccessReview, whether the requester of spec
// may create certificatesigningrequests/subresource.
func (a *csrApprover) mayCreate(ctx context.Context, spec jsonmap.Object, subresource string) (bool, error) {
	review := jsonmap.Object{"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": jsonmap.Object{
		"user": spec["username"], "uid": spec["uid"], "groups": spec["groups"], "extra": spec["extra"],
		"resourceAttributes": jsonmap.Object{"group": "certificates.k8s.io", "resource": "certificatesigningrequests", "verb": "create",
			"subresource": subresource, "version": "*"},
	}}
	var out jsonmap.Object
	if err := a.c.Do(ctx, "POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", review, &out); err != nil {
		return false, err
	}
	allowed, _ := jsonmap.Child(out, "status")["allowed"].(bool)
	return allowed, nil
}

// csrSigner is kube-controller-manager's csrsigning controller, for the
// built-in signers: every one signs with the cluster's CA. Its keys are
// request names.
type csrSigner struct {
	c   *inproc.Client
	api *server.Server
	now func() time.Time
}

// The validity of the certificates, as kube-controller-manager's defaults:
// a year (--cluster-signing-duration) unless the request asks for less,
// ten minutes at the least; backdated by five minutes, and the end too
// unless shorter than eight hours.
const (
	signingDuration    = 365 * 24 * time.Hour
	minSigningDuration = 10 * time.Minute
	signingBackdate    = 5 * time.Minute
	shortCertificate   = 8 * time.Hour
)

// signed: a request signed, failed, or not approved is not the signer's.
func signed(csr jsonmap.Object) bool {
	return jsonmap.String(csr, "status", "certificate") != "" || !csrCondition(csr, "Approved") || csrCondition(csr, "Failed")
}

func (s *csrSigner) resync(ctx context.Context, _ int64) ([]string, error) {
	return csrKeys{s.c}.resync(ctx, signed)
}

func (s *csrSigner) keysOf(ev store.Event, q queue) { csrKeys{}.keysOf(ev, q) }

func (s *csrSigner) reconcile(ctx context.Context, name string) (time.Duration, error) {
	csr, req, err := csrKeys{s.c}.get(ctx, name, signed)
	if err != nil || csr == nil {
		return 0, err
	}
	use := usages(csr)
	var invalid error
	switch jsonmap.String(csr, "spec", "signerName") {
	case kubeAPIServerClientSigner:
		invalid = apiServerClientError(use)
	case kubeAPIServerClientKubeletSigner:
		invalid = kubeletClientError(req, use)
	case kubeletServingSigner:
		invalid = kubeletServingError(req, use)
	default:
		return 0, nil // another signer's
	}
	status := jsonmap.Ensure(csr, "status")
	if invalid != nil {
		conds, _ := status["conditions"].([]any)
		status["conditions"] = append(conds, map[string]any{"type": "Failed", "status": "True", "reason": "SignerValidationFailure",
			"message": invalid.Error(), "lastUpdateTime": timestamp(s.now)})
	} else {
		cert, err := s.sign(ctx, csr, req, use)
		if err != nil {
			return 0, err
		}
		status["certificate"] = base64.StdEncoding.EncodeToString(cert)
	}
	err = s.c.Do(ctx, "PUT", allPath(csrsGVR)+"/"+name+"/status", csr, nil)
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		return 0, nil // a newer change names the request again
	}
	return 0, err
}

// keyUsages are the x509 key usages of the API's usages; extKeyUsages
// their extended key usages.
var (
	keyUsages = map[string]x509.KeyUsage{
		"signing": x509.KeyUsageDigitalSignature, "digital signature": x509.KeyUsageDigitalSignature,
		"content commitment": x509.KeyUsageContentCommitment, "key encipherment": x509.KeyUsageKeyEncipherment,
		"key agreement": x509.KeyUsageKeyAgreement, "data encipherment": x509.KeyUsageDataEncipherment,
		"cert sign": x509.KeyUsageCertSign, "crl sign": x509.KeyUsageCRLSign,
		"encipher only": x509.KeyUsageEncipherOnly, "decipher only": x509.KeyUsageDecipherOnly,
	}
	extKeyUsages = map[string]x509.ExtKeyUsage{
		"any": x509.ExtKeyUsageAny, "server auth": x509.ExtKeyUsageServerAuth, "client auth": x509.ExtKeyUsageClientAuth,
		"code signing": x509.ExtKeyUsageCodeSigning, "email protection": x509.ExtKeyUsageEmailProtection,
		"s/mime": x509.ExtKeyUsageEmailProtection, "ipsec end system": x509.ExtKeyUsageIPSECEndSystem,
		"ipsec tunnel": x509.ExtKeyUsageIPSECTunnel, "ipsec user": x509.ExtKeyUsageIPSECUser,
		"timestamping": x509.ExtKeyUsageTimeStamping, "ocsp signing": x509.ExtKeyUsageOCSPSigning,
		"microsoft sgc": x509.ExtKeyUsageMicrosoftServerGatedCrypto, "netscape sgc": x509.ExtKeyUsageNetscapeServerGatedCrypto,
	}
)

// sign issues the certificate req asks for, with the request's usages,
// valid for what it asks (spec.expirationSeconds) within the signer's
// bounds.
func (s *csrSigner) sign(ctx context.Context, csr jsonmap.Object, req *x509.CertificateRequest, use []string) ([]byte, error) {
	ca, err := s.api.ClusterCA(ctx)
	if err != nil {
		return nil, err
	}
	ttl := signingDuration
	if seconds, ok := jsonmap.Int(csr, "spec", "expirationSeconds"); ok {
		ttl = min(max(time.Duration(seconds)*time.Second, minSigningDuration), signingDuration)
	}
	now := s.now()
	tmpl := &x509.Certificate{Subject: req.Subject, DNSNames: req.DNSNames, IPAddresses: req.IPAddresses,
		EmailAddresses: req.EmailAddresses, URIs: req.URIs, NotBefore: now.Add(-signingBackdate), NotAfter: now.Add(ttl - signingBackdate)}
	if ttl < shortCertificate {
		tmpl.NotAfter = now.Add(ttl)
	}
	seen := map[x509.ExtKeyUsage]bool{}
	for _, u := range use {
		if k, ok := keyUsages[u]; ok {
			tmpl.KeyUsage |= k
		} else if e, ok := extKeyUsages[u]; ok && !seen[e] {
			seen[e] = true
			tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, e)
		}
	}
	slices.Sort(tmpl.ExtKeyUsage)
	return ca.Sign(tmpl, req.PublicKey)
}
