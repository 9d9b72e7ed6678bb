package validation

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/internal/jsonmap"
)

// Deployment checks a Deployment: its replicas, selector and pod
// template, strategy and the numbers of its rollout.
func Deployment(obj Object) field.ErrorList {
	spec := jsonmap.Child(obj, "spec")
	errs := nonNegative(spec, specPath, "replicas")
	errs = append(errs, replicaSetTemplate(spec, "deployment", "ReplicaSet")...)
	errs = append(errs, strategy(jsonmap.Child(spec, "strategy"))...)
	errs = append(errs, nonNegative(spec, specPath, "minReadySeconds", "revisionHistoryLimit")...)
	if n, ok := jsonmap.IntOf(spec["progressDeadlineSeconds"]); ok {
		errs = append(errs, nonNegative(spec, specPath, "progressDeadlineSeconds")...)
		if n <= intOf(spec["minReadySeconds"]) {
			errs = append(errs, field.Invalid(specPath.Child("progressDeadlineSeconds"), n, "must be greater than minReadySeconds"))
		}
	}
	return errs
}

// DeploymentUpdate checks a Deployment's update: the Deployment as new,
// its selector unchanged.
func DeploymentUpdate(obj, old Object) field.ErrorList {
	return append(Deployment(obj), immutableSelector(obj, old)...)
}

// ReplicaSet checks a ReplicaSet: its replicas, selector and pod template.
func ReplicaSet(obj Object) field.ErrorList {
	spec := jsonmap.Child(obj, "spec")
	errs := nonNegative(spec, specPath, "replicas", "minReadySeconds")
	return append(errs, replicaSetTemplate(spec, "deployment", "ReplicaSet")...)
}

// ReplicaSetUpdate checks a ReplicaSet's update: the ReplicaSet as new,
// its selector unchanged.
func ReplicaSetUpdate(obj, old Object) field.ErrorList {
	return append(ReplicaSet(obj), immutableSelector(obj, old)...)
}

// DaemonSet checks a DaemonSet: its selector, pod template and update
// strategy.
func DaemonSet(obj Object) field.ErrorList {
	spec := jsonmap.Child(obj, "spec")
	ls, _ := labelSelectorOf(spec["selector"])
	errs := metav1validation.ValidateLabelSelector(ls, metav1validation.LabelSelectorValidationOptions{}, selectorPath)
	template := jsonmap.Child(spec, "template")
	if sel, err := metav1.LabelSelectorAsSelector(ls); err == nil {
		errs = append(errs, templateMatches(template, sel)...)
	}
	if ls != nil && len(ls.MatchLabels)+len(ls.MatchExpressions) == 0 {
		errs = append(errs, field.Invalid(selectorPath, ls, "empty selector is invalid for daemonset"))
	}
	errs = append(errs, alwaysRestarting(template, "DaemonSet")...)
	errs = append(errs, nonNegative(spec, specPath, "minReadySeconds", "templateGeneration")...)
	errs = append(errs, daemonSetUpdateStrategy(jsonmap.Child(spec, "updateStrategy"))...)
	return append(errs, nonNegative(spec, specPath, "revisionHistoryLimit")...)
}

// DaemonSetUpdate checks a DaemonSet's update: the DaemonSet as new, its
// selector unchanged.
func DaemonSetUpdate(obj, old Object) field.ErrorList {
	return append(DaemonSet(obj), immutableSelector(obj, old)...)
}

// StatefulSet checks a StatefulSet: its pod management and update
// strategy, numbers, service name, claim templates, selector and pod
// template.
func StatefulSet(obj Object) field.ErrorList { return statefulSet(obj, false) }

// statefulSet checks a StatefulSet, new or (update) replacing another:
// then its service name and claim templates, which cannot change, are
// not checked again.
func statefulSet(obj Object, update bool) field.ErrorList {
	spec := jsonmap.Child(obj, "spec")
	var errs field.ErrorList
	switch policy := str(spec, "podManagementPolicy"); policy {
	case "OrderedReady", "Parallel":
	case "":
		errs = append(errs, field.Required(specPath.Child("podManagementPolicy"), ""))
	default:
		errs = append(errs, field.Invalid(specPath.Child("podManagementPolicy"), policy, "must be 'OrderedReady' or 'Parallel'"))
	}
	us := jsonmap.Child(spec, "updateStrategy")
	rolling := jsonmap.Child(us, "rollingUpdate")
	switch str(us, "type") {
	case "":
		errs = append(errs, field.Required(specPath.Child("updateStrategy"), ""))
	case "OnDelete":
		if rolling != nil {
			errs = append(errs, field.Invalid(specPath.Child("updateStrategy", "rollingUpdate"), internalJSON("apps.RollingUpdateStatefulSetStrategy", rolling), "only allowed for updateStrategy 'RollingUpdate'"))
		}
	case "RollingUpdate":
		if rolling != nil {
			errs = append(errs, nonNegative(rolling, specPath.Child("updateStrategy", "rollingUpdate"), "partition")...)
			if v, ok := rolling["maxUnavailable"]; ok {
				path := specPath.Child("updateStrategy", "rollingUpdate", "maxUnavailable")
				errs = append(errs, intOrPercent(v, path)...)
				if intOrPercentValue(v) == 0 {
					errs = append(errs, field.Invalid(path, v, "cannot be 0"))
				}
				errs = append(errs, notOver100Percent(v, path)...)
			}
		}
	default:
		errs = append(errs, field.Invalid(specPath.Child("updateStrategy"), internalJSON("apps.StatefulSetUpdateStrategy", us), "must be 'RollingUpdate' or 'OnDelete'"))
	}
	claims := jsonmap.Items(spec["volumeClaimTemplates"])
	if !update {
		for i, c := range claims {
			errs = append(errs, claimSpec(jsonmap.Child(c, "spec"), specPath.Child("volumeClaimTemplates").Index(i).Child("spec"))...)
		}
	}
	errs = append(errs, nonNegative(spec, specPath, "replicas", "minReadySeconds")...)
	if name := str(spec, "serviceName"); name != "" && !update {
		errs = append(errs, dnsLabel(specPath.Child("serviceName"), name)...)
	}
	ls, errs := controllerSelector(spec, "statefulset", errs)
	sel, err := metav1.LabelSelectorAsSelector(ls)
	if err != nil {
		return append(errs, field.Invalid(selectorPath, ls, ""))
	}
	template := jsonmap.Child(spec, "template")
	if !sel.Empty() {
		errs = append(errs, templateMatches(template, sel)...)
	}
	// The pods get a volume per claim template, validated with theirs;
	// their metadata is checked twice, as kube-apiserver does.
	podSpecWithClaims := deepCopy(jsonmap.Child(template, "spec"))
	volumes := []any{}
	names := map[string]bool{}
	for _, c := range claims {
		name := str(jsonmap.Child(c, "metadata"), "name")
		if !names[name] {
			volumes = append(volumes, map[string]any{"name": name, "persistentVolumeClaim": map[string]any{"claimName": name}})
		}
		names[name] = true
	}
	for _, v := range jsonmap.Items(podSpecWithClaims["volumes"]) {
		if !names[str(v, "name")] {
			volumes = append(volumes, v)
		}
	}
	if len(claims) > 0 {
		podSpecWithClaims["volumes"] = volumes
	}
	md := jsonmap.Child(template, "metadata")
	errs = append(errs, objectMeta(md, templatePath)...)
	errs = append(errs, podSpec(podSpecWithClaims, templatePath.Child("spec"))...)
	return append(errs, objectMeta(md, templatePath)...)
}

// statefulSetUpdatable are the fields of a StatefulSet's spec an update may
// change, as kube-apiserver's message names them.
var statefulSetUpdatable = []string{"replicas", "ordinals", "template", "updateStrategy", "revisionHistoryLimit", "persistentVolumeClaimRetentionPolicy", "minReadySeconds"}

// StatefulSetUpdate checks a StatefulSet's update: the StatefulSet as new,
// and nothing of its spec changed but statefulSetUpdatable.
func StatefulSetUpdate(obj, old Object) field.ErrorList {
	fixed := func(s Object) Object {
		out := deepCopy(s)
		for _, k := range statefulSetUpdatable {
			delete(out, k)
		}
		return out
	}
	errs := statefulSet(obj, true)
	if !reflect.DeepEqual(fixed(jsonmap.Child(obj, "spec")), fixed(jsonmap.Child(old, "spec"))) {
		errs = append(errs, field.Forbidden(specPath, "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"))
	}
	return errs
}

// replicaSetTemplate checks the selector and pod template of a Deployment
// or ReplicaSet (kind names them in messages, owner the template's).
func replicaSetTemplate(spec Object, kind, owner string) field.ErrorList {
	ls, errs := controllerSelector(spec, kind, nil)
	sel, err := metav1.LabelSelectorAsSelector(ls)
	if err != nil {
		return append(errs, field.Invalid(selectorPath, ls, "invalid label selector"))
	}
	template := jsonmap.Child(spec, "template")
	if !sel.Empty() {
		errs = append(errs, templateMatches(template, sel)...)
	}
	return append(errs, alwaysRestarting(template, owner)...)
}

// controllerSelector checks a controller's spec.selector, appended to
// errs: required, valid, not empty (kind names the controller).
func controllerSelector(spec Object, kind string, errs field.ErrorList) (*metav1.LabelSelector, field.ErrorList) {
	ls, present := labelSelectorOf(spec["selector"])
	if !present {
		return nil, append(errs, field.Required(selectorPath, ""))
	}
	errs = append(errs, metav1validation.ValidateLabelSelector(ls, metav1validation.LabelSelectorValidationOptions{}, selectorPath)...)
	if len(ls.MatchLabels)+len(ls.MatchExpressions) == 0 {
		errs = append(errs, field.Invalid(selectorPath, ls, "empty selector is invalid for "+kind))
	}
	return ls, errs
}

// labelSelectorOf decodes a LabelSelector (nil and false if absent).
func labelSelectorOf(v any) (*metav1.LabelSelector, bool) {
	if v == nil {
		return nil, false
	}
	ls := &metav1.LabelSelector{}
	if b, err := json.Marshal(v); err == nil {
		_ = json.Unmarshal(b, ls)
	}
	return ls, true
}

// immutableSelector checks that an update keeps spec.selector.
func immutableSelector(obj, old Object) field.ErrorList {
	ls, _ := labelSelectorOf(jsonmap.Child(obj, "spec")["selector"])
	was, _ := labelSelectorOf(jsonmap.Child(old, "spec")["selector"])
	if reflect.DeepEqual(ls, was) {
		return nil
	}
	return field.ErrorList{field.Invalid(selectorPath, ls, "field is immutable")}
}

// templateMatches checks that sel selects the labels of a pod template.
func templateMatches(template Object, sel labels.Selector) field.ErrorList {
	tlabels := jsonmap.Child(jsonmap.Child(template, "metadata"), "labels")
	if sel.Matches(labels.Set(stringMap(tlabels))) {
		return nil
	}
	return field.ErrorList{field.Invalid(templatePath.Child("metadata", "labels"), tlabels, "`selector` does not match template `labels`")}
}

// alwaysRestarting checks the pod template of a controller (owner) whose
// pods run until deleted: a valid template, restarting always, with no
// deadline.
func alwaysRestarting(template Object, owner string) field.ErrorList {
	errs := objectMeta(jsonmap.Child(template, "metadata"), templatePath)
	spec := jsonmap.Child(template, "spec")
	errs = append(errs, podSpec(spec, templatePath.Child("spec"))...)
	if policy := str(spec, "restartPolicy"); policy != "Always" {
		errs = append(errs, field.NotSupported(templatePath.Child("spec", "restartPolicy"), policy, []string{"Always"}))
	}
	if _, ok := spec["activeDeadlineSeconds"]; ok {
		errs = append(errs, field.Forbidden(templatePath.Child("spec", "activeDeadlineSeconds"), "activeDeadlineSeconds in "+owner+" is not Supported"))
	}
	return errs
}

// strategy checks a Deployment's strategy: a rolling update only for the
// RollingUpdate type, and one that can make progress.
func strategy(s Object) field.ErrorList {
	path := specPath.Child("strategy")
	ru, hasRU := s["rollingUpdate"].(map[string]any)
	switch str(s, "type") {
	case "Recreate":
		if hasRU {
			return field.ErrorList{field.Forbidden(path.Child("rollingUpdate"), "may not be specified when strategy `type` is 'Recreate'")}
		}
	case "RollingUpdate":
		if !hasRU {
			return field.ErrorList{field.Required(path.Child("rollingUpdate"), "this should be defaulted and never be nil")}
		}
		path = path.Child("rollingUpdate")
		errs := intOrPercent(ru["maxUnavailable"], path.Child("maxUnavailable"))
		errs = append(errs, intOrPercent(ru["maxSurge"], path.Child("maxSurge"))...)
		if intOrPercentValue(ru["maxUnavailable"]) == 0 && intOrPercentValue(ru["maxSurge"]) == 0 {
			errs = append(errs, field.Invalid(path.Child("maxUnavailable"), goIntOrString(ru["maxUnavailable"]), "may not be 0 when `maxSurge` is 0"))
		}
		return append(errs, notOver100Percent(ru["maxUnavailable"], path.Child("maxUnavailable"))...)
	default:
		return field.ErrorList{field.NotSupported(path, internalJSON("apps.DeploymentStrategy", s), []string{"Recreate", "RollingUpdate"})}
	}
	return nil
}

// daemonSetUpdateStrategy checks a DaemonSet's update strategy.
func daemonSetUpdateStrategy(s Object) field.ErrorList {
	path := specPath.Child("updateStrategy")
	switch str(s, "type") {
	case "OnDelete":
	case "RollingUpdate":
		ru, ok := s["rollingUpdate"].(map[string]any)
		if !ok {
			return field.ErrorList{field.Required(path.Child("rollingUpdate"), "")}
		}
		path = path.Child("rollingUpdate")
		errs := intOrPercent(ru["maxUnavailable"], path.Child("maxUnavailable"))
		errs = append(errs, intOrPercent(ru["maxSurge"], path.Child("maxSurge"))...)
		unavailable, surge := intOrPercentValue(ru["maxUnavailable"]) != 0, intOrPercentValue(ru["maxSurge"]) != 0
		switch {
		case unavailable && surge:
			errs = append(errs, field.Invalid(path.Child("maxSurge"), goIntOrString(ru["maxSurge"]), "may not be set when maxUnavailable is non-zero"))
		case !unavailable && !surge:
			errs = append(errs, field.Required(path.Child("maxUnavailable"), "cannot be 0 when maxSurge is 0"))
		}
		errs = append(errs, notOver100Percent(ru["maxUnavailable"], path.Child("maxUnavailable"))...)
		return append(errs, notOver100Percent(ru["maxSurge"], path.Child("maxSurge"))...)
	default:
		return field.ErrorList{field.NotSupported(path, internalJSON("apps.DaemonSetUpdateStrategy", s), []string{"RollingUpdate", "OnDelete"})}
	}
	return nil
}

// goIntOrString is an int-or-string as kube-apiserver prints it.
func goIntOrString(v any) any {
	if s, ok := v.(string); ok {
		return s
	}
	return intOf(v)
}

// intOrPercent checks an int-or-string that is a count or a percentage.
func intOrPercent(v any, path *field.Path) field.ErrorList {
	if s, ok := v.(string); ok {
		var errs field.ErrorList
		for _, msg := range utilvalidation.IsValidPercent(s) {
			errs = append(errs, field.Invalid(path, s, msg))
		}
		return errs
	}
	if n := intOf(v); n < 0 {
		return field.ErrorList{field.Invalid(path, n, "must be greater than or equal to 0")}
	}
	return nil
}

// intOrPercentValue is the number of an int-or-string: its percentage, or
// its integer (0 for a string that is neither).
func intOrPercentValue(v any) int64 {
	s, ok := v.(string)
	if !ok {
		return intOf(v)
	}
	if len(utilvalidation.IsValidPercent(s)) == 0 {
		n, _ := strconv.ParseInt(strings.TrimSuffix(s, "%"), 10, 64)
		return n
	}
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

// notOver100Percent checks that a percentage is at most 100%.
func notOver100Percent(v any, path *field.Path) field.ErrorList {
	if s, ok := v.(string); ok && len(utilvalidation.IsValidPercent(s)) == 0 && intOrPercentValue(s) > 100 {
		return field.ErrorList{field.Invalid(path, s, "must not be greater than 100%")}
	}
	return nil
}

// nonNegative checks that the integer fields of obj (at path) are not
// negative.
func nonNegative(obj Object, path *field.Path, fields ...string) field.ErrorList {
	var errs field.ErrorList
	for _, f := range fields {
		if n, ok := jsonmap.IntOf(obj[f]); ok && n < 0 {
			errs = append(errs, field.Invalid(path.Child(f), n, "must be greater than or equal to 0"))
		}
	}
	return errs
}
