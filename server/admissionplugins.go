package server

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"kubeplay/server/audit"
	"kubeplay/server/catalog"
	"kubeplay/server/defaults"
)

// admitPod runs the LimitRanger, ServiceAccount, Priority and
// DefaultTolerationSeconds plugins on a new Pod in namespace ns (see
// defaults.LimitPod and defaults.AdmitPod). LimitRanger sets the defaults
// now and bounds the resources in the validating phase, as kube-apiserver
// does, so a pod the Priority plugin or validation rejects is rejected
// for that. The ServiceAccount plugin refuses a pod whose ServiceAccount
// does not exist, as kube-apiserver's: in a namespace just created, until
// the serviceaccount controller has made its default one.
func (s *Server) admitPod(ctx context.Context, res *catalog.Resource, ns string, obj object) (func() error, error) {
	spec, _ := obj["spec"].(map[string]any)
	ranges, err := s.limitRanges(ctx, ns)
	if err != nil {
		return nil, err
	}
	rec := audit.FromContext(ctx)
	name := str(metadata(obj), "name")
	var beyondLimits error
	if err := defaults.LimitPod(metadata(obj), spec, ranges); err != nil {
		beyondLimits = apierrors.NewForbidden(res.GroupResource(), name, err)
	}
	rec.Ran(mutating("LimitRanger"), nil)
	validate := func() error {
		return rec.Ran(audit.Stage{Phase: audit.Validating, Plugin: "LimitRanger"}, beyondLimits)
	}
	automount := false
	if !s.noServiceAccountAdmission {
		saName := defaults.PodServiceAccount(spec)
		sa, _, err := s.getObject(ctx, catalog.LookupBuiltin(serviceAccountsGVR), ns, saName)
		switch {
		case apierrors.IsNotFound(err):
			return nil, rec.Ran(mutating("ServiceAccount"), apierrors.NewForbidden(res.GroupResource(), name,
				fmt.Errorf("error looking up service account %s/%s: serviceaccount %q not found", ns, saName, saName)))
		case err != nil:
			return nil, err
		}
		automount = true
		if v, ok := sa["automountServiceAccountToken"].(bool); ok {
			automount = v
		}
	}
	msg := defaults.AdmitPod(spec, automount, GenerateName("kube-api-access-"))
	// AdmitPod runs the three plugins; only Priority rejects.
	if !s.noServiceAccountAdmission {
		rec.Ran(mutating("ServiceAccount"), nil)
	}
	if msg != "" {
		return nil, rec.Ran(mutating("Priority"), apierrors.NewForbidden(res.GroupResource(), name, errors.New(msg)))
	}
	rec.Ran(mutating("Priority"), nil)
	rec.Ran(mutating("DefaultTolerationSeconds"), nil)
	return validate, nil
}

func mutating(plugin string) audit.Stage { return audit.Stage{Phase: audit.Mutating, Plugin: plugin} }

var limitRangesGVR = schema.GroupVersionResource{Version: "v1", Resource: "limitranges"}

// limitRanges are the LimitRanges of namespace ns.
func (s *Server) limitRanges(ctx context.Context, ns string) ([]map[string]any, error) {
	res := catalog.LookupBuiltin(limitRangesGVR)
	list, err := s.store.List(ctx, collectionPrefix(res, ns), "", 0, 0)
	if err != nil {
		return nil, storeError(res, "", err)
	}
	out := make([]map[string]any, 0, len(list.Items))
	for _, kv := range list.Items {
		obj, err := decodeStored(res, kv)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		out = append(out, obj)
	}
	return out, nil
}
