package server

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"hash/fnv"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/uuid"

	"kubeplay/internal/jsonmap"
	"kubeplay/server/authz"
	"kubeplay/server/catalog"
	"kubeplay/server/defaults"
	"kubeplay/server/fieldmanager"
	"kubeplay/server/releases"
	"kubeplay/store"
)

// systemNamespaces exist in every cluster from the start.
var systemNamespaces = []string{"default", "kube-node-lease", "kube-public", "kube-system"}

// prebuiltBootstrap holds the bootstrap objects (bootstrapObjects) as the
// bootstrap stores them on an empty store, one a line: its key and its
// stored value, separated by a tab. Their uid,
// creationTimestamp and managedFields time are placeholders, which a new
// cluster fills in (prebuiltObjects): every cluster gets uids of its own
// and objects created when it started, and none pays for preparing the
// objects (defaults, managedFields: the field manager's types), most of a
// first start's work. TestBootstrap_prebuilt checks the file is what the
// bootstrap stores, and with -update writes it.
//
//go:generate go test -run TestBootstrap_prebuilt -update .
//go:embed zz_generated_bootstrap.txt
var prebuiltBootstrap string

// The placeholders of prebuiltBootstrap's values, JSON strings: an object's
// uid, its creationTimestamp (by the server's clock) and the time of its
// managedFields entry (by the wall clock, as the field manager's).
const (
	uidPlaceholder     = `"@uid@"`
	createdPlaceholder = `"@created@"`
	managedPlaceholder = `"@managed@"`
)

// prebuilt is one line of prebuiltBootstrap.
type prebuilt struct{ key, value string }

// prebuiltLines splits prebuiltBootstrap once: the start asks for them
// again and again (bootstraps, for the health checks). Callers must not
// modify them.
var prebuiltLines = sync.OnceValue(func() []prebuilt {
	var out []prebuilt
	for line := range strings.Lines(prebuiltBootstrap) {
		if key, value, ok := strings.Cut(strings.TrimSuffix(line, "\n"), "\t"); ok {
			out = append(out, prebuilt{key: key, value: value})
		}
	}
	return out
})

// prebuiltObjects returns the bootstrap objects to store on an empty store,
// created at created (the server's clock) with managedFields of managed
// (the wall clock), each with a new uid.
func prebuiltObjects(created, managed time.Time) []store.KeyValue {
	createdTime := `"` + created.UTC().Format(time.RFC3339) + `"`
	managedTime := `"` + managed.UTC().Format(time.RFC3339) + `"`
	lines := prebuiltLines()
	kvs := make([]store.KeyValue, len(lines))
	for i, p := range lines {
		value := make([]byte, 0, len(p.value)+64)
		rest := p.value
		// Each placeholder once, in this order (TestBootstrap_prebuilt).
		for _, r := range [...][2]string{{uidPlaceholder, `"` + string(uuid.NewUUID()) + `"`}, {createdPlaceholder, createdTime}, {managedPlaceholder, managedTime}} {
			// From the '@': a search for the '"' stops at every string.
			j := strings.Index(rest, r[0][1:]) - 1
			value = append(append(value, rest[:j]...), r[1]...)
			rest = rest[j+len(r[0]):]
		}
		value = append(value, rest...)
		if bytes.Contains(value, []byte(`"@`)) {
			// Status conditions and a second managedFields entry (a
			// FlowSchema's) carry the same times again.
			value = bytes.ReplaceAll(bytes.ReplaceAll(value, []byte(createdPlaceholder), []byte(createdTime)), []byte(managedPlaceholder), []byte(managedTime))
		}
		kvs[i] = store.KeyValue{Key: p.key, Value: value}
	}
	return kvs
}

// bootstrap creates what kube-apiserver creates when it first starts on an
// empty store: the system namespaces, the RBAC bootstrap policy and the
// kubernetes Service. An empty store gets them all at once, prebuilt; a
// store opened again gets those that are missing, if any. Of the local
// APIServices, only those of apiServices (the group versions served now)
// are made here: syncLocalAPIServices sees to the others.
func (s *registry) bootstrap(ctx context.Context, apiServices []object) error {
	wanted := map[string]bool{}
	for _, obj := range apiServices {
		_, key, err := bootstrapKey(obj)
		if err != nil {
			return err
		}
		wanted[key] = true
	}
	// The prebuilt APIServices are those of the group versions served by
	// default (bootstrapObjects).
	apiServicesPrefix := collectionPrefix(catalog.LookupBuiltin(apiServicesGVR), "")
	unwanted := func(key string) bool { return strings.HasPrefix(key, apiServicesPrefix) && !wanted[key] }
	rev, err := s.store.CurrentRevision(ctx)
	if err != nil {
		return err
	}
	if rev == 0 {
		kvs := slices.DeleteFunc(prebuiltObjects(s.now(), time.Now()), func(kv store.KeyValue) bool { return unwanted(kv.Key) })
		_, err := s.store.CreateAll(ctx, kvs)
		if !errors.Is(err, store.ErrExists) {
			return err
		}
		// Something wrote meanwhile: make what is missing one at a time.
	}
	var keys []string
	for _, p := range prebuiltLines() {
		if !unwanted(p.key) {
			keys = append(keys, p.key)
		}
	}
	missing, err := s.missing(ctx, keys)
	if err != nil || len(missing) == 0 {
		return err
	}
	return s.createMissing(ctx, missing)
}

// bootstrapStamp returns the stamp of a store found to hold the bootstrap
// objects (by their keys, as bootstrap checks them), exactly the local
// APIServices apiServices (as syncLocalAPIServices makes them) and no
// CustomResourceDefinition: a hash of what those checks' outcome depends on
// besides the store's contents, and of what the stamp says.
func bootstrapStamp(apiServices []object) int64 {
	h := fnv.New64a()
	h.Write([]byte("bootstrap keys, local APIServices, no CRDs\n"))
	for _, p := range prebuiltLines() {
		h.Write([]byte(p.key))
		h.Write([]byte{'\n'})
	}
	for _, obj := range apiServices {
		hashValue(h, obj)
	}
	return int64(h.Sum64())
}

// hashValue writes v, a value of an object as localAPIServices makes them,
// to h (a type they do not hold today, through fmt). By hand: encoding/json's
// first call costs the engine's start in WebAssembly tens of milliseconds
// (compiling its functions).
func hashValue(h hash.Hash, v any) {
	switch v := v.(type) {
	case map[string]any:
		h.Write([]byte{'{'})
		for _, k := range slices.Sorted(maps.Keys(v)) {
			h.Write(strconv.AppendQuote(nil, k))
			hashValue(h, v[k])
		}
		h.Write([]byte{'}'})
	case string:
		h.Write(strconv.AppendQuote(nil, v))
	case int:
		h.Write(strconv.AppendInt(nil, int64(v), 10))
	default:
		fmt.Fprintf(h, "%T%#v", v, v)
	}
}

// bootstrapChecked reports whether the store's stamp says that it holds
// the bootstrap objects, the local APIServices apiServices and no CRD: then
// bootstrap, syncLocalAPIServices and loadCRDs would find nothing to do (see
// Server.StampBootstrap).
func (s *registry) bootstrapChecked(ctx context.Context, apiServices []object) (bool, error) {
	stamp, current, err := s.store.Stamp(ctx)
	if err != nil || !current {
		return false, err
	}
	return stamp == bootstrapStamp(apiServices), nil
}

// missing returns those of keys that are not stored, with one read of the
// keys alone per collection: a Get per object took a quarter of a second in
// a browser, and reading the values too (a List) half of what is left.
func (s *registry) missing(ctx context.Context, keys []string) (map[string]bool, error) {
	missing := map[string]bool{}
	listed := map[string]bool{}
	for _, key := range keys {
		missing[key] = true
	}
	for _, key := range keys {
		prefix := key[:strings.LastIndexByte(key, '/')+1]
		if listed[prefix] {
			continue
		}
		stored, err := s.store.Keys(ctx, prefix)
		if err != nil {
			return nil, err
		}
		for _, key := range stored {
			delete(missing, key)
		}
		listed[prefix] = true
	}
	return missing, nil
}

// createMissing stores the bootstrap objects whose keys are missing, one
// at a time, as any create (defaults, managedFields, the Service's address).
func (s *registry) createMissing(ctx context.Context, missing map[string]bool) error {
	objs, err := bootstrapObjects()
	if err != nil {
		return err
	}
	for _, obj := range objs {
		res, key, err := bootstrapKey(obj)
		if err != nil {
			return err
		}
		if missing[key] {
			if err := s.createBootstrap(ctx, res, key, obj); err != nil {
				return err
			}
		}
	}
	return nil
}

// bootstrapObjects returns what kube-apiserver creates when it first starts,
// as it would be sent to the API, in the order it is stored.
func bootstrapObjects() ([]object, error) {
	var objs []object
	for _, name := range systemNamespaces {
		objs = append(objs, map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name}})
	}
	rbac, err := authz.Bootstrap()
	if err != nil {
		return nil, err
	}
	objs = append(objs, rbac...)
	objs = append(objs, kubernetesService(), defaultServiceCIDR())
	objs = append(objs, kubernetesEndpoints()...)
	var own []object
	if err := json.Unmarshal(apiserverBootstrapJSON, &own); err != nil {
		return nil, err
	}
	return append(append(objs, own...), localAPIServices(defaultBuiltin())...), nil
}

// defaultBuiltin returns the built-in resources served by default: those
// of the newest release, without a runtime configuration.
func defaultBuiltin() []catalog.Resource {
	return (&apiSettings{minor: releases.Newest}).builtin()
}

// apiserverBootstrapJSON holds the objects kube-apiserver v1.35 keeps in
// every cluster besides namespaces, RBAC, the kubernetes Service and the
// local APIServices: the system PriorityClasses and the mandatory and
// suggested API Priority and Fairness configuration
// (PriorityLevelConfigurations, FlowSchemas), as kube-apiserver serves
// them less uid, resourceVersion, creationTimestamp, generation,
// managedFields and status.
//
//go:embed bootstrap_apiserver.json
var apiserverBootstrapJSON []byte

// The writers of the API Priority and Fairness configuration in
// kube-apiserver: the producer creates the objects, the consumer applies
// the FlowSchemas' Dangling condition.
const (
	apfProducer = "api-priority-and-fairness-config-producer-v1"
	apfConsumer = "api-priority-and-fairness-config-consumer-v1"
)

// bootstrapManager is the writer kube-apiserver records for a bootstrap
// object it creates.
func bootstrapManager(res *catalog.Resource) string {
	if res.Group == "flowcontrol.apiserver.k8s.io" {
		return apfProducer
	}
	return "kube-apiserver"
}

// bootstrapStatus sets the status kube-apiserver's own controllers give
// the objects it creates at start: a FlowSchema's Dangling condition, a
// local APIService's Available one (which no managedFields entry records).
func (s *registry) bootstrapStatus(res *catalog.Resource, obj object) (object, error) {
	switch res.GroupVersionKind().GroupKind() {
	case schema.GroupKind{Group: "flowcontrol.apiserver.k8s.io", Kind: "FlowSchema"}:
		return s.applyBootstrapDangling(res, obj)
	case schema.GroupKind{Group: "networking.k8s.io", Kind: "ServiceCIDR"}:
		out, err := s.applyBootstrapStatus(res, obj, "kubernetes-service-cidr-controller", map[string]any{"conditions": []any{map[string]any{
			"type": "Ready", "status": "True", "lastTransitionTime": formatTime(s.now()),
			"message": "Kubernetes default Service CIDR is ready",
		}}})
		if err != nil {
			return nil, err
		}
		// The condition's reason, not applied, is written empty (it has
		// no omitempty).
		jsonmap.List(out, "status", "conditions")[0].(map[string]any)["reason"] = ""
		return out, nil
	case schema.GroupKind{Group: "apiregistration.k8s.io", Kind: "APIService"}:
		obj["status"] = map[string]any{"conditions": []any{map[string]any{
			"type": "Available", "status": "True", "lastTransitionTime": formatTime(s.now()), "reason": "Local",
			"message": "Local APIServices are always available",
		}}}
	}
	return obj, nil
}

// applyBootstrapDangling applies a bootstrap FlowSchema's Dangling
// condition: False, as the priority level it names exists from the start.
func (s *registry) applyBootstrapDangling(res *catalog.Resource, obj object) (object, error) {
	return s.applyBootstrapStatus(res, obj, apfConsumer, map[string]any{"conditions": []any{danglingCondition(obj, false, formatTime(s.now()))}})
}

// applyBootstrapStatus applies status to a bootstrap object through
// /status as manager, as the kube-apiserver controller that keeps it does
// right after its creation: its managedFields entry gets the time of the
// object's first one, as both are written at once.
func (s *registry) applyBootstrapStatus(res *catalog.Resource, obj object, manager string, status map[string]any) (object, error) {
	f, err := s.fieldManager(newResourceStore(res), "status")
	if err != nil {
		return nil, err
	}
	applied := object{"apiVersion": obj["apiVersion"], "kind": obj["kind"], "metadata": map[string]any{"name": str(metadata(obj), "name")}, "status": status}
	out, err := fieldmanager.Apply(f, obj, applied, manager, true)
	if err != nil {
		return nil, err
	}
	entries := asSlice(metadata(out)["managedFields"])
	first := asSlice(metadata(obj)["managedFields"])[0].(map[string]any)["time"]
	for _, e := range entries {
		e.(map[string]any)["time"] = first
	}
	return out, nil
}

// danglingCondition is the Dangling condition kube-apiserver's APF
// configuration consumer gives a FlowSchema whose priority level is
// missing (dangling) or not.
func danglingCondition(obj object, dangling bool, now string) map[string]any {
	level := jsonmap.String(obj, "spec", "priorityLevelConfiguration", "name")
	if dangling {
		return map[string]any{"type": "Dangling", "status": "True", "lastTransitionTime": now, "reason": "NotFound",
			"message": fmt.Sprintf("This FlowSchema references the PriorityLevelConfiguration object named %q but there is no such object", level)}
	}
	return map[string]any{"type": "Dangling", "status": "False", "lastTransitionTime": now, "reason": "Found",
		"message": fmt.Sprintf("This FlowSchema references the PriorityLevelConfiguration object named %q and it exists", level)}
}

// applyDanglingCondition applies, as kube-apiserver's APF configuration
// consumer does, a FlowSchema's Dangling condition.
func (s *registry) applyDanglingCondition(res *catalog.Resource, obj object, dangling bool) (object, error) {
	f, err := s.fieldManager(newResourceStore(res), "status")
	if err != nil {
		return nil, err
	}
	applied := object{"apiVersion": obj["apiVersion"], "kind": obj["kind"], "metadata": map[string]any{"name": str(metadata(obj), "name")},
		"status": map[string]any{"conditions": []any{danglingCondition(obj, dangling, formatTime(s.now()))}}}
	return fieldmanager.Apply(f, obj, applied, apfConsumer, true)
}

// markDangling writes a FlowSchema's Dangling condition after a write of
// it, when it is not already what the APF configuration consumer would
// write: that consumer writes it a moment after kube-apiserver stores a
// new FlowSchema (so that a client's next update of the version it got
// back conflicts, as it would there).
func (s *registry) markDangling(ctx context.Context, res *catalog.Resource, obj object) error {
	if deleting(obj) {
		return nil
	}
	level := jsonmap.String(obj, "spec", "priorityLevelConfiguration", "name")
	levels := catalog.LookupBuiltin(schema.GroupVersionResource{Group: res.Group, Version: res.Version, Resource: "prioritylevelconfigurations"})
	_, err := s.store.Get(ctx, objectKey(levels, "", level), 0)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return storeError(res, str(metadata(obj), "name"), err)
	}
	want := danglingCondition(obj, err != nil, "")
	for _, c := range jsonmap.Items(jsonmap.Child(obj, "status")["conditions"]) {
		if str(c, "type") == "Dangling" && str(c, "status") == str(want, "status") && str(c, "reason") == str(want, "reason") && str(c, "message") == str(want, "message") {
			return nil
		}
	}
	out, err := s.applyDanglingCondition(res, obj, want["status"] == "True")
	if err != nil {
		return err
	}
	name := str(metadata(obj), "name")
	kv, err := s.store.Get(ctx, objectKey(res, "", name), 0)
	if err != nil {
		return storeError(res, name, err)
	}
	_, err = s.commitUpdate(ctx, newResourceStore(res), "", name, out, kv, false)
	return err
}

// levelWritten marks the FlowSchemas naming a priority level just written
// (created, or removed by the update that dropped its last finalizer).
func (s *registry) levelWritten(ctx context.Context, res *catalog.Resource, level object) error {
	return s.markFlowSchemasDangling(ctx, res, str(metadata(level), "name"))
}

// levelsDeleted marks every FlowSchema after a request deleted priority
// levels.
func (s *registry) levelsDeleted(ctx context.Context, res *catalog.Resource) error {
	return s.markFlowSchemasDangling(ctx, res, "")
}

// markFlowSchemasDangling is the work of kube-apiserver's APF configuration
// consumer when a priority level (of resource res) comes or goes: each
// FlowSchema naming level ("": any level) gets the Dangling condition that
// says whether its level exists now, when it does not have it already.
func (s *registry) markFlowSchemasDangling(ctx context.Context, res *catalog.Resource, level string) error {
	schemas := catalog.LookupBuiltin(schema.GroupVersionResource{Group: res.Group, Version: res.Version, Resource: "flowschemas"})
	list, err := s.store.List(ctx, collectionPrefix(schemas, ""), "", 0, 0)
	if err != nil {
		return storeError(schemas, "", err)
	}
	for _, kv := range list.Items {
		obj, err := decodeStored(schemas, kv)
		if err != nil {
			return err
		}
		if level != "" && jsonmap.String(obj, "spec", "priorityLevelConfiguration", "name") != level {
			continue
		}
		// A FlowSchema written meanwhile had its condition written after
		// that write, from the levels as they are now.
		if err := s.markDangling(ctx, schemas, obj); err != nil && !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return nil
}

// bootstrapKey returns the resource and the key of a bootstrap object.
func bootstrapKey(obj object) (*catalog.Resource, string, error) {
	gv, err := schema.ParseGroupVersion(str(obj, "apiVersion"))
	if err != nil {
		return nil, "", err
	}
	kind := str(obj, "kind")
	res := catalog.LookupBuiltinKind(gv.WithKind(kind))
	if res == nil {
		return nil, "", fmt.Errorf("no resource for %s", kind)
	}
	md := metadata(obj)
	return res, objectKey(res, str(md, "namespace"), str(md, "name")), nil
}

// kubernetesService is the Service kube-apiserver keeps in default for
// clients inside the cluster, as it writes it: the service range's first
// address, port 443 to its own secure port (here kube-apiserver's default,
// 6443: kubeplay has no port of its own in a browser).
func kubernetesService() map[string]any {
	return map[string]any{
		"apiVersion": "v1", "kind": "Service",
		"metadata": map[string]any{
			"name": "kubernetes", "namespace": "default",
			"labels": map[string]any{"component": "apiserver", "provider": "kubernetes"},
		},
		"spec": map[string]any{
			"type": "ClusterIP", "clusterIP": defaults.KubernetesServiceIP(), "ipFamilyPolicy": "SingleStack",
			"sessionAffinity": "None",
			"ports":           []any{map[string]any{"name": "https", "port": int64(443), "protocol": "TCP", "targetPort": int64(defaults.APIServerPort)}},
		},
	}
}

// defaultServiceCIDR is the ServiceCIDR kube-apiserver's
// kubernetes-service-cidr-controller keeps for its service range.
func defaultServiceCIDR() map[string]any {
	return map[string]any{
		"apiVersion": "networking.k8s.io/v1", "kind": "ServiceCIDR",
		"metadata": map[string]any{"name": "kubernetes"},
		"spec":     map[string]any{"cidrs": []any{defaults.ServiceCIDR()}},
	}
}

// kubernetesEndpoints are the Endpoints and the EndpointSlice kube-apiserver's
// endpoint reconciler keeps for the kubernetes Service: the API server's
// address and secure port (the Endpoints marked not to be mirrored: the
// reconciler writes the slice itself).
func kubernetesEndpoints() []object {
	return []object{
		{
			"apiVersion": "v1", "kind": "Endpoints",
			"metadata": map[string]any{
				"name": "kubernetes", "namespace": "default",
				"labels": map[string]any{"endpointslice.kubernetes.io/skip-mirror": "true"},
			},
			"subsets": []any{map[string]any{
				"addresses": []any{map[string]any{"ip": defaults.APIServerAddress}},
				"ports":     []any{map[string]any{"name": "https", "port": int64(defaults.APIServerPort), "protocol": "TCP"}},
			}},
		},
		{
			"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
			"metadata": map[string]any{
				"name": "kubernetes", "namespace": "default",
				"labels": map[string]any{"kubernetes.io/service-name": "kubernetes"},
			},
			"addressType": "IPv4",
			"endpoints": []any{map[string]any{
				"addresses":  []any{defaults.APIServerAddress},
				"conditions": map[string]any{"ready": true},
			}},
			"ports": []any{map[string]any{"name": "https", "port": int64(defaults.APIServerPort), "protocol": "TCP"}},
		},
	}
}

// createBootstrap stores obj, a bootstrap object, under key, unless
// something else created it meanwhile.
func (s *registry) createBootstrap(ctx context.Context, res *catalog.Resource, key string, obj object) error {
	rs := newResourceStore(res)
	if err := rs.applyDefaults(obj); err != nil {
		return err
	}
	obj, err := s.trackUpdate(rs, "", nil, obj, bootstrapManager(res))
	if err != nil {
		return err
	}
	if allocate := rs.strategy.allocate; allocate != nil {
		if err := allocate(s, ctx, rs, "", str(metadata(obj), "name"), obj, nil, false); err != nil {
			return err
		}
	}
	s.prepareForCreate(rs, obj)
	if obj, err = s.bootstrapStatus(res, obj); err != nil {
		return err
	}
	value, err := rs.encode(obj)
	if err != nil {
		return err
	}
	_, err = s.store.Create(ctx, key, value)
	if err != nil && !errors.Is(err, store.ErrExists) {
		return err
	}
	return nil
}
