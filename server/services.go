package server

import (
	"context"
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"kubeplay/server/catalog"
	"kubeplay/server/defaults"
)

// allocateServiceAddresses gives a new Service its cluster IP and node
// ports among those the existing Services leave free (see
// defaults.AllocateService). Two creates racing may pick the same free
// address: a sandbox has one writer at a time in practice.
func (s *registry) allocateServiceAddresses(ctx context.Context, res *catalog.Resource, obj object, dryRun bool) error {
	if res.Group != "" || res.Resource != "services" {
		return nil
	}
	return s.allocate(ctx, res, "", obj, dryRun)
}

// keepServiceAddresses gives an updated Service the addresses it had and
// the update left out, then allocates those it needs anew (a port added
// to a NodePort Service), as kube-apiserver does after recording who
// changed what: an update that leaves out an allocated field takes it from
// whoever owned it.
func (s *registry) keepServiceAddresses(ctx context.Context, res *catalog.Resource, ns, name string, obj, old object, dryRun bool) error {
	if res.Group != "" || res.Resource != "services" {
		return nil
	}
	spec, _ := obj["spec"].(map[string]any)
	oldSpec, _ := old["spec"].(map[string]any)
	defaults.KeepAllocated(spec, oldSpec)
	return s.allocate(ctx, res, objectKey(res, ns, name), obj, dryRun)
}

// allocate gives the Service obj its addresses among those of the stored
// Services but the one at key self.
func (s *registry) allocate(ctx context.Context, res *catalog.Resource, self string, obj object, dryRun bool) error {
	list, err := s.store.List(ctx, collectionPrefix(res, ""), "", 0, 0)
	if err != nil {
		return storeError(res, str(metadata(obj), "name"), err)
	}
	var used defaults.Allocated
	for _, kv := range list.Items {
		if kv.Key == self {
			continue
		}
		var svc struct {
			Spec map[string]any `json:"spec"`
		}
		if err := json.Unmarshal(kv.Value, &svc); err != nil {
			return apierrors.NewInternalError(fmt.Errorf("stored object %s is corrupt: %w", kv.Key, err))
		}
		used.Add(svc.Spec)
	}
	spec, _ := obj["spec"].(map[string]any)
	if errs := defaults.AllocateService(spec, used, dryRun); len(errs) > 0 {
		return errInvalid(res, str(metadata(obj), "name"), errs)
	}
	return nil
}
