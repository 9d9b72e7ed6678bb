package playground

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"kubeplay/server/catalog"
	"kubeplay/store"
)

// objectsRoot is the prefix of every object's store key: the root
// kube-apiserver keeps its objects under in etcd.
const objectsRoot = "/registry/"

// keyPrefix is the store key prefix of res's objects, in every namespace.
func keyPrefix(res *catalog.Resource) string {
	return objectsRoot + catalog.StorageOf(res).Prefix + "/"
}

// builtinKeyPrefix is keyPrefix of the built-in resource gvr, for the
// controllers that watch one built-in resource's keys; it panics if gvr is
// not built in, a mistake the package's tests catch.
func builtinKeyPrefix(gvr schema.GroupVersionResource) string {
	res := catalog.LookupBuiltin(gvr)
	if res == nil {
		panic(fmt.Sprintf("playground: %v is not a built-in resource", gvr))
	}
	return keyPrefix(res)
}

// CountObjects returns how many objects st holds, of every resource.
func CountObjects(ctx context.Context, st store.Store) (int64, error) {
	return st.Count(ctx, objectsRoot)
}

// storeKeys maps the store's keys (/registry/<prefix>/[<namespace>/]<name>,
// the layout kube-apiserver uses in etcd) to the resources served and back,
// following the catalog as custom resources come and go. It is safe for
// concurrent use.
type storeKeys struct {
	catalog *catalog.Catalog

	mu         sync.Mutex
	generation uint64
	prefixes   []string // longest first, so "services/specs/" wins over a shorter prefix
	byPrefix   map[string]*catalog.Resource
	byKind     map[schema.GroupKind]*catalog.Resource
}

func newStoreKeys(cat *catalog.Catalog) *storeKeys { return &storeKeys{catalog: cat} }

// current brings the lookups up to date; it requires k.mu.
func (k *storeKeys) current() {
	gen := k.catalog.Generation()
	if k.byPrefix != nil && gen == k.generation {
		return
	}
	k.generation = gen
	k.prefixes = nil
	k.byPrefix, k.byKind = map[string]*catalog.Resource{}, map[schema.GroupKind]*catalog.Resource{}
	for _, r := range k.catalog.All() {
		p := keyPrefix(r)
		if _, ok := k.byPrefix[p]; !ok {
			k.byPrefix[p] = r
			k.prefixes = append(k.prefixes, p)
		}
		gk := schema.GroupKind{Group: r.Group, Kind: r.Kind}
		if _, ok := k.byKind[gk]; !ok {
			k.byKind[gk] = r
		}
	}
	slices.SortFunc(k.prefixes, func(a, b string) int { return len(b) - len(a) })
}

// locate returns the resource a store key belongs to and the object's
// namespace and name; res is nil for a key of no resource served.
func (k *storeKeys) locate(key string) (res *catalog.Resource, ns, name string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.current()
	for _, p := range k.prefixes {
		if rest, ok := strings.CutPrefix(key, p); ok {
			res = k.byPrefix[p]
			if res.Namespaced {
				ns, name, _ = strings.Cut(rest, "/")
				return res, ns, name
			}
			return res, "", rest
		}
	}
	return nil, "", ""
}

// ofKind returns the resource served for an owner reference's group and
// kind, or nil.
func (k *storeKeys) ofKind(gk schema.GroupKind) *catalog.Resource {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.current()
	return k.byKind[gk]
}

// apiPath is the URL of an object of res.
func apiPath(res *catalog.Resource, ns, name string) string {
	p := "/api/v1"
	if res.Group != "" {
		p = "/apis/" + res.Group + "/" + res.Version
	}
	if res.Namespaced {
		p += "/namespaces/" + ns
	}
	return p + "/" + res.Resource + "/" + name
}
