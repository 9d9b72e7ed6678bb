package server

import (
	"context"
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/uuid"

	"kubeplay/internal/jsonmap"
	"kubeplay/server/apiextensions"
	"kubeplay/server/catalog"
	"kubeplay/server/webhook"
)

// customResources are the resources a CRD serves (apiextensions.Resources),
// its objects converted by its conversion webhook if it has one.
func (s *registry) customResources(crd object) []catalog.Resource {
	out := apiextensions.Resources(crd)
	if convert := s.conversionOf(jsonmap.Child(crd, "spec")); convert != nil {
		for _, r := range out {
			r.Custom.Convert = convert
		}
	}
	return out
}

// conversionOf is the Convert of the custom resources of a CRD with spec:
// a call to its conversion webhook, or nil for strategy None.
func (s *registry) conversionOf(spec map[string]any) func(context.Context, map[string]any, string) (map[string]any, error) {
	conv := jsonmap.Child(spec, "conversion")
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
func (s *registry) convertByWebhook(ctx context.Context, cc webhook.ClientConfig, versions []string, obj map[string]any, apiVersion string) (map[string]any, error) {
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
	endpoint, err := s.endpointOf("", cc)
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
	md, outMD := metadata(obj), jsonmap.Child(out, "metadata")
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
