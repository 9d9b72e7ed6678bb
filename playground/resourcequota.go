package playground

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"kubeplay/internal/jsonmap"
	"kubeplay/server/catalog"
	"kubeplay/server/inproc"
	"kubeplay/server/quota"
	"kubeplay/store"
)

// resourceQuotaController is kube-controller-manager's ResourceQuota
// controller: it writes a quota's status, hard from its spec and used
// counted from the namespace's objects, when the quota is new or its
// limits change, and when an object it counts goes or uses less (what
// objects add, quota admission charged when they were written). Its keys
// are "<namespace>/<name>" of ResourceQuotas.
type resourceQuotaController struct {
	c       *inproc.Client
	catalog *catalog.Catalog
	keys    *storeKeys
	now     func() time.Time

	// tracks holds, by namespace, the resources each quota (by name)
	// counts, as its spec said when last seen: which quotas a change of
	// an object concerns. Only the event goroutine (resync, keysOf)
	// touches it.
	tracks map[string]map[string][]schema.GroupResource
}

var resourceQuotaDef = controllerDef{name: "resourceQuota", title: "resourcequota controller", serviceAccount: "resourcequota-controller",
	start: func(sb *Sandbox) reconciler {
		cat := sb.api.Catalog()
		return &resourceQuotaController{c: inproc.New(sb.handler, controllerAgent("resourcequota-controller")), catalog: cat,
			keys: newStoreKeys(cat), now: sb.clock.Now, tracks: map[string]map[string][]schema.GroupResource{}}
	}}

var resourceQuotas = coreV1("resourcequotas")

func (rq *resourceQuotaController) resync(ctx context.Context, _ int64) ([]string, error) {
	quotas, err := list(ctx, rq.c, allPath(resourceQuotas))
	if err != nil {
		return nil, err
	}
	rq.tracks = map[string]map[string][]schema.GroupResource{}
	var keys []string
	for _, q := range quotas {
		ns, name := jsonmap.String(q, "metadata", "namespace"), jsonmap.String(q, "metadata", "name")
		rq.track(ns, name, q)
		keys = append(keys, ns+"/"+name)
	}
	return keys, nil
}

// track notes the resources the quota ns/name (nil: gone) counts.
func (rq *resourceQuotaController) track(ns, name string, q jsonmap.Object) {
	if q == nil {
		delete(rq.tracks[ns], name)
		return
	}
	var grs []schema.GroupResource
	for _, r := range quota.Of(q).SpecHard.Names() {
		if gr, ok := quota.Tracked(r); ok {
			grs = append(grs, gr)
		}
	}
	if rq.tracks[ns] == nil {
		rq.tracks[ns] = map[string][]schema.GroupResource{}
	}
	rq.tracks[ns][name] = grs
}

func (rq *resourceQuotaController) keysOf(ev store.Event, q queue) {
	res, ns, name := rq.keys.locate(ev.KV.Key)
	if res == nil || ns == "" {
		return
	}
	gr := res.GroupResource()
	if gr == resourceQuotas.GroupResource() {
		if ev.Type == store.Deleted {
			rq.track(ns, name, nil)
		} else if obj := decode(ev.KV.Value); obj != nil {
			rq.track(ns, name, obj)
			// Status writes that agree with the spec (its own, admission's)
			// say nothing new; one that sets other hard limits is undone at
			// once (kube-controller-manager waits for its periodic resync).
			qu := quota.Of(obj)
			if ev.Prev == nil || !jsonEqual(jsonmap.Child(obj, "spec"), jsonmap.Child(decode(ev.Prev.Value), "spec")) || !quota.Equal(qu.Hard, qu.SpecHard) {
				q.Add(ns + "/" + name)
			}
		}
	}
	var concerned []string
	for quotaName, grs := range rq.tracks[ns] {
		for _, g := range grs {
			if g == gr {
				concerned = append(concerned, quotaName)
				break
			}
		}
	}
	if len(concerned) == 0 || !rq.releases(gr, ev) {
		return
	}
	for _, quotaName := range concerned {
		q.Add(ns + "/" + quotaName)
	}
}

// releases reports whether the change ev of an object of gr can lower
// what it uses: its deletion, or an update that uses less (a pod that
// ended, a service no longer of type NodePort).
func (rq *resourceQuotaController) releases(gr schema.GroupResource, ev store.Event) bool {
	if ev.Type == store.Deleted {
		return true
	}
	if ev.Type != store.Updated || ev.Prev == nil {
		return false
	}
	ev2 := quota.For(gr)
	if ev2 == nil {
		return false
	}
	now := rq.now()
	return !quota.Equal(ev2.Usage(decode(ev.KV.Value), now), ev2.Usage(decode(ev.Prev.Value), now))
}

func decode(value []byte) jsonmap.Object {
	var o jsonmap.Object
	if json.Unmarshal(value, &o) != nil {
		return nil
	}
	return o
}

func (rq *resourceQuotaController) reconcile(ctx context.Context, key string) (time.Duration, error) {
	ns, name, _ := strings.Cut(key, "/")
	// Its role lets it list quotas, not get them (kube-controller-manager's
	// reads its informer's cache).
	found, err := list(ctx, rq.c, workloadCollection("", "resourcequotas", ns)+"?fieldSelector=metadata.name%3D"+url.QueryEscape(name))
	if err != nil || len(found) == 0 || deleting(found[0]) {
		return 0, err
	}
	obj := found[0]
	q := quota.Of(obj)
	used, err := rq.usage(ctx, ns, q)
	if err != nil {
		return 0, err
	}
	// What it could not count keeps the amount last written.
	for name, v := range q.Used {
		if _, ok := used[name]; !ok {
			used[name] = v
		}
	}
	used = quota.Mask(used, q.SpecHard.Names())
	if _, hasHard := jsonmap.Child(obj, "status")["hard"]; hasHard && quota.Equal(q.Hard, q.SpecHard) && q.HasUsed && quota.Equal(used, q.Used) {
		return 0, nil
	}
	before := obj
	obj = copyMap(obj)
	obj["status"] = map[string]any{"hard": q.SpecHard.JSON(), "used": used.JSON()}
	return 0, putStatus(ctx, rq.c, namedPath("", "resourcequotas", ns, name), before, obj)
}

// usage counts what the objects of namespace ns in q's scopes use of the
// resources q limits.
func (rq *resourceQuotaController) usage(ctx context.Context, ns string, q quota.Quota) (quota.List, error) {
	names := q.SpecHard.Names()
	byResource := map[schema.GroupResource][]string{}
	for _, name := range names {
		if gr, ok := quota.Tracked(name); ok {
			byResource[gr] = append(byResource[gr], name)
		}
	}
	used := quota.List{}
	now := rq.now()
	for gr := range byResource {
		ev := quota.For(gr)
		res := rq.served(gr)
		if ev == nil || res == nil || !res.Namespaced {
			continue
		}
		counted := ev.Resources(names)
		for _, name := range counted {
			used = quota.Add(used, quota.List{name: {}})
		}
		group := ""
		if res.Group != "" {
			group = res.Group + "/" + res.Version
		}
		objs, err := list(ctx, rq.c, workloadCollection(group, res.Resource, ns))
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			if ok, err := quota.Applies(ev, q, q.SpecHard, o); err != nil || !ok {
				continue
			}
			used = quota.Add(used, quota.Mask(ev.Usage(o, now), counted))
		}
	}
	return used, nil
}

// served is a resource the API serves for gr, nil if none.
func (rq *resourceQuotaController) served(gr schema.GroupResource) *catalog.Resource {
	for _, r := range rq.catalog.All() {
		if r.GroupResource() == gr {
			return r
		}
	}
	return nil
}
