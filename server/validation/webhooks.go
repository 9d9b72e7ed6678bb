package validation

import (
	"context"
	"fmt"
	"net/url"
	"reflect"
	"slices"
	"strings"

	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/internal/jsonmap"
	"kubeplay/server/celeval"
	"kubeplay/server/celtypes"
)

var (
	admissionReviewVersions = []string{"v1", "v1beta1"}
	sideEffectClasses       = []string{"None", "NoneOnDryRun", "Some", "Unknown"}
	noSideEffectClasses     = []string{"None", "NoneOnDryRun"}
	reinvocationPolicies    = []string{"IfNeeded", "Never"}
)

// webhookRules are the rules a webhook configuration is checked by. A new
// configuration gets them all; an update only those its stored version
// already met, so that an object older than a rule stays writable.
type webhookRules struct {
	noSideEffects, recognizedReviewVersion, uniqueNames, matchConditions bool
}

// webhookConfiguration checks a Validating- or MutatingWebhookConfiguration
// (mutating) of API version v1 (else v1beta1, which an emulated older
// release serves, and which allowed side effects and unknown review
// versions) replacing old (nil on create).
func webhookConfiguration(ctx context.Context, obj, old Object, mutating, v1 bool) (field.ErrorList, error) {
	hooks, oldHooks := jsonmap.Items(obj["webhooks"]), jsonmap.Items(old["webhooks"])
	rules := webhookRules{noSideEffects: v1, recognizedReviewVersion: v1, uniqueNames: true, matchConditions: true}
	if old != nil {
		rules = webhookRules{noSideEffects: true, recognizedReviewVersion: true, uniqueNames: true}
		names := map[string]bool{}
		for _, h := range oldHooks {
			effects, ok := h["sideEffects"].(string)
			rules.noSideEffects = rules.noSideEffects && ok && slices.Contains(noSideEffectClasses, effects)
			rules.recognizedReviewVersion = rules.recognizedReviewVersion && slices.ContainsFunc(jsonmap.Strings(h, "admissionReviewVersions"), func(v string) bool {
				return slices.Contains(admissionReviewVersions, v)
			})
			rules.uniqueNames = rules.uniqueNames && !names[str(h, "name")]
			names[str(h, "name")] = true
		}
		rules.matchConditions = len(hooks) != len(oldHooks)
		for i := 0; i < len(hooks) && !rules.matchConditions; i++ {
			rules.matchConditions = !reflect.DeepEqual(hooks[i]["matchConditions"], oldHooks[i]["matchConditions"])
		}
	}
	var errs field.ErrorList
	names := uniqueNames{}
	for i, h := range hooks {
		path := field.NewPath("webhooks").Index(i)
		hookErrs, err := webhook(ctx, h, path, mutating, rules)
		if err != nil {
			return nil, err
		}
		errs = append(errs, hookErrs...)
		errs = append(errs, reviewVersions(jsonmap.Strings(h, "admissionReviewVersions"), rules.recognizedReviewVersion, path.Child("admissionReviewVersions"))...)
		if name := str(h, "name"); rules.uniqueNames && name != "" {
			errs = append(errs, names.add(path.Child("name"), name)...)
		}
	}
	return errs, nil
}

// webhook checks one webhook of a configuration at path.
func webhook(ctx context.Context, h Object, path *field.Path, mutating bool, rules webhookRules) (field.ErrorList, error) {
	errs := utilvalidation.IsFullyQualifiedName(path.Child("name"), str(h, "name"))
	for i, r := range jsonmap.Items(h["rules"]) {
		errs = append(errs, ruleWithOperations(r, path.Child("rules").Index(i))...)
	}
	errs = append(errs, oneOf(h, "failurePolicy", failurePolicies, path)...)
	errs = append(errs, oneOf(h, "matchPolicy", matchPolicies, path)...)
	allowed := sideEffectClasses
	if rules.noSideEffects {
		allowed = noSideEffectClasses
	}
	if h["sideEffects"] == nil {
		errs = append(errs, field.Required(path.Child("sideEffects"), "must specify one of "+strings.Join(allowed, ", ")))
	}
	errs = append(errs, oneOf(h, "sideEffects", allowed, path)...)
	if t, ok := jsonmap.IntOf(h["timeoutSeconds"]); ok && (t > 30 || t < 1) {
		errs = append(errs, field.Invalid(path.Child("timeoutSeconds"), int32(t), "the timeout value must be between 1 and 30 seconds"))
	}
	for _, k := range []string{"namespaceSelector", "objectSelector"} {
		if ls, present := labelSelectorOf(h[k]); present {
			errs = append(errs, metav1validation.ValidateLabelSelector(ls, metav1validation.LabelSelectorValidationOptions{}, path.Child(k))...)
		}
	}
	if mutating {
		errs = append(errs, oneOf(h, "reinvocationPolicy", reinvocationPolicies, path)...)
	}
	errs = append(errs, clientConfig(jsonmap.Child(h, "clientConfig"), path.Child("clientConfig"))...)
	if rules.matchConditions {
		conditionErrs, err := matchConditions(ctx, jsonmap.Items(h["matchConditions"]), path.Child("matchConditions"))
		if err != nil {
			return nil, err
		}
		errs = append(errs, conditionErrs...)
	}
	return errs, nil
}

// oneOf checks that h's field k, if set, is one of supported.
func oneOf(h Object, k string, supported []string, path *field.Path) field.ErrorList {
	if v, ok := h[k].(string); ok && !slices.Contains(supported, v) {
		return field.ErrorList{field.NotSupported(path.Child(k), v, supported)}
	}
	return nil
}

// reviewVersions checks the AdmissionReview versions a webhook accepts:
// some, each once, each a DNS label, one known when recognized.
func reviewVersions(versions []string, recognized bool, path *field.Path) field.ErrorList {
	known := strings.Join(admissionReviewVersions, ", ")
	if len(versions) == 0 {
		return field.ErrorList{field.Required(path, "must specify one of "+known)}
	}
	var errs field.ErrorList
	seen := map[string]bool{}
	hasKnown := false
	for i, v := range versions {
		if seen[v] {
			errs = append(errs, field.Invalid(path.Index(i), v, "duplicate version"))
			continue
		}
		seen[v] = true
		for _, msg := range utilvalidation.IsDNS1035Label(v) {
			errs = append(errs, field.Invalid(path.Index(i), v, msg))
		}
		hasKnown = hasKnown || slices.Contains(admissionReviewVersions, v)
	}
	if recognized && !hasKnown {
		errs = append(errs, field.Invalid(path, versions, "must include at least one of "+known))
	}
	return errs
}

// clientConfig checks how a webhook is called: by an https URL or by a
// Service, not both.
func clientConfig(cc Object, path *field.Path) field.ErrorList {
	u, hasURL := cc["url"].(string)
	service, hasService := cc["service"].(map[string]any)
	switch {
	case hasURL == hasService:
		return field.ErrorList{field.Required(path, "exactly one of url or service is required")}
	case hasURL:
		return webhookURL(u, path.Child("url"))
	}
	return webhookService(service, path.Child("service"))
}

func webhookURL(s string, path *field.Path) field.ErrorList {
	const form = "; desired format: https://host[/path]"
	u, err := url.Parse(s)
	if err != nil {
		return field.ErrorList{field.Required(path, "url must be a valid URL: "+err.Error()+form)}
	}
	var errs field.ErrorList
	if u.Scheme != "https" {
		errs = append(errs, field.Invalid(path, u.Scheme, "'https' is the only allowed URL scheme"+form))
	}
	if u.Host == "" {
		errs = append(errs, field.Invalid(path, u.Host, "host must be specified"+form))
	}
	if u.User != nil {
		errs = append(errs, field.Invalid(path, u.User.String(), "user information is not permitted in the URL"))
	}
	if u.Fragment != "" {
		errs = append(errs, field.Invalid(path, u.Fragment, "fragments are not permitted in the URL"))
	}
	if u.RawQuery != "" {
		errs = append(errs, field.Invalid(path, u.RawQuery, "query parameters are not permitted in the URL"))
	}
	return errs
}

func webhookService(svc Object, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	// kube-apiserver passes the name as the namespace and the other way
	// round: each missing one is reported as the other.
	if str(svc, "namespace") == "" {
		errs = append(errs, field.Required(path.Child("name"), ""))
	}
	if str(svc, "name") == "" {
		errs = append(errs, field.Required(path.Child("namespace"), ""))
	}
	port := int32(443) // the default
	if p, ok := jsonmap.IntOf(svc["port"]); ok {
		port = int32(p)
	}
	if msgs := utilvalidation.IsValidPortNum(int(port)); msgs != nil {
		errs = append(errs, field.Invalid(path.Child("port"), port, "port is not valid: "+strings.Join(msgs, ", ")))
	}
	p, ok := svc["path"].(string)
	if !ok || p == "/" || p == "" {
		return errs
	}
	if p == "//" {
		return append(errs, field.Invalid(path.Child("path"), p, "segment[0] may not be empty"))
	}
	if !strings.HasPrefix(p, "/") {
		errs = append(errs, field.Invalid(path.Child("path"), p, "must start with a '/'"))
	}
	for i, step := range strings.Split(strings.TrimSuffix(p[1:], "/"), "/") {
		if step == "" {
			errs = append(errs, field.Invalid(path.Child("path"), p, fmt.Sprintf("segment[%d] may not be empty", i)))
			continue
		}
		for _, msg := range utilvalidation.IsDNS1123Subdomain(step) {
			errs = append(errs, field.Invalid(path.Child("path"), p, fmt.Sprintf("segment[%d]: %v", i, msg)))
		}
	}
	return errs
}

// matchConditions checks a webhook's match conditions: at most 64, named
// once each by a qualified name, expressions that compile (with the CEL
// environment of admission policies, which the webhooks' is a part of).
func matchConditions(ctx context.Context, conditions []Object, path *field.Path) (field.ErrorList, error) {
	var errs field.ErrorList
	if len(conditions) > 64 {
		errs = append(errs, field.TooMany(path, len(conditions), 64))
	}
	var p celtypes.Policy
	for _, c := range conditions {
		p.MatchConditions = append(p.MatchConditions, celtypes.NamedExpression{Name: str(c, "name"), Expression: strings.TrimSpace(str(c, "expression"))})
	}
	compiled, err := celeval.CompilePolicy(ctx, p)
	if err != nil {
		return nil, err
	}
	compileErrs := compiled.Errors().MatchConditions
	seen := uniqueNames{}
	for i, c := range p.MatchConditions {
		at := path.Index(i)
		switch {
		case c.Expression == "":
			errs = append(errs, field.Required(at.Child("expression"), ""))
		case compileErrs[i] != "":
			errs = append(errs, field.Invalid(at.Child("expression"), c.Expression, compileErrs[i]))
		}
		if c.Name == "" {
			errs = append(errs, field.Required(at.Child("name"), ""))
		} else {
			for _, msg := range utilvalidation.IsQualifiedName(c.Name) {
				errs = append(errs, field.Invalid(at.Child("name"), c.Name, msg))
			}
			errs = append(errs, seen.add(at.Child("name"), c.Name)...)
		}
	}
	return errs, nil
}
