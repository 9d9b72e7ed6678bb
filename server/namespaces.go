package server

import (
	"context"
	"errors"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"kubeplay/store"
)

var namespacesGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

// systemNamespaces exist in every cluster from the start.
var systemNamespaces = []string{"default", "kube-node-lease", "kube-public", "kube-system"}

// bootstrap creates what kube-apiserver creates when it first starts on an
// empty store.
func (s *Server) bootstrap(ctx context.Context) error {
	res := s.catalog.Lookup(namespacesGVR)
	for _, name := range systemNamespaces {
		obj := object{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name}}
		s.prepareForCreate(res, obj)
		value, err := encodeForStorage(res, obj)
		if err != nil {
			return err
		}
		if _, err := s.store.Create(ctx, objectKey(res, "", name), value); err != nil && !errors.Is(err, store.ErrExists) {
			return err
		}
	}
	return nil
}
