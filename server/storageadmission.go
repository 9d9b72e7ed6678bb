package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"kubeplay/internal/jsonmap"
	"kubeplay/server/audit"
	"kubeplay/server/catalog"
	"kubeplay/server/defaults"
)

// The storage admission plugins kube-apiserver runs by default on new
// objects: DefaultStorageClass gives a claim that names no class the
// default one, and StorageObjectInUseProtection adds the finalizers that
// kube-controller-manager's protection controllers remove once a claim, a
// volume or a volume attributes class is no longer in use.

var storageClassesGVR = schema.GroupVersionResource{Group: "storage.k8s.io", Version: "v1", Resource: "storageclasses"}

// The protection finalizers StorageObjectInUseProtection adds.
const (
	claimProtectionFinalizer  = "kubernetes.io/pvc-protection"
	volumeProtectionFinalizer = "kubernetes.io/pv-protection"
	vacProtectionFinalizer    = "kubernetes.io/vac-protection"
)

// admitClaim runs DefaultStorageClass, then StorageObjectInUseProtection,
// on a new PersistentVolumeClaim, and LimitRanger's bounds in the
// validating phase.
func (s *admission) admitClaim(ctx context.Context, res *catalog.Resource, ns string, obj object) (func(podSecurity func() error) error, error) {
	rec := audit.FromContext(ctx)
	if err := rec.Ran(mutating("DefaultStorageClass"), s.defaultStorageClass(ctx, obj)); err != nil {
		return nil, err
	}
	if err := protect(ctx, obj, claimProtectionFinalizer); err != nil {
		return nil, err
	}
	validate := func(podSecurity func() error) error {
		ranges, err := s.limitRanges(ctx, ns)
		if err != nil {
			return err
		}
		if err = defaults.LimitClaim(jsonmap.Child(obj, "spec"), ranges); err != nil {
			err = apierrors.NewForbidden(res.GroupResource(), str(metadata(obj), "name"), err)
		}
		if err := rec.Ran(audit.Stage{Phase: audit.Validating, Plugin: "LimitRanger"}, err); err != nil {
			return err
		}
		return podSecurity()
	}
	return validate, nil
}

// admitVolume runs StorageObjectInUseProtection on a new PersistentVolume.
func admitVolume(_ *admission, ctx context.Context, _ *catalog.Resource, _ string, obj object) (func(func() error) error, error) {
	return nil, protect(ctx, obj, volumeProtectionFinalizer)
}

// admitVolumeAttributesClass runs StorageObjectInUseProtection on a new
// VolumeAttributesClass.
func admitVolumeAttributesClass(_ *admission, ctx context.Context, _ *catalog.Resource, _ string, obj object) (func(func() error) error, error) {
	return nil, protect(ctx, obj, vacProtectionFinalizer)
}

// protect is StorageObjectInUseProtection: it appends finalizer to obj's
// finalizers unless they have it.
func protect(ctx context.Context, obj object, finalizer string) error {
	md := metadata(obj)
	list, _ := md["finalizers"].([]any)
	for _, f := range list {
		if f == finalizer {
			return audit.FromContext(ctx).Ran(mutating("StorageObjectInUseProtection"), nil)
		}
	}
	md["finalizers"] = append(list, finalizer)
	return audit.FromContext(ctx).Ran(mutating("StorageObjectInUseProtection"), nil)
}

// defaultStorageClass gives a new claim that asks for no class (neither
// by spec.storageClassName nor by the beta annotation) the default one.
func (s *admission) defaultStorageClass(ctx context.Context, obj object) error {
	spec, _ := obj["spec"].(map[string]any)
	if _, named := spec["storageClassName"]; spec == nil || named {
		return nil
	}
	if annotations, _ := metadata(obj)["annotations"].(map[string]any); annotations != nil {
		if _, named := annotations["volume.beta.kubernetes.io/storage-class"]; named {
			return nil
		}
	}
	name, err := s.newestDefault(ctx, storageClassesGVR, isDefaultClass)
	if name != "" {
		spec["storageClassName"] = name
	}
	return err
}

// newestDefault names the default class among the cluster-scoped objects
// of gvr, those whose annotations isDefault accepts: the newest, and of
// those created in the same second the first by name ("" if none), as
// DefaultStorageClass and DefaultIngressClass choose.
func (s *admission) newestDefault(ctx context.Context, gvr schema.GroupVersionResource, isDefault func(annotations map[string]string) bool) (string, error) {
	res := catalog.LookupBuiltin(gvr)
	list, err := s.store.List(ctx, collectionPrefix(res, ""), "", 0, 0)
	if err != nil {
		return "", storeError(res, "", err)
	}
	var name, newest string
	for _, kv := range list.Items {
		var class struct {
			Metadata struct {
				Name              string            `json:"name"`
				CreationTimestamp string            `json:"creationTimestamp"`
				Annotations       map[string]string `json:"annotations"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(kv.Value, &class); err != nil {
			return "", apierrors.NewInternalError(fmt.Errorf("stored object %s is corrupt: %w", kv.Key, err))
		}
		md := class.Metadata
		if !isDefault(md.Annotations) {
			continue
		}
		// RFC 3339 times of one zone order as strings; the list is by name.
		if name == "" || md.CreationTimestamp > newest {
			name, newest = md.Name, md.CreationTimestamp
		}
	}
	return name, nil
}

// isDefaultClass reports whether a StorageClass's annotations make it a
// default class.
func isDefaultClass(annotations map[string]string) bool {
	return annotations["storageclass.kubernetes.io/is-default-class"] == "true" ||
		annotations["storageclass.beta.kubernetes.io/is-default-class"] == "true"
}

// admitClaimChange is PersistentVolumeClaimResize: a claim's storage
// request may grow only if the StorageClass it names, the same before and
// after, allows volume expansion. (Its other refusal, of a claim not
// bound, never shows: the claim's validation refuses that growth first.)
func admitClaimChange(s *admission, ctx context.Context, req *request, obj, old object) error {
	if req.subresource != "" {
		return nil
	}
	var refusal error
	if grown, was := claimStorage(obj), claimStorage(old); grown.Cmp(was) > 0 {
		class := claimClass(obj)
		allowed := false
		if class != "" && class == claimClass(old) {
			sc, _, err := s.getObject(ctx, catalog.LookupBuiltin(storageClassesGVR), "", class)
			if err != nil && !apierrors.IsNotFound(err) {
				return err
			}
			allowed = sc["allowVolumeExpansion"] == true
		}
		if !allowed {
			refusal = apierrors.NewForbidden(req.res.GroupResource(), req.name, errors.New(
				"only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize"))
		}
	}
	return audit.FromContext(ctx).Ran(validating("PersistentVolumeClaimResize"), refusal)
}

// claimStorage is the storage a claim requests.
func claimStorage(claim object) resource.Quantity {
	q, _ := jsonmap.Quantity(jsonmap.Child(claim, "spec", "resources", "requests")["storage"])
	return q
}

// claimClass is the StorageClass a claim names: by the beta annotation,
// else by spec.storageClassName.
func claimClass(claim object) string {
	if class, ok := jsonmap.Child(claim, "metadata", "annotations")["volume.beta.kubernetes.io/storage-class"].(string); ok {
		return class
	}
	return str(jsonmap.Child(claim, "spec"), "storageClassName")
}
