package server

import (
	"net/http"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/internal/jsonmap"
	"kubeplay/server/authn"
	"kubeplay/server/authz"
	"kubeplay/server/catalog"
	"kubeplay/server/encoding"
)

// reviews are the create-only resources that answer a question about
// access instead of storing an object.
var reviews = map[schema.GroupResource]func(s *Server, r *http.Request, req *request, obj object) error{
	{Group: "authorization.k8s.io", Resource: "selfsubjectaccessreviews"}:  (*Server).selfSubjectAccessReview,
	{Group: "authorization.k8s.io", Resource: "subjectaccessreviews"}:      (*Server).subjectAccessReview,
	{Group: "authorization.k8s.io", Resource: "localsubjectaccessreviews"}: (*Server).subjectAccessReview,
	{Group: "authorization.k8s.io", Resource: "selfsubjectrulesreviews"}:   (*Server).selfSubjectRulesReview,
	{Group: "authentication.k8s.io", Resource: "selfsubjectreviews"}:       (*Server).selfSubjectReview,
	{Group: "authentication.k8s.io", Resource: "tokenreviews"}:             (*Server).tokenReview,
}

func isReview(r *catalog.Resource) bool { return reviews[r.GroupResource()] != nil }

// review answers the creation of a review: the object sent, with its
// status filled in, and nothing stored.
func (s *Server) review(w http.ResponseWriter, r *http.Request, req *request) {
	// Reviews have no Table conversion (kube-apiserver's review storages
	// have no table convertor): refused before the review is read.
	as, err := encoding.Negotiate(r, false, encoding.AsPartialObjectMetadata, encoding.AsPartialObjectMetadataList)
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	obj, err := readBody(r, req.res)
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	metadata(obj) // answered even when the review was sent without one
	// As any create, the request's fields are recorded (and only those: the
	// status is the server's answer).
	opts, err := writeOptionsOf(r, "CreateOptions", "")
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	if obj, err = s.reg.trackUpdate(req.store, "", nil, obj, opts.manager); err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	if err := reviews[req.res.GroupResource()](s, r, req, obj); err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	conv := &converter{as: as, res: req.res, now: s.reg.now}
	out, err := conv.object(obj)
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	encoding.Write(w, r, http.StatusCreated, out)
}

func errInvalidReview(group string, errs field.ErrorList) error {
	return apierrors.NewInvalid(schema.GroupKind{Group: group}, "", errs)
}

func (s *Server) selfSubjectAccessReview(r *http.Request, req *request, obj object) error {
	spec, _ := obj["spec"].(map[string]any)
	return s.accessReview(r, req, obj, spec, authn.UserFrom(r.Context()))
}

// subjectAccessReview serves SubjectAccessReview and, within a namespace,
// LocalSubjectAccessReview: may the user in the spec make the request?
func (s *Server) subjectAccessReview(r *http.Request, req *request, obj object) error {
	spec, _ := obj["spec"].(map[string]any)
	user := &authn.User{Name: str(spec, "user"), UID: str(spec, "uid"), Groups: jsonmap.Strings(spec, "groups")}
	if extra, ok := spec["extra"].(map[string]any); ok {
		user.Extra = map[string][]string{}
		for k, v := range extra {
			user.Extra[k] = jsonmap.StringsOf(v)
		}
	}
	if user.Name == "" && len(user.Groups) == 0 {
		return errInvalidReview(req.group, field.ErrorList{field.Invalid(field.NewPath("spec", "user"), "", "at least one of user or group must be specified")})
	}
	if req.namespace != "" {
		metadata(obj)["namespace"] = req.namespace
		if ra, ok := spec["resourceAttributes"].(map[string]any); ok && str(ra, "namespace") != req.namespace {
			return errInvalidReview(req.group, field.ErrorList{field.Invalid(field.NewPath("spec", "resourceAttributes", "namespace"), str(ra, "namespace"), "must match metadata.namespace")})
		}
	}
	return s.accessReview(r, req, obj, spec, user)
}

// accessReview asks the authorizer about the request a review's spec
// describes and writes the answer into its status.
func (s *Server) accessReview(r *http.Request, req *request, obj, spec object, user *authn.User) error {
	ra, hasRA := spec["resourceAttributes"].(map[string]any)
	nra, hasNRA := spec["nonResourceAttributes"].(map[string]any)
	// kube-apiserver prints the non-resource attributes as its Go struct.
	nraValue := struct{ Path, Verb string }{str(nra, "path"), str(nra, "verb")}
	switch {
	case !hasRA && !hasNRA:
		return errInvalidReview(req.group, field.ErrorList{field.Invalid(field.NewPath("spec", "resourceAttributes"), nil, "exactly one of nonResourceAttributes or resourceAttributes must be specified")})
	case hasRA && hasNRA:
		return errInvalidReview(req.group, field.ErrorList{field.Invalid(field.NewPath("spec", "nonResourceAttributes"), nraValue, "cannot be specified in combination with resourceAttributes")})
	case hasNRA && req.namespace != "":
		return errInvalidReview(req.group, field.ErrorList{field.Invalid(field.NewPath("spec", "nonResourceAttributes"), nraValue, "disallowed on this kind of request")})
	}
	attrs := authz.Attributes{User: user}
	if hasRA {
		attrs.ResourceRequest = true
		attrs.Verb, attrs.APIGroup, attrs.APIVersion = str(ra, "verb"), str(ra, "group"), str(ra, "version")
		attrs.Resource, attrs.Subresource = str(ra, "resource"), str(ra, "subresource")
		attrs.Namespace, attrs.Name = str(ra, "namespace"), str(ra, "name")
	} else {
		attrs.Verb, attrs.Path = str(nra, "verb"), str(nra, "path")
	}
	allowed, reason, err := s.authz.Authorize(r.Context(), attrs)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	status := map[string]any{"allowed": allowed}
	if reason != "" {
		status["reason"] = reason
	}
	obj["status"] = status
	return nil
}

// selfSubjectRulesReview lists what the requesting user may do in
// spec.namespace, as kube-apiserver answers it: a fresh object with an
// empty spec.
func (s *Server) selfSubjectRulesReview(r *http.Request, req *request, obj object) error {
	spec, _ := obj["spec"].(map[string]any)
	if str(spec, "namespace") == "" {
		return apierrors.NewBadRequest("no namespace on request")
	}
	rules, resolution, err := s.authz.RulesFor(r.Context(), authn.UserFrom(r.Context()), str(spec, "namespace"))
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	resourceRules, nonResourceRules := []any{}, []any{}
	for _, rule := range rules {
		if len(rule.Resources) > 0 || len(rule.APIGroups) > 0 {
			rr := map[string]any{"verbs": rule.Verbs, "apiGroups": rule.APIGroups, "resources": rule.Resources}
			if len(rule.ResourceNames) > 0 {
				rr["resourceNames"] = rule.ResourceNames
			}
			resourceRules = append(resourceRules, rr)
		}
		if len(rule.NonResourceURLs) > 0 {
			nonResourceRules = append(nonResourceRules, map[string]any{"verbs": rule.Verbs, "nonResourceURLs": rule.NonResourceURLs})
		}
	}
	status := map[string]any{"resourceRules": resourceRules, "nonResourceRules": nonResourceRules, "incomplete": false}
	if len(resolution) > 0 {
		status["evaluationError"] = strings.Join(resolution, ", ")
	}
	clear(obj)
	obj["apiVersion"], obj["kind"] = req.group+"/"+req.version, req.res.Kind
	obj["metadata"], obj["spec"], obj["status"] = map[string]any{}, map[string]any{}, status
	return nil
}

// selfSubjectReview tells the requesting user who the server thinks it is.
func (s *Server) selfSubjectReview(r *http.Request, req *request, obj object) error {
	clear(obj)
	obj["apiVersion"], obj["kind"] = req.group+"/"+req.version, req.res.Kind
	obj["metadata"] = map[string]any{"creationTimestamp": s.reg.now().UTC().Format(time.RFC3339)}
	obj["status"] = map[string]any{"userInfo": userInfo(authn.UserFrom(r.Context()))}
	return nil
}

// tokenReview tells whether spec.token is a valid bearer token for the
// audiences in spec (default: this API), and whose.
func (s *Server) tokenReview(r *http.Request, req *request, obj object) error {
	spec, _ := obj["spec"].(map[string]any)
	token := str(spec, "token")
	if token == "" {
		return apierrors.NewBadRequest("token is required for TokenReview in authentication")
	}
	obj["status"] = map[string]any{"user": map[string]any{}, "error": "invalid bearer token"}
	audiences := jsonmap.Strings(spec, "audiences")
	if len(audiences) == 0 {
		audiences = nil // this API's
	}
	u, valid, err := s.authn.Token(r.Context(), token, audiences)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	if u != nil {
		obj["status"] = map[string]any{"authenticated": true, "user": userInfo(u), "audiences": valid}
	}
	return nil
}

// userInfo is a user as authentication.k8s.io's UserInfo.
func userInfo(u *authn.User) map[string]any {
	info := map[string]any{"username": u.Name}
	if u.UID != "" {
		info["uid"] = u.UID
	}
	if len(u.Groups) > 0 {
		info["groups"] = u.Groups
	}
	if len(u.Extra) > 0 {
		info["extra"] = u.Extra
	}
	return info
}
