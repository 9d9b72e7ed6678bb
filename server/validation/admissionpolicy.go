package validation

import (
	"context"
	"slices"
	"strings"

	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/internal/jsonmap"
	"kubeplay/server/celeval"
	"kubeplay/server/celtypes"
)

// admissionPolicy checks a ValidatingAdmissionPolicy's spec: what it must
// have and that its expressions compile to the type their place needs.
func admissionPolicy(ctx context.Context, name string, spec Object) (field.ErrorList, error) {
	expr := func(m Object, key string) string {
		s, _ := m[key].(string)
		return s
	}
	var p celtypes.Policy
	matchConditions := jsonmap.Items(spec["matchConditions"])
	for _, m := range matchConditions {
		p.MatchConditions = append(p.MatchConditions, celtypes.NamedExpression{Name: expr(m, "name"), Expression: expr(m, "expression")})
	}
	variables := jsonmap.Items(spec["variables"])
	for _, v := range variables {
		p.Variables = append(p.Variables, celtypes.NamedExpression{Name: expr(v, "name"), Expression: expr(v, "expression")})
	}
	validations := jsonmap.Items(spec["validations"])
	for _, v := range validations {
		p.Validations = append(p.Validations, celtypes.Validation{Expression: expr(v, "expression"), MessageExpression: expr(v, "messageExpression")})
	}
	auditAnnotations := jsonmap.Items(spec["auditAnnotations"])
	for _, a := range auditAnnotations {
		p.AuditAnnotations = append(p.AuditAnnotations, celtypes.AuditAnnotation{Key: expr(a, "key"), ValueExpression: expr(a, "valueExpression")})
	}
	compiled, err := celeval.CompilePolicy(ctx, p)
	if err != nil {
		return nil, err
	}
	compileErrs := compiled.Errors()

	var errs field.ErrorList
	switch policy, ok := spec["failurePolicy"].(string); {
	case !ok:
		errs = append(errs, field.Required(specPath.Child("failurePolicy"), ""))
	case !slices.Contains(failurePolicies, policy):
		errs = append(errs, field.NotSupported(specPath.Child("failurePolicy"), policy, failurePolicies))
	}
	if mc := jsonmap.Child(spec, "matchConstraints"); mc == nil {
		errs = append(errs, field.Required(specPath.Child("matchConstraints"), ""))
	} else {
		errs = append(errs, matchResources(mc, specPath.Child("matchConstraints"))...)
		// The rules give the policy's expressions their types.
		if len(jsonmap.Items(mc["resourceRules"])) == 0 {
			errs = append(errs, field.Required(specPath.Child("matchConstraints", "resourceRules"), ""))
		}
	}
	check := func(path *field.Path, s, missing, compileErr string) {
		switch {
		case strings.TrimSpace(s) == "":
			errs = append(errs, field.Required(path, missing))
		case compileErr != "":
			errs = append(errs, field.Invalid(path, s, compileErr))
		}
	}
	for i, m := range p.MatchConditions {
		check(specPath.Child("matchConditions").Index(i).Child("expression"), m.Expression, "", compileErrs.MatchConditions[i])
	}
	for i, v := range p.Variables {
		path := specPath.Child("variables").Index(i)
		switch {
		case strings.TrimSpace(v.Name) == "":
			errs = append(errs, field.Required(path.Child("name"), "name is not specified"))
		case !celtypes.IsIdentifier(v.Name):
			errs = append(errs, field.Invalid(path.Child("name"), v.Name, "must be a valid CEL identifier"))
		}
		check(path.Child("expression"), v.Expression, "expression is not specified", compileErrs.Variables[i])
	}
	for i, v := range p.Validations {
		path := specPath.Child("validations").Index(i)
		check(path.Child("expression"), v.Expression, "expression is not specified", compileErrs.Validations[i])
		if v.MessageExpression != "" {
			check(path.Child("messageExpression"), v.MessageExpression, "", compileErrs.MessageExpressions[i])
		}
		if reason, ok := validations[i]["reason"].(string); ok && !slices.Contains(policyReasons, reason) {
			errs = append(errs, field.NotSupported(path.Child("reason"), reason, policyReasons))
		}
	}
	// An audit annotation's key is the name part of a qualified name
	// prefixed by the policy's name.
	keys := uniqueNames{}
	for i, a := range p.AuditAnnotations {
		path := specPath.Child("auditAnnotations").Index(i)
		qualified := name + "/" + a.Key
		for _, msg := range utilvalidation.IsQualifiedName(qualified) {
			errs = append(errs, field.Invalid(path.Child("key"), qualified, msg))
		}
		check(path.Child("valueExpression"), a.ValueExpression, "valueExpression is not specified", compileErrs.AuditAnnotations[i])
		errs = append(errs, keys.add(path.Child("key"), a.Key)...)
	}
	if len(validations) == 0 && len(auditAnnotations) == 0 {
		const msg = "validations or auditAnnotations must contain at least one item"
		errs = append(errs, field.Required(specPath.Child("validations"), msg), field.Required(specPath.Child("auditAnnotations"), msg))
	}
	return errs, nil
}

// policyReasons are the reasons a policy's validation may give a denial.
var policyReasons = []string{"Forbidden", "Invalid", "RequestEntityTooLarge"}

// policyBinding checks a ValidatingAdmissionPolicyBinding's spec.
func policyBinding(spec Object) field.ErrorList {
	var errs field.ErrorList
	if s, _ := spec["policyName"].(string); s == "" {
		errs = append(errs, field.Required(specPath.Child("policyName"), ""))
	} else {
		for _, msg := range utilvalidation.IsDNS1123Subdomain(s) {
			errs = append(errs, field.Invalid(specPath.Child("policyName"), s, msg))
		}
	}
	errs = append(errs, matchResources(jsonmap.Child(spec, "matchResources"), specPath.Child("matchResources"))...)
	var actions []string
	list, _ := spec["validationActions"].([]any)
	for _, a := range list {
		s, _ := a.(string)
		actions = append(actions, s)
	}
	path := specPath.Child("validationActions")
	supported := []string{"Audit", "Deny", "Warn"}
	for i, a := range actions {
		switch {
		case !slices.Contains(supported, a):
			errs = append(errs, field.NotSupported(path.Index(i), a, supported))
		case slices.Contains(actions[:i], a):
			errs = append(errs, field.Duplicate(path.Index(i), a))
		}
	}
	switch {
	case len(actions) == 0:
		errs = append(errs, field.Required(path, "at least one validation action is required"))
	case slices.Contains(actions, "Deny") && slices.Contains(actions, "Warn"):
		errs = append(errs, field.Invalid(path, actions, "must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)"))
	}
	return errs
}
