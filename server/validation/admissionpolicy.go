package validation

import (
	"slices"
	"strings"

	"github.com/google/cel-go/common/types"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/server/celrules"
	"kubeplay/server/decoded"
)

// admissionPolicy checks a ValidatingAdmissionPolicy's spec: what it must
// have and that its expressions compile to the type their place needs.
func admissionPolicy(name string, spec Object) field.ErrorList {
	var errs field.ErrorList
	if spec["matchConstraints"] == nil {
		errs = append(errs, field.Required(specPath.Child("matchConstraints"), ""))
	}
	// Message expressions have no authorizer variable.
	check := func(path *field.Path, expr any, missing string, authorizer bool, outs ...*types.Type) {
		s, _ := expr.(string)
		if strings.TrimSpace(s) == "" {
			errs = append(errs, field.Required(path, missing))
			return
		}
		env, err := celrules.AdmissionEnv(authorizer)
		if err == nil {
			_, err = celrules.AdmissionProgram(env, s, outs...)
		}
		if err != nil {
			errs = append(errs, field.Invalid(path, s, err.Error()))
		}
	}
	for i, m := range decoded.Items(spec["matchConditions"]) {
		check(specPath.Child("matchConditions").Index(i).Child("expression"), m["expression"], "", true, types.BoolType)
	}
	for i, v := range decoded.Items(spec["variables"]) {
		check(specPath.Child("variables").Index(i).Child("expression"), v["expression"], "", true)
	}
	validations := decoded.Items(spec["validations"])
	for i, v := range validations {
		path := specPath.Child("validations").Index(i)
		check(path.Child("expression"), v["expression"], "expression is not specified", true, types.BoolType)
		if m, ok := v["messageExpression"].(string); ok && m != "" {
			check(path.Child("messageExpression"), m, "", false, types.StringType)
		}
	}
	// An audit annotation's key is the name part of a qualified name
	// prefixed by the policy's name.
	keys := map[string]bool{}
	for i, a := range decoded.Items(spec["auditAnnotations"]) {
		path := specPath.Child("auditAnnotations").Index(i)
		key, _ := a["key"].(string)
		qualified := name + "/" + key
		for _, msg := range utilvalidation.IsQualifiedName(qualified) {
			errs = append(errs, field.Invalid(path.Child("key"), qualified, msg))
		}
		check(path.Child("valueExpression"), a["valueExpression"], "valueExpression is not specified", true, types.StringType, types.NullType)
		if keys[key] {
			errs = append(errs, field.Duplicate(path.Child("key"), key))
		}
		keys[key] = true
	}
	if len(validations) == 0 && len(decoded.Items(spec["auditAnnotations"])) == 0 {
		const msg = "validations or auditAnnotations must contain at least one item"
		errs = append(errs, field.Required(specPath.Child("validations"), msg), field.Required(specPath.Child("auditAnnotations"), msg))
	}
	return errs
}

// policyBinding checks a ValidatingAdmissionPolicyBinding's spec.
func policyBinding(spec Object) field.ErrorList {
	var errs field.ErrorList
	if s, _ := spec["policyName"].(string); s == "" {
		errs = append(errs, field.Required(specPath.Child("policyName"), ""))
	}
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
