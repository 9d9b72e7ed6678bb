package server

import (
	"context"
	"errors"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"kubeplay/server/audit"
	"kubeplay/server/catalog"
	"kubeplay/server/quota"
	"kubeplay/store"
)

var resourceQuotasGVR = schema.GroupVersionResource{Version: "v1", Resource: "resourcequotas"}

// quotaAttempts bounds how often admission charges the quotas again when
// one changed while it charged them, as kube-apiserver retries.
const quotaAttempts = 4

// errQuotaChanged says a quota changed between reading and charging it.
var errQuotaChanged = errors.New("quota changed")

// admitQuota is kube-apiserver's ResourceQuota admission plugin, the last
// validating one: a write of obj (old nil for a create) that adds to what
// a quota of its namespace counts is refused if it goes over the quota's
// status.hard, else charged to the quota's status.used (through its status
// subresource, as kube-apiserver writes it) before the object is stored —
// but not by a dry run.
func (s *admission) admitQuota(ctx context.Context, req *request, obj, old object, dryRun bool) error {
	if req.namespace == "" || obj == nil {
		return nil
	}
	ev := quota.For(req.res.GroupResource())
	if ev == nil || !ev.Handles(req.subresource, obj, old) {
		return nil
	}
	// Writes are charged one at a time (kube-apiserver's quota evaluator
	// takes those of a namespace one at a time).
	s.quotaMu.Lock()
	defer s.quotaMu.Unlock()
	var err error
	charged := map[string]bool{}
	for range quotaAttempts {
		if err = s.chargeQuotas(ctx, req, ev, obj, old, dryRun, charged); !errors.Is(err, errQuotaChanged) {
			break
		}
	}
	if errors.Is(err, errQuotaChanged) {
		err = apierrors.NewConflict(req.res.GroupResource(), str(metadata(obj), "name"), err)
	}
	return audit.FromContext(ctx).Ran(audit.Stage{Phase: audit.Validating, Plugin: "ResourceQuota"}, err)
}

// chargeQuotas charges the write to the quotas of its namespace as they
// are now, but those already charged (by name), which it adds to;
// errQuotaChanged says one changed before it was charged: the others are.
func (s *admission) chargeQuotas(ctx context.Context, req *request, ev quota.Evaluator, obj, old object, dryRun bool, charged map[string]bool) error {
	res := catalog.LookupBuiltin(resourceQuotasGVR)
	list, err := s.store.List(ctx, collectionPrefix(res, req.namespace), "", 0, 0)
	if err != nil {
		return storeError(res, "", err)
	}
	var quotas []quota.Quota
	var kvs []store.KeyValue
	for _, kv := range list.Items {
		q, err := decodeStored(res, kv)
		if err != nil {
			return apierrors.NewInternalError(err)
		}
		if q := quota.Of(q); !charged[q.Name] {
			quotas, kvs = append(quotas, q), append(kvs, kv)
		}
	}
	if len(quotas) == 0 {
		return nil
	}
	usage, err := quota.Charge(quotas, ev, req.subresource, obj, old, s.now())
	var refused *quota.Forbidden
	if errors.As(err, &refused) {
		return apierrors.NewForbidden(req.res.GroupResource(), str(metadata(obj), "name"), refused)
	}
	if err != nil || dryRun {
		return err
	}
	var changed error
	for i, used := range usage {
		kv := kvs[i]
		wr := &write{request: &request{version: res.Version, namespace: req.namespace, resource: res.Resource, name: quotas[i].Name,
			subresource: "status", verb: "update", res: res, store: newResourceStore(res)}, manager: "kube-apiserver"}
		_, _, err := s.updateWith(ctx, wr, func(live object, rev int64) (object, error) {
			if rev != kv.ModRevision {
				return nil, errQuotaChanged
			}
			live = deepCopyObject(live)
			status, _ := live["status"].(map[string]any)
			if status == nil {
				status = map[string]any{}
				live["status"] = status
			}
			status["used"] = used.JSON()
			return live, nil
		})
		switch {
		case errors.Is(err, errQuotaChanged):
			changed = err
		case err == nil || apierrors.IsNotFound(err): // deleted meanwhile: nothing to charge
			charged[quotas[i].Name] = true
		default:
			return err
		}
	}
	return changed
}
