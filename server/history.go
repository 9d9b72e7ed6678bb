package server

import (
	"context"
	"errors"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"kubeplay/store"
)

// Revision is one version of an object that the store still keeps.
type Revision struct {
	// Revision is the store revision that wrote it (its resourceVersion).
	Revision int64
	// Object is the object as the API serves it at the version asked for;
	// nil for the revision that deleted it.
	Object map[string]any
}

// History returns the versions of the object ns/name of resource gvr that
// the store keeps, oldest first, and the compaction horizon: the changes
// at or before it are gone, so the first version is the object as of the
// horizon when it existed then. It reads them as a watch from the horizon
// would replay them, up to the store's current revision.
func (s *Server) History(ctx context.Context, gvr schema.GroupVersionResource, ns, name string) ([]Revision, int64, error) {
	res := s.catalog.Lookup(gvr)
	if res == nil {
		return nil, 0, apierrors.NewNotFound(gvr.GroupResource(), name)
	}
	key := objectKey(res, ns, name)
	horizon, err := s.reg.store.CompactedRevision(ctx)
	if err != nil {
		return nil, 0, err
	}
	var revs []Revision
	add := func(kv store.KeyValue) error {
		obj, err := decodeStored(res, kv)
		if err != nil {
			return err
		}
		revs = append(revs, Revision{Revision: kv.ModRevision, Object: obj})
		return nil
	}
	if horizon > 0 {
		switch kv, err := s.reg.store.Get(ctx, key, horizon); {
		case err == nil:
			if err := add(kv); err != nil {
				return nil, 0, err
			}
		case !errors.Is(err, store.ErrNotFound):
			return nil, 0, err
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := s.reg.store.Watch(ctx, key, horizon)
	if err != nil {
		return nil, 0, err
	}
	defer w.Stop()
	// The progress marker comes after every change up to the current
	// revision: the history is complete when it arrives.
	w.RequestProgress()
	for ev := range w.Events() {
		switch {
		case ev.Type == store.Progress:
			return revs, horizon, nil
		case ev.KV.Key != key: // the prefix also matches longer names
		case ev.Type == store.Deleted:
			revs = append(revs, Revision{Revision: ev.KV.ModRevision})
		default:
			if err := add(ev.KV); err != nil {
				return nil, 0, err
			}
		}
	}
	if err := w.Err(); err != nil {
		return nil, 0, err
	}
	return nil, 0, ctx.Err()
}
