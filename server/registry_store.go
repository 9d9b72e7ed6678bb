package server

import (
	"context"
	"errors"

	"kubeplay/server/catalog"
	"kubeplay/store"
)

// The registry's uses of the store beyond the objects' create, update,
// delete, get and list: the watch, the store's health and revision, and
// the entries that are no API object.

// watch watches the objects of res in ns (all namespaces when ns is "")
// changed after revision after; store.ErrCompacted when that is no longer
// kept.
func (s *registry) watch(ctx context.Context, res *catalog.Resource, ns string, after int64) (store.Watcher, error) {
	return s.store.Watch(ctx, collectionPrefix(res, ns), after)
}

// currentRevision is the store's revision, 0 when it cannot be read.
func (s *registry) currentRevision(ctx context.Context) int64 {
	rev, _ := s.store.CurrentRevision(ctx)
	return rev
}

// storeHealth is nil when the store answers, else why it does not.
func (s *registry) storeHealth(ctx context.Context) error {
	_, err := s.store.CurrentRevision(ctx)
	return err
}

// ownEntry returns the entry stored under key, one of the server's own
// (the cluster CA, the ServiceAccount signing key) that is no API object.
// A missing one is made by newValue and stored, unless another process
// sharing the store did first (then that one is returned); with no
// newValue, it is store.ErrNotFound.
func (s *registry) ownEntry(ctx context.Context, key string, newValue func() ([]byte, error)) (store.KeyValue, error) {
	kv, err := s.store.Get(ctx, key, 0)
	if !errors.Is(err, store.ErrNotFound) || newValue == nil {
		return kv, err
	}
	value, err := newValue()
	if err != nil {
		return store.KeyValue{}, err
	}
	_, err = s.store.Create(ctx, key, value)
	if errors.Is(err, store.ErrExists) {
		return s.store.Get(ctx, key, 0)
	}
	return store.KeyValue{Key: key, Value: value}, err
}

// storeRaw stores value under key as it is, replacing what is there,
// bypassing everything that makes it an object (see PlantUndecodable).
func (s *registry) storeRaw(ctx context.Context, key string, value []byte) error {
	_, err := s.store.Create(ctx, key, value)
	if errors.Is(err, store.ErrExists) {
		_, err = s.store.Update(ctx, key, value, 0)
	}
	return err
}
