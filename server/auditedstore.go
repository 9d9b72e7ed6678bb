package server

import (
	"context"

	"kubeplay/server/audit"
	"kubeplay/store"
)

// auditedStore notes in each request's audit record the revisions it
// wrote, so that an object's history can name the request behind each of
// its versions.
type auditedStore struct{ store.Store }

func (s auditedStore) Create(ctx context.Context, key string, value []byte) (int64, error) {
	rev, err := s.Store.Create(ctx, key, value)
	if err == nil {
		audit.FromContext(ctx).Wrote(rev)
	}
	return rev, err
}

func (s auditedStore) CreateAll(ctx context.Context, kvs []store.KeyValue) (int64, error) {
	rev, err := s.Store.CreateAll(ctx, kvs)
	if err == nil {
		audit.FromContext(ctx).Wrote(rev)
	}
	return rev, err
}

func (s auditedStore) Update(ctx context.Context, key string, value []byte, expectedRev int64) (int64, error) {
	rev, err := s.Store.Update(ctx, key, value, expectedRev)
	if err == nil {
		audit.FromContext(ctx).Wrote(rev)
	}
	return rev, err
}

func (s auditedStore) Delete(ctx context.Context, key string, expectedRev int64) (int64, store.KeyValue, error) {
	rev, kv, err := s.Store.Delete(ctx, key, expectedRev)
	if err == nil {
		audit.FromContext(ctx).Wrote(rev)
	}
	return rev, kv, err
}
