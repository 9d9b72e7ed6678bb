package validation

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/server/decoded"
)

// Object is a decoded Kubernetes object.
type Object = map[string]any

var (
	specPath     = field.NewPath("spec")
	templatePath = specPath.Child("template")
	selectorPath = specPath.Child("selector")
)

// Create validates a new object of kind gvk, its metadata.uid set: its
// labels and annotations (whatever its kind), then what its kind requires.
// The error, if any, says why it could not be validated (see package
// celeval).
func Create(ctx context.Context, gvk schema.GroupVersionKind, obj Object) (field.ErrorList, error) {
	md := decoded.Child(obj, "metadata")
	uid, _ := md["uid"].(string)
	errs, err := validate(ctx, gvk, obj, uid)
	if err != nil {
		return nil, err
	}
	return append(objectMeta(md, field.NewPath("metadata")), errs...), nil
}

// validate checks obj, an object of kind gvk with uid.
func validate(ctx context.Context, gvk schema.GroupVersionKind, obj Object, uid string) (field.ErrorList, error) {
	if gvk.GroupKind() == (schema.GroupKind{Group: "admissionregistration.k8s.io", Kind: "ValidatingAdmissionPolicy"}) {
		name, _ := decoded.Child(obj, "metadata")["name"].(string)
		return admissionPolicy(ctx, name, decoded.Child(obj, "spec"))
	}
	return validateKind(gvk, obj, uid), nil
}

// validateKind checks obj, an object of kind gvk with uid, for what needs
// no CEL.
func validateKind(gvk schema.GroupVersionKind, obj Object, uid string) field.ErrorList {
	spec := decoded.Child(obj, "spec")
	switch gvk.GroupKind() {
	case schema.GroupKind{Kind: "Pod"}:
		return podSpec(spec, specPath)
	case schema.GroupKind{Kind: "ReplicationController"}:
		errs := replicas(spec)
		sel := labels.SelectorFromSet(stringMap(decoded.Child(spec, "selector")))
		if !sel.Empty() {
			errs = append(errs, templateMatches(decoded.Child(spec, "template"), sel)...)
		}
		return append(errs, alwaysRestarting(decoded.Child(spec, "template"), "ReplicationController")...)
	case schema.GroupKind{Group: "batch", Kind: "Job"}:
		return job(spec, uid)
	case schema.GroupKind{Group: "batch", Kind: "CronJob"}:
		return append(schedule(str(spec, "schedule")), jobTemplate(decoded.Child(decoded.Child(decoded.Child(spec, "jobTemplate"), "spec"), "template"), specPath.Child("jobTemplate", "spec", "template"))...)
	case schema.GroupKind{Kind: "Service"}:
		return service(spec)
	case schema.GroupKind{Group: "networking.k8s.io", Kind: "Ingress"}:
		return ingress(spec)
	case schema.GroupKind{Group: "autoscaling", Kind: "HorizontalPodAutoscaler"}:
		return horizontalPodAutoscaler(spec)
	case schema.GroupKind{Group: "admissionregistration.k8s.io", Kind: "ValidatingAdmissionPolicyBinding"}:
		return policyBinding(spec)
	}
	return nil
}

// Update validates obj replacing old: obj as a new object, then what may
// not change.
func Update(ctx context.Context, gvk schema.GroupVersionKind, obj, old Object) (field.ErrorList, error) {
	uid, _ := decoded.Child(old, "metadata")["uid"].(string)
	errs, err := validate(ctx, gvk, obj, uid)
	if err != nil {
		return nil, err
	}
	spec, oldSpec := decoded.Child(obj, "spec"), decoded.Child(old, "spec")
	immutable := func(path *field.Path, key string) {
		if !reflect.DeepEqual(spec[key], oldSpec[key]) {
			errs = append(errs, field.Invalid(path, spec[key], "field is immutable"))
		}
	}
	switch gvk.GroupKind() {
	case schema.GroupKind{Kind: "Service"}:
		ip, oldIP := str(spec, "clusterIP"), str(oldSpec, "clusterIP")
		if ip != "" && oldIP != "" && ip != oldIP && spec["type"] != "ExternalName" {
			errs = append(errs, field.Invalid(specPath.Child("clusterIPs").Index(0), []string{ip}, "may not change once set"))
		}
	case schema.GroupKind{Group: "batch", Kind: "Job"}:
		immutable(selectorPath, "selector")
		// kube-apiserver matches the template against the selector a
		// second time on update: its Status lists the error twice in
		// causes (once in the message).
		errs = append(errs, templateMatches(decoded.Child(spec, "template"), labelSelector(spec["selector"]))...)
		if spec["completionMode"] != "Indexed" {
			immutable(specPath.Child("completions"), "completions")
		}
	}
	return errs, nil
}

// labelSelector is the selector of a metav1.LabelSelector object; nil or
// unparsable, it selects nothing.
func labelSelector(v any) labels.Selector {
	if v == nil {
		return labels.Nothing()
	}
	var ls metav1.LabelSelector
	b, err := json.Marshal(v)
	if err == nil {
		err = json.Unmarshal(b, &ls)
	}
	if err != nil {
		return labels.Nothing()
	}
	sel, err := metav1.LabelSelectorAsSelector(&ls)
	if err != nil {
		return labels.Nothing()
	}
	return sel
}

// job checks a Job: a selector the server generated, unless it chose its
// own, that selects its pod template, whose pods do not restart in place.
func job(spec Object, uid string) field.ErrorList {
	var errs field.ErrorList
	if spec["manualSelector"] != true {
		want := map[string]any{"matchLabels": map[string]any{"batch.kubernetes.io/controller-uid": uid}}
		if !reflect.DeepEqual(normalizeSelector(spec["selector"]), want) {
			errs = append(errs, field.Invalid(selectorPath, spec["selector"], "`selector` not auto-generated"))
		}
	}
	errs = append(errs, templateMatches(decoded.Child(spec, "template"), labelSelector(spec["selector"]))...)
	return append(errs, jobTemplate(decoded.Child(spec, "template"), templatePath)...)
}

// normalizeSelector drops a selector's empty parts, which select nothing
// more.
func normalizeSelector(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := map[string]any{}
	for k, e := range m {
		if l, ok := e.([]any); ok && len(l) == 0 {
			continue
		}
		out[k] = e
	}
	return out
}

// jobTemplate checks the pod template of a Job at path.
func jobTemplate(template Object, path *field.Path) field.ErrorList {
	errs := objectMeta(decoded.Child(template, "metadata"), path)
	spec := decoded.Child(template, "spec")
	errs = append(errs, podSpec(spec, path.Child("spec"))...)
	// A Job's pods end: they restart on failure at most.
	switch policy := str(spec, "restartPolicy"); policy {
	case "OnFailure", "Never":
	case "Always", "":
		errs = append(errs, field.Required(path.Child("spec", "restartPolicy"), `valid values: "OnFailure", "Never"`))
	default:
		errs = append(errs, field.NotSupported(path.Child("spec", "restartPolicy"), policy, []string{"OnFailure", "Never"}))
	}
	return errs
}

func stringMap(m Object) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		s, _ := v.(string)
		out[k] = s
	}
	return out
}

func str(obj Object, k string) string {
	s, _ := obj[k].(string)
	return strings.TrimSpace(s)
}

// intOf reads an integer field, 0 when it is absent.
func intOf(v any) int64 {
	n, _ := decoded.Int(v)
	return n
}

// dnsLabel checks a name that must be a DNS label.
func dnsLabel(path *field.Path, name string) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range utilvalidation.IsDNS1123Label(name) {
		errs = append(errs, field.Invalid(path, name, msg))
	}
	return errs
}

func replicas(spec Object) field.ErrorList {
	if n, ok := decoded.Int(spec["replicas"]); ok && n < 0 {
		return field.ErrorList{field.Invalid(specPath.Child("replicas"), n, "must be greater than or equal to 0")}
	}
	return nil
}

// schedule checks a CronJob's schedule: five fields, or a descriptor such
// as @hourly.
func schedule(s string) field.ErrorList {
	if strings.HasPrefix(s, "@") {
		return nil
	}
	if f := strings.Fields(s); len(f) != 5 {
		return field.ErrorList{field.Invalid(specPath.Child("schedule"), s, fmt.Sprintf("expected exactly 5 fields, found %d: %v", len(f), f))}
	}
	return nil
}
