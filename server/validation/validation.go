package validation

import (
	"context"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubeplay/internal/jsonmap"
)

// Object is a decoded Kubernetes object.
type Object = map[string]any

var (
	specPath     = field.NewPath("spec")
	templatePath = specPath.Child("template")
	selectorPath = specPath.Child("selector")
)

// Create validates a new object of kind gvk: its labels and annotations
// (whatever its kind), then what its kind requires.
// The error, if any, says why it could not be validated (see package
// celeval).
func Create(ctx context.Context, gvk schema.GroupVersionKind, obj Object) (field.ErrorList, error) {
	errs, err := validate(ctx, gvk, obj, nil)
	if err != nil {
		return nil, err
	}
	return append(objectMeta(jsonmap.Child(obj, "metadata"), metadataPath), errs...), nil
}

// validate checks obj, an object of kind gvk replacing old (nil on
// create), for what needs CEL, then what does not.
func validate(ctx context.Context, gvk schema.GroupVersionKind, obj, old Object) (field.ErrorList, error) {
	switch gvk.GroupKind() {
	case schema.GroupKind{Group: "admissionregistration.k8s.io", Kind: "ValidatingAdmissionPolicy"}:
		name, _ := jsonmap.Child(obj, "metadata")["name"].(string)
		return admissionPolicy(ctx, name, jsonmap.Child(obj, "spec"))
	case schema.GroupKind{Group: "admissionregistration.k8s.io", Kind: "ValidatingWebhookConfiguration"}:
		return webhookConfiguration(ctx, obj, old, false, gvk.Version == "v1")
	case schema.GroupKind{Group: "admissionregistration.k8s.io", Kind: "MutatingWebhookConfiguration"}:
		return webhookConfiguration(ctx, obj, old, true, gvk.Version == "v1")
	case schema.GroupKind{Group: "resource.k8s.io", Kind: "DeviceClass"}:
		return deviceClass(ctx, jsonmap.Child(obj, "spec"))
	case schema.GroupKind{Group: "resource.k8s.io", Kind: "ResourceClaim"}:
		spec := jsonmap.Child(obj, "spec")
		if old == nil {
			return resourceClaimSpec(ctx, spec, specPath)
		}
		// Its spec unchanged is all an update is checked for.
		return immutableSpec(spec, jsonmap.Child(old, "spec"), "resource.ResourceClaimSpec"), nil
	case schema.GroupKind{Group: "resource.k8s.io", Kind: "ResourceClaimTemplate"}:
		spec := jsonmap.Child(obj, "spec")
		// An update is validated as new, then for its spec unchanged.
		errs, err := resourceClaimSpec(ctx, jsonmap.Child(spec, "spec"), specPath.Child("spec"))
		if old != nil {
			errs = append(errs, immutableSpec(spec, jsonmap.Child(old, "spec"), "resource.ResourceClaimTemplateSpec")...)
		}
		return errs, err
	}
	return validateKind(gvk, obj, old), nil
}

// validateKind checks obj, an object of kind gvk replacing old (nil on
// create), for what needs no CEL (the kinds whose strategy has no validate
// hook yet).
func validateKind(gvk schema.GroupVersionKind, obj, old Object) field.ErrorList {
	spec, oldSpec := jsonmap.Child(obj, "spec"), jsonmap.Child(old, "spec")
	switch gvk.GroupKind() {
	case schema.GroupKind{Group: "certificates.k8s.io", Kind: "CertificateSigningRequest"}:
		if old == nil { // an update never changes the spec
			return certificateSigningRequest(spec)
		}
	case schema.GroupKind{Group: "networking.k8s.io", Kind: "ServiceCIDR"}:
		if old == nil {
			return serviceCIDR(spec)
		}
		return serviceCIDRUpdate(spec, oldSpec)
	case schema.GroupKind{Group: "networking.k8s.io", Kind: "IPAddress"}:
		if old == nil {
			return ipAddress(spec)
		}
		return ipAddressUpdate(spec, oldSpec)
	case schema.GroupKind{Group: "resource.k8s.io", Kind: "ResourceSlice"}:
		if old == nil {
			return resourceSlice(spec)
		}
		return resourceSliceUpdate(spec, oldSpec)
	case schema.GroupKind{Group: "apiregistration.k8s.io", Kind: "APIService"}:
		name, _ := jsonmap.Child(obj, "metadata")["name"].(string)
		return apiService(name, spec)
	case schema.GroupKind{Kind: "Pod"}:
		return podSpec(spec, specPath)
	case schema.GroupKind{Group: "networking.k8s.io", Kind: "Ingress"}:
		return ingress(spec)
	case schema.GroupKind{Group: "autoscaling", Kind: "HorizontalPodAutoscaler"}:
		return horizontalPodAutoscaler(spec, gvk.Version == "v2")
	case schema.GroupKind{Group: "admissionregistration.k8s.io", Kind: "ValidatingAdmissionPolicyBinding"}:
		return policyBinding(spec)
	}
	return nil
}

// Update validates the object obj of kind gvk replacing old for what its
// kind requires of any object (the rest is its strategy's validateUpdate).
func Update(ctx context.Context, gvk schema.GroupVersionKind, obj, old Object) (field.ErrorList, error) {
	return validate(ctx, gvk, obj, old)
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
	n, _ := jsonmap.IntOf(v)
	return n
}

// uniqueNames are the names met so far in a list whose items a name (or
// another key) tells apart.
type uniqueNames map[string]bool

// add notes name, the name at path of a list's item: a Duplicate if an
// item before it has it.
func (n uniqueNames) add(path *field.Path, name string) field.ErrorList {
	if n[name] {
		return field.ErrorList{field.Duplicate(path, name)}
	}
	n[name] = true
	return nil
}

// dnsLabel checks a name that must be a DNS label.
func dnsLabel(path *field.Path, name string) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range utilvalidation.IsDNS1123Label(name) {
		errs = append(errs, field.Invalid(path, name, msg))
	}
	return errs
}
