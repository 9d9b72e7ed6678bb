package validation

import (
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"
	"strings"

	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/internal/jsonmap"
)

// keyUsages are the usages a CertificateSigningRequest may ask for.
var keyUsages = []string{"any", "cert sign", "client auth", "code signing", "content commitment", "crl sign",
	"data encipherment", "decipher only", "digital signature", "email protection", "encipher only",
	"ipsec end system", "ipsec tunnel", "ipsec user", "key agreement", "key encipherment", "microsoft sgc",
	"netscape sgc", "ocsp signing", "s/mime", "server auth", "signing", "timestamping"}

// certificateSigningRequest checks a new CertificateSigningRequest's spec
// (its updates never change the spec): a PEM request whose signature
// holds, a signer's name, usages, and an expiry of ten minutes or more.
func certificateSigningRequest(spec Object) field.ErrorList {
	var errs field.ErrorList
	// The request is bytes: missing they are null, and printed as JSON
	// prints bytes.
	var request []byte
	if s, ok := spec["request"].(string); ok {
		request, _ = base64.StdEncoding.DecodeString(s)
		if request == nil {
			request = []byte{}
		}
	}
	if err := checkCSR(request); err != nil {
		errs = append(errs, field.Invalid(specPath.Child("request"), request, err.Error()))
	}
	usages := jsonmap.Strings(spec, "usages")
	if len(usages) == 0 {
		errs = append(errs, field.Required(specPath.Child("usages"), ""))
	}
	for i, u := range usages {
		switch {
		case !slices.Contains(keyUsages, u):
			errs = append(errs, field.NotSupported(specPath.Child("usages").Index(i), u, keyUsages))
		case slices.Contains(usages[:i], u):
			errs = append(errs, field.Duplicate(specPath.Child("usages").Index(i), u))
		}
	}
	errs = append(errs, signerName(specPath.Child("signerName"), str(spec, "signerName"))...)
	if v, ok := spec["expirationSeconds"]; ok && intOf(v) < 600 {
		errs = append(errs, field.Invalid(specPath.Child("expirationSeconds"), intOf(v), "may not specify a duration less than 600 seconds (10 minutes)"))
	}
	return errs
}

// checkCSR parses a PEM certificate request and checks its signature.
func checkCSR(request []byte) error {
	csr, err := ParseCertificateRequest(request)
	if err != nil {
		return err
	}
	return csr.CheckSignature()
}

// ParseCertificateRequest parses a PEM certificate request (a CSR's
// spec.request, once decoded from base64), with kube-apiserver's error for
// a block of another type; it does not check the signature.
func ParseCertificateRequest(request []byte) (*x509.CertificateRequest, error) {
	block, _ := pem.Decode(request)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return nil, errors.New("PEM block type must be CERTIFICATE REQUEST")
	}
	return x509.ParseCertificateRequest(block.Bytes)
}

// signerName checks a signer's name: a domain of two labels or more, a
// slash, a path of subdomains.
func signerName(path *field.Path, name string) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(path, "")}
	}
	domain, rest, ok := strings.Cut(name, "/")
	if !ok || strings.Contains(rest, "/") {
		return field.ErrorList{field.Invalid(path, name, "must be a fully qualified domain and path of the form 'example.com/signer-name'")}
	}
	var errs field.ErrorList
	if len(domain) > utilvalidation.DNS1123SubdomainMaxLength {
		errs = append(errs, field.TooLong(path, domain, utilvalidation.DNS1123SubdomainMaxLength))
	}
	labels := strings.Split(domain, ".")
	for _, l := range labels {
		if msgs := utilvalidation.IsDNS1123Label(l); len(msgs) > 0 {
			for _, msg := range msgs {
				errs = append(errs, field.Invalid(path, domain, fmt.Sprintf("validating label %q: %s", l, msg)))
			}
			break // the other labels' errors would read the same
		}
	}
	if len(labels) < 2 {
		errs = append(errs, field.Invalid(path, domain, "should be a domain with at least two segments separated by dots"))
	}
	for _, l := range strings.Split(rest, ".") {
		if msgs := utilvalidation.IsDNS1123Subdomain(l); len(msgs) > 0 {
			for _, msg := range msgs {
				errs = append(errs, field.Invalid(path, rest, fmt.Sprintf("validating label %q: %s", l, msg)))
			}
			break
		}
	}
	return errs
}
