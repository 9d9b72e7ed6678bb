package catalog

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"maps"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"kubeplay/server/celeval"
	"kubeplay/server/structural"
)

// Resource is one resource type in one group version.
type Resource struct {
	Group, Version, Kind string
	// Resource is the plural name used in URLs.
	Resource     string
	Singular     string
	Namespaced   bool
	Verbs        []string
	ShortNames   []string
	Categories   []string
	Subresources []Subresource
	// Custom is set for the resources a CustomResourceDefinition defines.
	Custom *Custom
	// APIService, for a resource an extension API server serves (which
	// kube-apiserver proxies to), names its APIService
	// ("v1beta1.metrics.k8s.io"); it stores nothing.
	APIService string
}

// Custom is what a CustomResourceDefinition says of one served version.
type Custom struct {
	// CRD is the definition's name ("widgets.example.com").
	CRD string
	// StorageVersion is the version objects are stored in, StorageSchema
	// its schema, which prunes what is stored.
	StorageVersion string
	StorageSchema  *structural.Schema
	// ListKind is the kind of lists ("WidgetList").
	ListKind string
	// Schema is the version's structural schema; RawSchema its
	// openAPIV3Schema as written (decoded JSON).
	Schema    *structural.Schema
	RawSchema map[string]any
	// Rules are the schema's compiled x-kubernetes-validations (nil if none).
	Rules *celeval.Rules
	// Columns are the additionalPrinterColumns.
	Columns []PrinterColumn
	// SelectableFields are the field selectors' paths besides metadata.name
	// and metadata.namespace ("spec.color").
	SelectableFields []string
	// Scale holds the paths of the scale subresource, if any.
	Scale *Scale
	// PreserveUnknownFields is the CRD's spec.preserveUnknownFields
	// (apiextensions.k8s.io/v1beta1's default): its objects are not
	// pruned, and their field manager tracks the fields the schema does not
	// know.
	PreserveUnknownFields bool
	// Terminating is set once the CRD is deleted: its objects are being
	// deleted, and no new one may be created.
	Terminating bool
	// Convert, for a CRD whose conversion strategy is Webhook, converts
	// one of its objects to apiVersion by calling the webhook; its error
	// is the request's. Nil for strategy None: only apiVersion changes.
	Convert func(ctx context.Context, obj map[string]any, apiVersion string) (map[string]any, error)
}

// PrinterColumn is one of a CRD's additionalPrinterColumns.
type PrinterColumn struct {
	Name, Type, Format, Description, JSONPath string
	Priority                                  int32
}

// Scale holds a CRD's scale subresource paths (".spec.replicas").
type Scale struct {
	SpecReplicasPath, StatusReplicasPath, LabelSelectorPath string
}

// Subresource is a resource's subresource; Group, Version and Kind are those of
// the object it reads and writes (autoscaling/v1 Scale for "scale").
type Subresource struct {
	Name                 string
	Group, Version, Kind string
	Verbs                []string
}

// GroupVersionResource of r.
func (r *Resource) GroupVersionResource() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: r.Group, Version: r.Version, Resource: r.Resource}
}

// GroupVersionKind of r.
func (r *Resource) GroupVersionKind() schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: r.Group, Version: r.Version, Kind: r.Kind}
}

// GroupResource of r, as error messages name it ("deployments.apps").
func (r *Resource) GroupResource() schema.GroupResource {
	return schema.GroupResource{Group: r.Group, Resource: r.Resource}
}

// APIVersion is the apiVersion field of r's objects ("v1", "apps/v1").
func (r *Resource) APIVersion() string {
	return r.GroupVersionKind().GroupVersion().String()
}

// HasVerb reports whether r supports verb.
func (r *Resource) HasVerb(verb string) bool { return slices.Contains(r.Verbs, verb) }

// Storage says where a resource's objects live. Resources served in several
// group versions share one storage (and one key space).
type Storage struct {
	// Group, Version and Kind of the encoding objects are stored in.
	Group, Version, Kind string
	// Prefix is the key prefix under /registry/, as kube-apiserver lays out etcd.
	Prefix string
}

// StorageOf returns where r's objects are stored.
func StorageOf(r *Resource) Storage {
	if r.Custom != nil {
		// kube-apiserver keeps custom objects under /registry/<group>/<plural>.
		return Storage{Group: r.Group, Version: r.Custom.StorageVersion, Kind: r.Kind, Prefix: r.Group + "/" + r.Resource}
	}
	if r.APIService != "" {
		// Nothing is stored; a prefix of its own keeps it from passing for
		// a built-in resource of the same plural (metrics.k8s.io's pods).
		return Storage{Group: r.Group, Version: r.Version, Kind: r.Kind, Prefix: r.Group + "/" + r.Resource}
	}
	s := Storage{Group: r.Group, Version: r.Version, Kind: r.Kind, Prefix: r.Resource}
	if p, ok := storagePrefixes[r.GroupResource()]; ok {
		s.Prefix = p
	}
	if gv, ok := sharedStorage[r.GroupResource()]; ok {
		s.Group, s.Version = gv.Group, gv.Version
	}
	return s
}

// StorageVersionHash is the discovery field clients use to notice a change of
// storage version: the first 8 bytes of the SHA-256 of "group/version/kind"
// of the storage encoding, base64-encoded.
func (s Storage) StorageVersionHash() string {
	sum := sha256.Sum256([]byte(s.Group + "/" + s.Version + "/" + s.Kind))
	return base64.StdEncoding.EncodeToString(sum[:8])
}

// storagePrefixes lists the resources kube-apiserver stores under a prefix
// other than their plural name.
var storagePrefixes = map[schema.GroupResource]string{
	{Resource: "services"}:                                                 "services/specs",
	{Resource: "endpoints"}:                                                "services/endpoints",
	{Resource: "nodes"}:                                                    "minions",
	{Resource: "replicationcontrollers"}:                                   "controllers",
	{Group: "networking.k8s.io", Resource: "ingresses"}:                    "ingress",
	{Group: "extensions", Resource: "ingresses"}:                           "ingress",
	{Group: "events.k8s.io", Resource: "events"}:                           "events",
	{Group: "apiregistration.k8s.io", Resource: "apiservices"}:             "apiregistration.k8s.io/apiservices",
	{Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions"}: "apiextensions.k8s.io/customresourcedefinitions",
}

// sharedStorage lists resources stored in another group version's encoding.
var sharedStorage = map[schema.GroupResource]schema.GroupVersion{
	{Group: "events.k8s.io", Resource: "events"}:                           {Version: "v1"},
	{Group: "autoscaling", Resource: "horizontalpodautoscalers"}:           {Group: "autoscaling", Version: "v2"},
	{Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions"}: {Group: "apiextensions.k8s.io", Version: "v1beta1"},
	// GA in v1.34, still stored as v1beta1 in v1.35.
	{Group: "storage.k8s.io", Resource: "volumeattributesclasses"}: {Group: "storage.k8s.io", Version: "v1beta1"},
	// Beta versions older releases serve beside the GA one, whose encoding
	// kubeplay stores whatever release it emulates.
	{Group: "batch", Resource: "cronjobs"}:                                               {Group: "batch", Version: "v1"},
	{Group: "policy", Resource: "poddisruptionbudgets"}:                                  {Group: "policy", Version: "v1"},
	{Group: "extensions", Resource: "ingresses"}:                                         {Group: "networking.k8s.io", Version: "v1"},
	{Group: "networking.k8s.io", Resource: "ingresses"}:                                  {Group: "networking.k8s.io", Version: "v1"},
	{Group: "networking.k8s.io", Resource: "ingressclasses"}:                             {Group: "networking.k8s.io", Version: "v1"},
	{Group: "networking.k8s.io", Resource: "ipaddresses"}:                                {Group: "networking.k8s.io", Version: "v1"},
	{Group: "networking.k8s.io", Resource: "servicecidrs"}:                               {Group: "networking.k8s.io", Version: "v1"},
	{Group: "admissionregistration.k8s.io", Resource: "validatingwebhookconfigurations"}: {Group: "admissionregistration.k8s.io", Version: "v1"},
	{Group: "admissionregistration.k8s.io", Resource: "mutatingwebhookconfigurations"}:   {Group: "admissionregistration.k8s.io", Version: "v1"},
	{Group: "certificates.k8s.io", Resource: "certificatesigningrequests"}:               {Group: "certificates.k8s.io", Version: "v1"},
	{Group: "discovery.k8s.io", Resource: "endpointslices"}:                              {Group: "discovery.k8s.io", Version: "v1"},
	{Group: "coordination.k8s.io", Resource: "leases"}:                                   {Group: "coordination.k8s.io", Version: "v1"},
	{Group: "flowcontrol.apiserver.k8s.io", Resource: "flowschemas"}:                     {Group: "flowcontrol.apiserver.k8s.io", Version: "v1"},
	{Group: "flowcontrol.apiserver.k8s.io", Resource: "prioritylevelconfigurations"}:     {Group: "flowcontrol.apiserver.k8s.io", Version: "v1"},
	{Group: "node.k8s.io", Resource: "runtimeclasses"}:                                   {Group: "node.k8s.io", Version: "v1"},
	{Group: "scheduling.k8s.io", Resource: "priorityclasses"}:                            {Group: "scheduling.k8s.io", Version: "v1"},
	{Group: "storage.k8s.io", Resource: "csidrivers"}:                                    {Group: "storage.k8s.io", Version: "v1"},
	{Group: "storage.k8s.io", Resource: "csinodes"}:                                      {Group: "storage.k8s.io", Version: "v1"},
	{Group: "storage.k8s.io", Resource: "csistoragecapacities"}:                          {Group: "storage.k8s.io", Version: "v1"},
	{Group: "storage.k8s.io", Resource: "storageclasses"}:                                {Group: "storage.k8s.io", Version: "v1"},
	{Group: "storage.k8s.io", Resource: "volumeattachments"}:                             {Group: "storage.k8s.io", Version: "v1"},
	{Group: "rbac.authorization.k8s.io", Resource: "roles"}:                              {Group: "rbac.authorization.k8s.io", Version: "v1"},
	{Group: "rbac.authorization.k8s.io", Resource: "rolebindings"}:                       {Group: "rbac.authorization.k8s.io", Version: "v1"},
	{Group: "rbac.authorization.k8s.io", Resource: "clusterroles"}:                       {Group: "rbac.authorization.k8s.io", Version: "v1"},
	{Group: "rbac.authorization.k8s.io", Resource: "clusterrolebindings"}:                {Group: "rbac.authorization.k8s.io", Version: "v1"},
}

// laterShortNames holds short names the discovery documents the generator
// reads lack: of types that became GA after they were captured, or that
// only older releases served.
var laterShortNames = map[schema.GroupResource][]string{
	{Group: "storage.k8s.io", Resource: "volumeattributesclasses"}: {"vac"},
	{Group: "policy", Resource: "podsecuritypolicies"}:             {"psp"},
}

// NameRule is the rule an object name must follow.
type NameRule int

const (
	// DNSSubdomain: RFC 1123 subdomain, at most 253 characters (most types).
	DNSSubdomain NameRule = iota
	// LongName: DNSSubdomain as kube-apiserver's declarative validation
	// words it (its length in bytes).
	LongName
	// DNSLabel: RFC 1123 label, at most 63 characters.
	DNSLabel
	// DNS1035Label: RFC 1035 label (starts with a letter), at most 63 characters.
	DNS1035Label
	// PathSegment: anything that can be one URL path segment (not ".", "..",
	// and without "/" or "%").
	PathSegment
	// IPAddress: a valid IP address.
	IPAddress
	// Unchecked: any name.
	Unchecked
)

// nameRules lists the types whose names do not follow DNSSubdomain, as
// answered by kube-apiserver v1.35.
var nameRules = map[schema.GroupResource]NameRule{
	{Resource: "namespaces"}:                                               DNSLabel,
	{Group: "apps", Resource: "statefulsets"}:                              DNSLabel,
	{Resource: "services"}:                                                 DNS1035Label,
	{Resource: "replicationcontrollers"}:                                   LongName,
	{Group: "resource.k8s.io", Resource: "deviceclasses"}:                  LongName,
	{Resource: "events"}:                                                   PathSegment,
	{Group: "policy", Resource: "poddisruptionbudgets"}:                    PathSegment,
	{Group: "rbac.authorization.k8s.io", Resource: "roles"}:                PathSegment,
	{Group: "rbac.authorization.k8s.io", Resource: "clusterroles"}:         PathSegment,
	{Group: "rbac.authorization.k8s.io", Resource: "rolebindings"}:         PathSegment,
	{Group: "rbac.authorization.k8s.io", Resource: "clusterrolebindings"}:  PathSegment,
	{Group: "networking.k8s.io", Resource: "ipaddresses"}:                  IPAddress,
	{Group: "certificates.k8s.io", Resource: "certificatesigningrequests"}: Unchecked,
	// An APIService is named after its group version (its validation).
	{Group: "apiregistration.k8s.io", Resource: "apiservices"}: Unchecked,
}

// NameRuleOf returns the rule r's object names must follow.
func NameRuleOf(r *Resource) NameRule { return nameRules[r.GroupResource()] }

// groupOrder is the order in which kube-apiserver v1.35 lists its groups in
// discovery (its registration priority; extensions, which older releases
// served, came second); groups not listed sort after, by name.
var groupOrder = []string{
	"", "apiregistration.k8s.io", "extensions", "apps", "events.k8s.io", "authentication.k8s.io",
	"authorization.k8s.io", "autoscaling", "batch", "certificates.k8s.io", "networking.k8s.io",
	"policy", "rbac.authorization.k8s.io", "storage.k8s.io", "admissionregistration.k8s.io",
	"apiextensions.k8s.io", "scheduling.k8s.io", "coordination.k8s.io", "node.k8s.io",
	"discovery.k8s.io", "resource.k8s.io", "flowcontrol.apiserver.k8s.io",
}

// versionPriority orders versions within a group, preferred first, as
// Kubernetes does: GA before beta before alpha, higher numbers first.
func versionPriority(a, b string) int {
	ka, kb := versionKey(a), versionKey(b)
	for i := range ka {
		if ka[i] != kb[i] {
			return kb[i] - ka[i]
		}
	}
	return strings.Compare(a, b)
}

func versionKey(v string) [3]int {
	var major, minor int
	stability := 3 // GA
	rest := strings.TrimPrefix(v, "v")
	i := 0
	for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
		major = major*10 + int(rest[i]-'0')
		i++
	}
	switch {
	case strings.HasPrefix(rest[i:], "beta"):
		stability, i = 2, i+4
	case strings.HasPrefix(rest[i:], "alpha"):
		stability, i = 1, i+5
	}
	for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
		minor = minor*10 + int(rest[i]-'0')
		i++
	}
	return [3]int{stability, major, minor}
}

// Catalog is the set of resource types served, with lookups: the built-in
// types, fixed, and the custom ones, which change as CRDs are written. It
// is safe for concurrent use; the resources it returns are never modified
// (a changed CRD replaces them).
type Catalog struct {
	mu        sync.RWMutex
	builtin   []*Resource
	custom    map[string][]*Resource // by CRD name
	extension map[string][]*Resource // by APIService name
	resources []*Resource
	byGVR     map[schema.GroupVersionResource]*Resource
	groups    []Group
	// generation counts the changes of the set of resources served.
	generation uint64
}

// Group is one API group with its versions, preferred first.
type Group struct {
	Name     string
	Versions []string
}

// New builds a catalog of the given resources.
func New(resources []Resource) *Catalog {
	c := &Catalog{custom: map[string][]*Resource{}, extension: map[string][]*Resource{}}
	c.SetBuiltin(resources)
	return c
}

// SetBuiltin replaces the built-in resources (a change of the served group
// versions, as kube-apiserver's --runtime-config makes).
func (c *Catalog) SetBuiltin(resources []Resource) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.builtin = nil
	for i := range resources {
		r := &resources[i]
		if names, ok := laterShortNames[r.GroupResource()]; ok && len(r.ShortNames) == 0 {
			r.ShortNames = names
		}
		c.builtin = append(c.builtin, r)
	}
	c.index()
}

// SetCustom replaces the resources defined by the CRD named crd (none
// removes them).
func (c *Catalog) SetCustom(crd string, resources []Resource) {
	c.mu.Lock()
	defer c.mu.Unlock()
	setResources(c.custom, crd, resources)
	c.index()
}

// SetExtension replaces the resources an extension API server serves
// through the APIService named apiService (none removes them).
func (c *Catalog) SetExtension(apiService string, resources []Resource) {
	c.mu.Lock()
	defer c.mu.Unlock()
	setResources(c.extension, apiService, resources)
	c.index()
}

func setResources(m map[string][]*Resource, key string, resources []Resource) {
	if len(resources) == 0 {
		delete(m, key)
		return
	}
	list := make([]*Resource, len(resources))
	for i := range resources {
		list[i] = &resources[i]
	}
	m[key] = list
}

// index rebuilds the lookups; c.mu is held for writing (or c is new).
func (c *Catalog) index() {
	c.generation++
	c.resources = slices.Clone(c.builtin)
	for _, name := range slices.Sorted(maps.Keys(c.custom)) {
		c.resources = append(c.resources, c.custom[name]...)
	}
	for _, name := range slices.Sorted(maps.Keys(c.extension)) {
		c.resources = append(c.resources, c.extension[name]...)
	}
	c.byGVR = map[schema.GroupVersionResource]*Resource{}
	c.groups = nil
	versions := map[string][]string{}
	for _, r := range c.resources {
		c.byGVR[r.GroupVersionResource()] = r
		if !slices.Contains(versions[r.Group], r.Version) {
			versions[r.Group] = append(versions[r.Group], r.Version)
		}
	}
	for name, vs := range versions {
		slices.SortFunc(vs, versionPriority)
		c.groups = append(c.groups, Group{Name: name, Versions: vs})
	}
	// Behind the custom resources' groups, as the APIService of an
	// extension API server (metrics-server's priority minimum is 100, a
	// CRD's 1000) sorts behind theirs.
	extensionGroups := map[string]bool{}
	for _, list := range c.extension {
		for _, r := range list {
			extensionGroups[r.Group] = true
		}
	}
	rank := func(group string) int {
		if extensionGroups[group] {
			return len(groupOrder) + 1
		}
		return groupRank(group)
	}
	slices.SortFunc(c.groups, func(a, b Group) int {
		ia, ib := rank(a.Name), rank(b.Name)
		if ia != ib {
			return ia - ib
		}
		return strings.Compare(a.Name, b.Name)
	})
}

func groupRank(group string) int {
	if i := slices.Index(groupOrder, group); i >= 0 {
		return i
	}
	return len(groupOrder)
}

// Builtin returns the built-in types for which keep(r) is true.
func Builtin(keep func(*Resource) bool) []Resource {
	var out []Resource
	for _, r := range builtin {
		if keep(&r) {
			out = append(out, r)
		}
	}
	return out
}

// LookupBuiltin returns the built-in resource for gvr whether or not it is
// served, or nil: what the server reads and writes for itself (RBAC rules,
// admission policies, conversions between versions) whatever the emulated
// release or runtime configuration serves. The caller must not modify it.
func LookupBuiltin(gvr schema.GroupVersionResource) *Resource { return builtinIndex()[gvr] }

var builtinIndex = sync.OnceValue(func() map[schema.GroupVersionResource]*Resource {
	m := make(map[schema.GroupVersionResource]*Resource, len(builtin))
	for i := range builtin {
		m[builtin[i].GroupVersionResource()] = &builtin[i]
	}
	return m
})

// LookupBuiltinKind returns the built-in resource of kind gvk whether or
// not it is served, or nil. The caller must not modify it.
func LookupBuiltinKind(gvk schema.GroupVersionKind) *Resource {
	for i := range builtin {
		if builtin[i].GroupVersionKind() == gvk {
			return &builtin[i]
		}
	}
	return nil
}

// SharesStorage reports whether objects of the built-in resource r are
// served in other versions (or groups) too, stored once and converted.
func SharesStorage(r *Resource) bool {
	if r.Custom != nil {
		return false
	}
	for _, gvr := range builtinByPrefix()[StorageOf(r).Prefix] {
		if gvr != r.GroupVersionResource() {
			return true
		}
	}
	return false
}

// builtinByPrefix lists the built-in resources by storage prefix, made once:
// SharesStorage is asked at every write, and a scan of them all was 2 % of a
// create's CPU.
var builtinByPrefix = sync.OnceValue(func() map[string][]schema.GroupVersionResource {
	m := make(map[string][]schema.GroupVersionResource)
	for i := range builtin {
		p := StorageOf(&builtin[i]).Prefix
		m[p] = append(m[p], builtin[i].GroupVersionResource())
	}
	return m
})

// Lookup returns the served resource for gvr, or nil.
func (c *Catalog) Lookup(gvr schema.GroupVersionResource) *Resource {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.byGVR[gvr]
}

// Groups returns the API groups in discovery order (the core group "" first).
func (c *Catalog) Groups() []Group {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.groups
}

// Resources returns the resources of one group version, by plural name.
func (c *Catalog) Resources(gv schema.GroupVersion) []*Resource {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var out []*Resource
	for _, r := range c.resources {
		if r.Group == gv.Group && r.Version == gv.Version {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b *Resource) int { return strings.Compare(a.Resource, b.Resource) })
	return out
}

// Generation changes whenever the set of resources served does, so that a
// reader can tell its derived lookups are stale.
func (c *Catalog) Generation() uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.generation
}

// All returns every resource.
func (c *Catalog) All() []*Resource {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.resources
}
