package server

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/uuid"

	"kubeplay/server/catalog"
	"kubeplay/server/decoded"
	"kubeplay/server/structural"
	"kubeplay/server/webhook"
)

// CustomResourceDefinitions of apiextensions.k8s.io/v1beta1 (served until
// v1.21) are stored in v1's shape, as every CRD is, converted as
// kube-apiserver converts them:
// v1beta1's top-level validation, subresources and additionalPrinterColumns
// hold what every version shares, v1 repeats them in each version; a
// printer column's path is JSONPath in v1beta1, jsonPath in v1; v1beta1's
// spec.version names the first version; a conversion webhook's client
// configuration and review versions sit in v1's conversion.webhook.
func isCRDV1beta1(r *catalog.Resource) bool {
	return isCRDs(r) && r.Custom == nil && r.Version == "v1beta1"
}

// storedCRD returns a copy of a CRD of any version in v1, the version the
// CRD controllers read.
func storedCRD(res *catalog.Resource, obj object) object {
	return deepCopyObject(toStorage(res, obj))
}

// crdVersionParts pairs v1beta1's top-level fields with the per-version
// fields of the same content, with the words of kube-apiserver's messages.
var crdVersionParts = []struct{ top, version, what string }{
	{"validation", "schema", "schemas"},
	{"subresources", "subresources", "subresources"},
	{"additionalPrinterColumns", "additionalPrinterColumns", "additionalPrinterColumns"},
}

// crdToV1 converts a v1beta1 CRD to v1, in place.
func crdToV1(obj object) {
	spec := decoded.Child(obj, "spec")
	if spec == nil {
		return
	}
	delete(spec, "version")
	versions := decoded.Items(spec["versions"])
	for _, p := range crdVersionParts {
		top, ok := spec[p.top]
		if !ok {
			continue
		}
		delete(spec, p.top)
		if top == nil {
			continue
		}
		for _, v := range versions {
			v[p.version] = structural.DeepCopy(top)
		}
	}
	for _, v := range versions {
		for _, c := range decoded.Items(v["additionalPrinterColumns"]) {
			renameField(c, "JSONPath", "jsonPath")
		}
	}
	if conv := decoded.Child(spec, "conversion"); conv != nil {
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
func crdFromV1(obj object) {
	spec := decoded.Child(obj, "spec")
	if spec == nil {
		return
	}
	versions := decoded.Items(spec["versions"])
	if len(versions) > 0 {
		spec["version"] = versions[0]["name"]
	}
	for _, v := range versions {
		for _, c := range decoded.Items(v["additionalPrinterColumns"]) {
			renameField(c, "jsonPath", "JSONPath")
		}
	}
	for _, p := range crdVersionParts {
		if !identicalPerVersion(versions, p.version) {
			continue
		}
		spec[p.top] = versions[0][p.version]
		for _, v := range versions {
			delete(v, p.version)
		}
	}
	if conv := decoded.Child(spec, "conversion"); conv != nil {
		if webhook := decoded.Child(conv, "webhook"); webhook != nil {
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

// identicalPerVersion reports whether every version sets field key, to the
// same value.
func identicalPerVersion(versions []map[string]any, key string) bool {
	if len(versions) == 0 {
		return false
	}
	for _, v := range versions {
		if isEmptyPart(v[key]) || !reflect.DeepEqual(v[key], versions[0][key]) {
			return false
		}
	}
	return true
}

// isEmptyPart reports whether a version's part is unset as kube-apiserver's
// types see it: absent, null, or an empty list of columns.
func isEmptyPart(v any) bool {
	if l, ok := v.([]any); ok {
		return len(l) == 0
	}
	return v == nil
}

// conversionOf is the Convert of the custom resources of a CRD with spec:
// a call to its conversion webhook, or nil for strategy None.
func (s *Server) conversionOf(spec map[string]any) func(context.Context, map[string]any, string) (map[string]any, error) {
	conv := decoded.Child(spec, "conversion")
	if str(conv, "strategy") != "Webhook" {
		return nil
	}
	var hook struct {
		ClientConfig             webhook.ClientConfig `json:"clientConfig"`
		ConversionReviewVersions []string             `json:"conversionReviewVersions"`
	}
	if b, err := json.Marshal(conv["webhook"]); err == nil {
		_ = json.Unmarshal(b, &hook) // validated when the CRD was written
	}
	return func(ctx context.Context, obj map[string]any, apiVersion string) (map[string]any, error) {
		return s.convertByWebhook(ctx, hook.ClientConfig, hook.ConversionReviewVersions, obj, apiVersion)
	}
}

// convertByWebhook asks a CRD's conversion webhook for obj in apiVersion,
// in a ConversionReview of the first version of versions kubeplay knows.
// What it answers must be the same object (kind, name, namespace, uid):
// its metadata is kept but for labels and annotations, as kube-apiserver
// keeps it. Every failure is kube-apiserver's bare 500, named after obj's
// version and kind.
func (s *Server) convertByWebhook(ctx context.Context, cc webhook.ClientConfig, versions []string, obj map[string]any, apiVersion string) (map[string]any, error) {
	in := schema.FromAPIVersionAndKind(str(obj, "apiVersion"), str(obj, "kind"))
	if str(obj, "apiVersion") == apiVersion {
		return obj, nil
	}
	fail := func(format string, args ...any) error {
		return errBareInternal(fmt.Sprintf("conversion webhook for %v "+format, append([]any{in}, args...)...))
	}
	version, err := webhook.ConversionReviewVersion(versions)
	if err != nil {
		return nil, errBareInternal(err.Error())
	}
	uid := string(uuid.NewUUID())
	body, err := webhook.ConversionReview(version, uid, apiVersion, []map[string]any{obj})
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	endpoint, err := webhook.EndpointOf("", cc, s.resolveService)
	if err != nil {
		return nil, fail("failed: %v", err)
	}
	answer, err := webhook.Post(ctx, endpoint, webhook.ConversionTimeout, body)
	if err != nil {
		return nil, fail("failed: %v", err)
	}
	objs, err := webhook.ConvertedObjects(version, uid, answer)
	if err != nil {
		return nil, fail("failed: %v", err)
	}
	if len(objs) != 1 {
		return nil, fail("returned %d objects, expected 1", len(objs))
	}
	out := objs[0]
	want, _ := schema.ParseGroupVersion(apiVersion)
	got, _ := schema.ParseGroupVersion(str(out, "apiVersion"))
	if got != want {
		return nil, fail("returned invalid object at index 0: invalid groupVersion (expected %v, received %v)", want, got)
	}
	if k := str(out, "kind"); k != in.Kind {
		return nil, fail("returned invalid object at index 0: invalid kind (expected %v, received %v)", in.Kind, k)
	}
	md, outMD := metadata(obj), decoded.Child(out, "metadata")
	for _, k := range []string{"name", "namespace", "uid"} {
		if str(md, k) != str(outMD, k) {
			return nil, fail("returned invalid object: must have the same %s: %v != %v", k, str(md, k), str(outMD, k))
		}
	}
	kept := deepCopyObject(md)
	for _, k := range []string{"labels", "annotations"} {
		delete(kept, k)
		if v, ok := outMD[k].(map[string]any); ok {
			kept[k] = v
		}
	}
	out["metadata"] = kept
	return out, nil
}
