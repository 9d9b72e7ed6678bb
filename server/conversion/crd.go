package conversion

import (
	"reflect"

	"kubeplay/internal/jsonmap"
	"kubeplay/server/structural"
)

// CustomResourceDefinitions of apiextensions.k8s.io/v1beta1 (served until
// v1.21) are stored in v1's shape, as every CRD is, converted as
// kube-apiserver converts them:
// v1beta1's top-level validation, subresources and additionalPrinterColumns
// hold what every version shares, v1 repeats them in each version; a
// printer column's path is JSONPath in v1beta1, jsonPath in v1; v1beta1's
// spec.version names the first version; a conversion webhook's client
// configuration and review versions sit in v1's conversion.webhook.

// CRDVersionParts pairs v1beta1's top-level fields with the per-version
// fields of the same content, with the words of kube-apiserver's messages.
var CRDVersionParts = []struct{ Top, Version, What string }{
	{"validation", "schema", "schemas"},
	{"subresources", "subresources", "subresources"},
	{"additionalPrinterColumns", "additionalPrinterColumns", "additionalPrinterColumns"},
}

// crdToV1 converts a v1beta1 CRD to v1, in place.
func crdToV1(obj Object) {
	spec := jsonmap.Child(obj, "spec")
	if spec == nil {
		return
	}
	delete(spec, "version")
	versions := jsonmap.Items(spec["versions"])
	for _, p := range CRDVersionParts {
		top, ok := spec[p.Top]
		if !ok {
			continue
		}
		delete(spec, p.Top)
		if top == nil {
			continue
		}
		for _, v := range versions {
			v[p.Version] = structural.DeepCopy(top)
		}
	}
	for _, v := range versions {
		for _, c := range jsonmap.Items(v["additionalPrinterColumns"]) {
			renameField(c, "JSONPath", "jsonPath")
		}
	}
	if conv := jsonmap.Child(spec, "conversion"); conv != nil {
		webhook := map[string]any{}
		renameField(conv, "webhookClientConfig", "clientConfig")
		for _, k := range []string{"clientConfig", "conversionReviewVersions"} {
			if v, ok := conv[k]; ok {
				webhook[k] = v
				delete(conv, k)
			}
		}
		if len(webhook) > 0 {
			conv["webhook"] = webhook
		}
	}
	// v1 omits false; v1beta1's unset means true (its default).
	if b, ok := spec["preserveUnknownFields"].(bool); ok && !b {
		delete(spec, "preserveUnknownFields")
	}
}

// crdFromV1 converts a v1 CRD to v1beta1, in place: what all versions
// share moves to the top level.
func crdFromV1(obj Object) {
	spec := jsonmap.Child(obj, "spec")
	if spec == nil {
		return
	}
	versions := jsonmap.Items(spec["versions"])
	if len(versions) > 0 {
		spec["version"] = versions[0]["name"]
	}
	for _, v := range versions {
		for _, c := range jsonmap.Items(v["additionalPrinterColumns"]) {
			renameField(c, "jsonPath", "JSONPath")
		}
	}
	for _, p := range CRDVersionParts {
		if !IdenticalPerVersion(versions, p.Version) {
			continue
		}
		spec[p.Top] = versions[0][p.Version]
		for _, v := range versions {
			delete(v, p.Version)
		}
	}
	if conv := jsonmap.Child(spec, "conversion"); conv != nil {
		if webhook := jsonmap.Child(conv, "webhook"); webhook != nil {
			delete(conv, "webhook")
			renameField(webhook, "clientConfig", "webhookClientConfig")
			for k, v := range webhook {
				conv[k] = v
			}
		}
	}
	if _, ok := spec["preserveUnknownFields"]; !ok {
		spec["preserveUnknownFields"] = false
	}
}

// IdenticalPerVersion reports whether every version sets field key, to the
// same value.
func IdenticalPerVersion(versions []map[string]any, key string) bool {
	if len(versions) == 0 {
		return false
	}
	for _, v := range versions {
		if IsEmptyPart(v[key]) || !reflect.DeepEqual(v[key], versions[0][key]) {
			return false
		}
	}
	return true
}

// IsEmptyPart reports whether a version's part is unset as kube-apiserver's
// types see it: absent, null, or an empty list of columns.
func IsEmptyPart(v any) bool {
	if l, ok := v.([]any); ok {
		return len(l) == 0
	}
	return v == nil
}
