package playground

import (
	"bytes"
	"context"
	"net/http"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"kubeplay/server/catalog"
	"kubeplay/server/inproc"
	"kubeplay/store"
)

// FinalizerBot is a simulated actor that removes one finalizer from every
// object being deleted once Delay has passed since its deletion was
// requested (its deletionTimestamp, minus its grace period), so that the
// phases of a deletion can be watched unfolding, as when a real
// controller finishes its clean-up.
type FinalizerBot struct {
	Finalizer string        `json:"finalizer"`
	Delay     time.Duration `json:"delay"`
}

// finalizerBotAgent is how the bots identify themselves: they stand for
// whatever controller owns the finalizer, and are simulated.
const finalizerBotAgent = "kubeplay-finalizer-bot/v1.35.4 (simulated)"

// finalizerBots runs the bots of a sandbox. Its keys are store keys of
// objects being deleted that carry a bot's finalizer.
type finalizerBots struct {
	bots  []FinalizerBot
	api   *inproc.Client
	store store.Store
	keys  *storeKeys
	now   func() time.Time
}

func newFinalizerBots(bots []FinalizerBot, api http.Handler, cat *catalog.Catalog, st store.Store, now func() time.Time) *finalizerBots {
	return &finalizerBots{bots: slices.Clone(bots), api: inproc.New(api, finalizerBotAgent), store: st, keys: newStoreKeys(cat), now: now}
}

// concerns reports whether a stored object may have a finalizer of a bot
// to remove, from its bytes alone.
func (b *finalizerBots) concerns(value []byte) bool {
	if !bytes.Contains(value, []byte(`"deletionTimestamp"`)) {
		return false
	}
	return slices.ContainsFunc(b.bots, func(bot FinalizerBot) bool { return bytes.Contains(value, []byte(`"`+bot.Finalizer+`"`)) })
}

func (b *finalizerBots) resync(ctx context.Context, rev int64) ([]string, error) {
	list, err := b.store.List(ctx, objectsRoot, "", 0, rev)
	if err != nil {
		return nil, err
	}
	var keys []string
	for _, kv := range list.Items {
		if b.concerns(kv.Value) {
			keys = append(keys, kv.Key)
		}
	}
	return keys, nil
}

func (b *finalizerBots) keysOf(ev store.Event, q queue) {
	if ev.Type == store.Updated && b.concerns(ev.KV.Value) {
		q.Add(ev.KV.Key)
	}
}

// reconcile removes the finalizers that are due and asks to look again
// when the next one is.
func (b *finalizerBots) reconcile(ctx context.Context, key string) (time.Duration, error) {
	res, ns, name := b.keys.locate(key)
	if res == nil {
		return 0, nil
	}
	var next time.Duration
	_, err := updateObject(ctx, b.api, apiPath(res, ns, name), "", func(obj map[string]any) bool {
		var md metav1.ObjectMeta
		if !decodeMeta(obj, &md) || md.DeletionTimestamp == nil {
			return false
		}
		requested := md.DeletionTimestamp.Time
		if g := md.DeletionGracePeriodSeconds; g != nil {
			requested = requested.Add(-time.Duration(*g) * time.Second)
		}
		changed := false
		for _, bot := range b.bots {
			if !slices.Contains(md.Finalizers, bot.Finalizer) {
				continue
			}
			if wait := requested.Add(bot.Delay).Sub(b.now()); wait > 0 {
				if next == 0 || wait < next {
					next = wait
				}
				continue
			}
			changed = removeFinalizer(obj, bot.Finalizer) || changed
		}
		return changed
	})
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	return next, err
}
