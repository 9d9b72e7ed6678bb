package server

import (
	"context"
	"errors"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"kubeplay/server/catalog"
	"kubeplay/server/defaults"
)

// admitPod runs the built-in mutating admission plugins on a new Pod in
// namespace ns (see defaults.AdmitPod). Unlike kube-apiserver, it admits a
// pod whose service account does not exist: nothing creates a namespace's
// default service account here yet.
func (s *Server) admitPod(ctx context.Context, res *catalog.Resource, ns string, obj object) error {
	if res.Group != "" || res.Resource != "pods" {
		return nil
	}
	spec, _ := obj["spec"].(map[string]any)
	automount := true
	sa, _, err := s.getObject(ctx, s.catalog.Lookup(serviceAccountsGVR), ns, defaults.PodServiceAccount(spec))
	switch {
	case err == nil:
		if v, ok := sa["automountServiceAccountToken"].(bool); ok {
			automount = v
		}
	case !apierrors.IsNotFound(err):
		return err
	}
	if msg := defaults.AdmitPod(spec, automount, generateName("kube-api-access-")); msg != "" {
		return apierrors.NewForbidden(res.GroupResource(), str(metadata(obj), "name"), errors.New(msg))
	}
	return nil
}
