package validation

import (
	"slices"
	"strings"

	"github.com/google/cel-go/cel"
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
	check := func(path *field.Path, expr any, missing string, env *cel.Env, envErr error, outs ...*types.Type) {
		s, _ := expr.(string)
		if strings.TrimSpace(s) == "" {
			errs = append(errs, field.Required(path, missing))
			return
		}
		err := envErr
		if err == nil {
			_, err = celrules.AdmissionProgram(env, s, outs...)
		}
		if err != nil {
			errs = append(errs, field.Invalid(path, s, err.Error()))
		}
	}
	// Message expressions have no authorizer variable.
	env, envErr := celrules.SharedAdmissionEnv(true)
	msgEnv, msgErr := celrules.SharedAdmissionEnv(false)
	for i, m := range decoded.Items(spec["matchConditions"]) {
		check(specPath.Child("matchConditions").Index(i).Child("expression"), m["expression"], "", env, envErr, types.BoolType)
	}
	variables := decoded.Items(spec["variables"])
	names, exprs := make([]string, len(variables)), make([]string, len(variables))
	for i, v := range variables {
		names[i], _ = v["name"].(string)
		exprs[i], _ = v["expression"].(string)
		if strings.TrimSpace(exprs[i]) == "" {
			errs = append(errs, field.Required(specPath.Child("variables").Index(i).Child("expression"), ""))
		}
	}
	if envErr == nil {
		// The other expressions see the variables, typed by theirs.
		_, varErrs, decls := celrules.Variables(env, names, exprs)
		for i, err := range varErrs {
			if err != nil && strings.TrimSpace(exprs[i]) != "" {
				errs = append(errs, field.Invalid(specPath.Child("variables").Index(i).Child("expression"), exprs[i], err.Error()))
			}
		}
		env, envErr = env.Extend(decls...)
		if msgErr == nil {
			msgEnv, msgErr = msgEnv.Extend(decls...)
		}
	}
	validations := decoded.Items(spec["validations"])
	for i, v := range validations {
		path := specPath.Child("validations").Index(i)
		check(path.Child("expression"), v["expression"], "expression is not specified", env, envErr, types.BoolType)
		if m, ok := v["messageExpression"].(string); ok && m != "" {
			check(path.Child("messageExpression"), m, "", msgEnv, msgErr, types.StringType)
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
		check(path.Child("valueExpression"), a["valueExpression"], "valueExpression is not specified", env, envErr, types.StringType, types.NullType)
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
