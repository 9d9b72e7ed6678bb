package server

import (
	"context"
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"kubeplay/server/defaults"
	"kubeplay/server/validation"
)

// serviceStrategy is the Service's.
var serviceStrategy = strategy{
	createOnUpdate: true, returnsDeletedObject: true, updateSkipsObjectMeta: true,
	validate: validation.Service, validateUpdate: validation.ServiceUpdate,
	selectableFields: withNamespace(map[string]selectableField{"spec.clusterIP": {}, "spec.type": {}}),
	allocate:         allocateServiceAddresses,
}

// allocateServiceAddresses gives a new Service its cluster IP and node
// ports among those the existing Services leave free (see
// defaults.AllocateService). Two creates racing may pick the same free
// address: a sandbox has one writer at a time in practice.
//
// An updated Service (old its stored self) gets the addresses it had and
// the update left out, then those it needs anew (a port added to a
// NodePort Service), as kube-apiserver does after recording who changed
// what: an update that leaves out an allocated field takes it from whoever
// owned it.
func allocateServiceAddresses(s *registry, ctx context.Context, rs *resourceStore, ns, name string, obj, old object, dryRun bool) error {
	self := ""
	if old != nil {
		spec, _ := obj["spec"].(map[string]any)
		oldSpec, _ := old["spec"].(map[string]any)
		defaults.KeepAllocated(spec, oldSpec)
		self = rs.key(ns, name)
	}
	list, err := s.store.List(ctx, rs.collection(""), "", 0, 0)
	if err != nil {
		return storeError(rs.res, str(metadata(obj), "name"), err)
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
		return rs.errInvalid(str(metadata(obj), "name"), errs)
	}
	return nil
}
