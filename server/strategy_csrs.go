package server

import (
	"context"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"kubeplay/internal/jsonmap"
	"kubeplay/server/authn"
)

// csrStrategy is the CertificateSigningRequest's. A request is written
// three ways, as kube-apiserver's strategies say: the main resource sets
// the spec on create only, /approval changes the status conditions alone
// (the Approved and Denied ones only there), /status the rest of the
// status. A condition once Approved, Denied or Failed stays.
var csrStrategy = strategy{
	subresources:        []string{"approval"},
	selectableFields:    withNamespace(map[string]selectableField{"spec.signerName": {}}),
	prepareForCreateBy:  signingRequestForCreate,
	writeThrough:        prepareSigningRequestWrite,
	validateSubresource: validateSigningRequestWrite,
	admitNew:            admitSigningRequest,
	admitChange:         admitSigningRequestChange,
	// managedFields record neither the spec nor what each subresource
	// does not write.
	resets: map[string][]fieldpath.Path{
		"":         {fieldpath.MakePathOrDie("spec")},
		"status":   {fieldpath.MakePathOrDie("status", "conditions")},
		"approval": {fieldpath.MakePathOrDie("spec"), fieldpath.MakePathOrDie("status", "certificate")},
	},
}

// The condition types an approver sets, and the terminal ones.
const (
	csrApproved = "Approved"
	csrDenied   = "Denied"
	csrFailed   = "Failed"
)

// signingRequestForCreate records who asks for the certificate, and starts
// the request with no condition (none can be pre-approved).
func signingRequestForCreate(ctx context.Context, obj object) {
	spec := jsonmap.Ensure(obj, "spec")
	for _, k := range []string{"username", "uid", "groups", "extra"} {
		delete(spec, k)
	}
	if u := authn.UserFrom(ctx); u != nil {
		info := userInfo(u)
		for _, k := range []string{"username", "uid", "groups", "extra"} {
			if v, ok := info[k]; ok {
				spec[k] = v
			}
		}
	}
	obj["status"] = map[string]any{}
}

// prepareSigningRequestWrite is what an update through sub writes of obj,
// sent to replace old and already through statusOnly: through /approval
// the conditions alone; through /status the status but the Approved and
// Denied conditions, kept as they were (adding or removing one is then
// refused by validation). Either way the conditions get their missing
// timestamps.
func prepareSigningRequestWrite(sub string, obj, old object, now time.Time) object {
	out := obj
	switch sub {
	case "approval":
		status := map[string]any{}
		if st, ok := deepCopyObject(old)["status"].(map[string]any); ok {
			status = st
		}
		if conds, ok := jsonmap.Child(obj, "status")["conditions"]; ok {
			status["conditions"] = conds
		} else {
			delete(status, "conditions")
		}
		out["status"] = status
	case "status":
		for _, typ := range []string{csrApproved, csrDenied} {
			keepConditions(out, old, typ)
		}
	default:
		return obj
	}
	stampConditions(out, old, now)
	return out
}

// conditionsOf returns the status conditions of a CertificateSigningRequest
// (nil for an entry that is no object).
func conditionsOf(obj object) []map[string]any {
	return jsonmap.Items(jsonmap.List(obj, "status", "conditions"))
}

// keepConditions puts old's conditions of type typ back in obj's places of
// that type, when obj has as many.
func keepConditions(obj, old object, typ string) {
	oldConds := slices.DeleteFunc(conditionsOf(old), func(c map[string]any) bool { return str(c, "type") != typ })
	list := jsonmap.List(obj, "status", "conditions")
	var at []int
	for i, c := range jsonmap.Items(list) {
		if str(c, "type") == typ {
			at = append(at, i)
		}
	}
	if len(at) != len(oldConds) {
		return
	}
	for i, j := range at {
		list[j] = deepCopyObject(oldConds[i])
	}
}

// stampConditions fills in the conditions' missing lastUpdateTime (now)
// and lastTransitionTime (that of old's condition of the same type and
// status, else now).
func stampConditions(obj, old object, now time.Time) {
	stamp := now.UTC().Format(time.RFC3339)
	for _, c := range conditionsOf(obj) {
		if c == nil {
			continue
		}
		if str(c, "lastUpdateTime") == "" {
			c["lastUpdateTime"] = stamp
		}
		if str(c, "lastTransitionTime") != "" {
			continue
		}
		c["lastTransitionTime"] = stamp
		for _, o := range conditionsOf(old) {
			if str(o, "type") == str(c, "type") && str(o, "status") == str(c, "status") && str(o, "lastTransitionTime") != "" {
				c["lastTransitionTime"] = o["lastTransitionTime"]
				break
			}
		}
	}
}

// validateSigningRequestWrite checks an update through sub (status or
// approval) of a CertificateSigningRequest, in kube-apiserver's order: the
// conditions, then that none Approved, Denied or Failed went, that
// Approved and Denied change through /approval only, and that a
// certificate, once set, stays.
func validateSigningRequestWrite(sub string, obj, old object) field.ErrorList {
	path := field.NewPath("status", "conditions")
	errs := validateSigningRequestConditions(path, conditionsOf(obj), conditionsOf(old))
	count := func(conds []map[string]any, typ string) []map[string]any {
		return slices.DeleteFunc(slices.Clone(conds), func(c map[string]any) bool { return str(c, "type") != typ })
	}
	for _, typ := range []string{csrApproved, csrDenied, csrFailed} {
		if len(count(conditionsOf(obj), typ)) < len(count(conditionsOf(old), typ)) {
			errs = append(errs, field.Forbidden(path, fmt.Sprintf("updates may not remove a condition of type %q", typ)))
		}
	}
	if sub != "approval" {
		for _, typ := range []string{csrApproved, csrDenied} {
			// A changed one was put back (prepareSigningRequestWrite).
			if len(count(conditionsOf(obj), typ)) > len(count(conditionsOf(old), typ)) {
				errs = append(errs, field.Forbidden(path, fmt.Sprintf("updates may not add a condition of type %q", typ)))
			}
		}
	}
	cert, oldCert := jsonmap.String(obj, "status", "certificate"), jsonmap.String(old, "status", "certificate")
	if cert != oldCert {
		if err := validateCertificate(cert); err != nil {
			errs = append(errs, field.Invalid(field.NewPath("status", "certificate"), "<certificate data>", err.Error()))
		}
		if oldCert != "" {
			errs = append(errs, field.Forbidden(field.NewPath("status", "certificate"), "updates may not modify existing certificate content"))
		}
	}
	return errs
}

// validateSigningRequestConditions checks each condition: a type and a
// status (only True for Approved, Denied and Failed), Approved and Denied
// not both, each type once. What old already breaks is allowed, as
// kube-apiserver tolerates existing data.
func validateSigningRequestConditions(path *field.Path, conds, old []map[string]any) field.ErrorList {
	has := func(conds []map[string]any, f func(c map[string]any) bool) bool { return slices.ContainsFunc(conds, f) }
	isType := func(typ string) func(map[string]any) bool {
		return func(c map[string]any) bool { return str(c, "type") == typ }
	}
	allowEmptyType := has(old, isType(""))
	allowBoth := has(old, isType(csrApproved)) && has(old, isType(csrDenied))
	allowDuplicates := false
	seenOld := map[string]bool{}
	for _, c := range old {
		allowDuplicates = allowDuplicates || seenOld[str(c, "type")]
		seenOld[str(c, "type")] = true
	}
	var errs field.ErrorList
	seen := map[string]bool{}
	approved, denied := false, false
	for i, c := range conds {
		typ, status := str(c, "type"), str(c, "status")
		if typ == "" && !allowEmptyType {
			errs = append(errs, field.Required(path.Index(i).Child("type"), ""))
		}
		allowed := []string{"False", "True", "Unknown"}
		if typ == csrApproved || typ == csrDenied || typ == csrFailed {
			allowed = []string{"True"}
		}
		switch {
		case status == "":
			errs = append(errs, field.Required(path.Index(i).Child("status"), ""))
		case !slices.Contains(allowed, status):
			errs = append(errs, field.NotSupported(path.Index(i).Child("status"), status, allowed))
		}
		if !allowBoth {
			approved, denied = approved || typ == csrApproved, denied || typ == csrDenied
			if (typ == csrApproved || typ == csrDenied) && approved && denied {
				errs = append(errs, field.Invalid(path, typ, "Approved and Denied conditions are mutually exclusive"))
			}
		}
		if !allowDuplicates {
			if seen[typ] {
				errs = append(errs, field.Duplicate(path.Index(i).Child("type"), typ))
			}
			seen[typ] = true
		}
	}
	return errs
}

// validateCertificate checks a status.certificate (base64, as in JSON): PEM
// CERTIFICATE blocks without headers, each holding certificates.
func validateCertificate(b64 string) error {
	data, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(data) == 0 {
		return nil // the schema reports bad base64
	}
	blocks := 0
	for {
		block, rest := pem.Decode(data)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			return fmt.Errorf("only CERTIFICATE PEM blocks are allowed, found %q", block.Type)
		}
		if len(block.Headers) != 0 {
			return errors.New("no PEM block headers are permitted")
		}
		blocks++
		certs, err := x509.ParseCertificates(block.Bytes)
		if err != nil {
			return err
		}
		if len(certs) == 0 {
			return errors.New("found CERTIFICATE PEM block containing 0 certificates")
		}
		data = rest
	}
	if blocks == 0 {
		return errors.New("must contain at least one CERTIFICATE PEM block")
	}
	return nil
}
