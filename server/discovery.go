package server

import (
	"bytes"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"mime"
	"net"
	"net/http"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/yaml"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"kubeplay/server/catalog"
	"kubeplay/server/encoding"
)

// serveDiscovery answers a legacy discovery request. kube-apiserver serves
// /apis and /apis/<group> (groups) by rules of their own: any method, and
// the media types of encoding.NegotiateGroups; /api and the resource lists of
// group versions answer GET only (HEAD included: 405), negotiated as an
// object without conversions.
func (s *Server) serveDiscovery(w http.ResponseWriter, r *http.Request, doc any, groups bool) {
	if groups {
		mt, err := encoding.NegotiateGroups(r)
		if err != nil {
			encoding.WriteError(w, r, err)
			return
		}
		encoding.WriteAs(w, r, http.StatusOK, doc, mt)
		return
	}
	if r.Method != http.MethodGet {
		encoding.WriteError(w, r, errMethodNotAllowed())
		return
	}
	n, err := encoding.Negotiate(r, false)
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	encoding.WriteAs(w, r, http.StatusOK, doc, n.MediaType)
}

// serveVersion answers /version: GET only, in JSON only.
func (s *Server) serveVersion(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		encoding.WriteError(w, r, errMethodNotAllowed())
		return
	}
	if err := encoding.NegotiateOnly(r, encoding.JSON); err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	encoding.WriteAs(w, r, http.StatusOK, versionInfo(s.Version()), encoding.JSON)
}

func (s *Server) coreVersions(r *http.Request) *metav1.APIVersions {
	host := r.Host
	if _, _, err := net.SplitHostPort(host); err != nil && host != "" {
		host = net.JoinHostPort(host, "80")
	}
	return &metav1.APIVersions{
		TypeMeta: metav1.TypeMeta{Kind: "APIVersions"},
		Versions: []string{"v1"},
		ServerAddressByClientCIDRs: []metav1.ServerAddressByClientCIDR{
			{ClientCIDR: "0.0.0.0/0", ServerAddress: host},
		},
	}
}

func (s *Server) group(name string) (catalog.Group, bool) {
	for _, g := range s.catalog.Groups() {
		if g.Name == name && name != "" {
			return g, true
		}
	}
	return catalog.Group{}, false
}

// servesGroupVersion reports whether a group version has served resources,
// or, when gv.Version is empty, whether the group is served.
func (s *Server) servesGroupVersion(gv schema.GroupVersion) bool {
	if gv.Version == "" {
		_, ok := s.group(gv.Group)
		return ok
	}
	return len(s.catalog.Resources(gv)) > 0
}

func containsVersion(g catalog.Group, v string) bool { return slices.Contains(g.Versions, v) }

// customGroup reports whether a group's resources are all custom ones.
func (s *Server) customGroup(name string) bool {
	for _, r := range s.catalog.All() {
		if r.Group == name && r.Custom == nil {
			return false
		}
	}
	return true
}

func apiGroup(g catalog.Group) *metav1.APIGroup {
	out := &metav1.APIGroup{TypeMeta: metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"}, Name: g.Name}
	for _, v := range g.Versions {
		out.Versions = append(out.Versions, metav1.GroupVersionForDiscovery{GroupVersion: g.Name + "/" + v, Version: v})
	}
	out.PreferredVersion = out.Versions[0]
	return out
}

func (s *Server) groupList() *metav1.APIGroupList {
	list := &metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}, Groups: []metav1.APIGroup{}}
	for _, g := range s.catalog.Groups() {
		if g.Name == "" {
			continue
		}
		grp := apiGroup(g)
		grp.TypeMeta = metav1.TypeMeta{}
		list.Groups = append(list.Groups, *grp)
	}
	return list
}

func (s *Server) resourceList(gv schema.GroupVersion) *metav1.APIResourceList {
	list := &metav1.APIResourceList{
		TypeMeta:     metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
		GroupVersion: gv.String(),
		APIResources: []metav1.APIResource{},
	}
	for _, r := range s.catalog.Resources(gv) {
		ar := metav1.APIResource{
			Name: r.Resource, SingularName: r.Singular, Namespaced: r.Namespaced, Kind: r.Kind,
			Verbs: metav1.Verbs(r.Verbs), ShortNames: r.ShortNames, Categories: r.Categories,
		}
		if !isReview(r) && unstoredHandlers[r.GroupResource()] == nil && r.APIService == "" { // never stored: no storage version
			ar.StorageVersionHash = catalog.StorageOf(r).StorageVersionHash()
		}
		list.APIResources = append(list.APIResources, ar)
		for _, sub := range r.Subresources {
			if !subresourceServed(r, sub.Name) {
				continue
			}
			ar := metav1.APIResource{Name: r.Resource + "/" + sub.Name, Namespaced: r.Namespaced, Kind: sub.Kind, Verbs: metav1.Verbs(sub.Verbs)}
			if sub.Group != r.Group || sub.Version != r.Version {
				ar.Group, ar.Version = sub.Group, sub.Version
			}
			list.APIResources = append(list.APIResources, ar)
		}
	}
	return list
}

// Aggregated discovery (apidiscovery.k8s.io/v2): every group version's
// resources in one document, which kubectl and client-go ask for first
// (Accept: application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList).
// The types mirror k8s.io/api/apidiscovery/v2, which the engine must not
// import; field order and omitempty follow the real server's JSON.
type groupDiscoveryList struct {
	Kind       string           `json:"kind"`
	APIVersion string           `json:"apiVersion"`
	Metadata   struct{}         `json:"metadata"`
	Items      []groupDiscovery `json:"items"`
}

type groupDiscovery struct {
	Metadata struct {
		Name string `json:"name,omitempty"`
	} `json:"metadata"`
	Versions []versionDiscovery `json:"versions"`
}

type versionDiscovery struct {
	Version   string              `json:"version"`
	Resources []resourceDiscovery `json:"resources"`
	Freshness string              `json:"freshness"`
}

type resourceDiscovery struct {
	Resource         string                 `json:"resource"`
	ResponseKind     kindRef                `json:"responseKind"`
	Scope            string                 `json:"scope"`
	SingularResource string                 `json:"singularResource"`
	Verbs            []string               `json:"verbs"`
	ShortNames       []string               `json:"shortNames,omitempty"`
	Categories       []string               `json:"categories,omitempty"`
	Subresources     []subresourceDiscovery `json:"subresources,omitempty"`
}

type subresourceDiscovery struct {
	Subresource  string   `json:"subresource"`
	ResponseKind kindRef  `json:"responseKind"`
	Verbs        []string `json:"verbs"`
}

// kindRef is a response kind; group and version stay empty (always present)
// when they are those of the group version listing it.
type kindRef struct {
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
}

// aggregated returns the aggregated discovery document of the core group
// (core true, for /api) or of the named groups (for /apis).
func (s *Server) aggregated(core bool) *groupDiscoveryList {
	list := &groupDiscoveryList{Kind: "APIGroupDiscoveryList", APIVersion: "apidiscovery.k8s.io/v2", Items: []groupDiscovery{}}
	for _, g := range s.catalog.Groups() {
		if (g.Name == "") != core {
			continue
		}
		item := groupDiscovery{}
		item.Metadata.Name = g.Name
		for _, v := range g.Versions {
			item.Versions = append(item.Versions, versionDiscovery{
				Version: v, Resources: s.resourceDiscovery(schema.GroupVersion{Group: g.Name, Version: v}), Freshness: "Current",
			})
		}
		list.Items = append(list.Items, item)
	}
	return list
}

func (s *Server) resourceDiscovery(gv schema.GroupVersion) []resourceDiscovery {
	out := []resourceDiscovery{}
	for _, r := range s.catalog.Resources(gv) {
		rd := resourceDiscovery{
			Resource: r.Resource, ResponseKind: kindRef{Kind: r.Kind}, Scope: "Cluster",
			SingularResource: r.Singular, Verbs: r.Verbs, ShortNames: r.ShortNames, Categories: r.Categories,
		}
		if r.Namespaced {
			rd.Scope = "Namespaced"
		}
		if r.Custom != nil {
			// kube-apiserver's CRD discovery names the group and version.
			rd.ResponseKind.Group, rd.ResponseKind.Version = r.Group, r.Version
		}
		for _, sub := range r.Subresources {
			if !subresourceServed(r, sub.Name) {
				continue
			}
			kind := kindRef{Kind: sub.Kind}
			if sub.Group != r.Group || sub.Version != r.Version || r.Custom != nil {
				kind.Group, kind.Version = sub.Group, sub.Version
			}
			rd.Subresources = append(rd.Subresources, subresourceDiscovery{Subresource: sub.Name, ResponseKind: kind, Verbs: sub.Verbs})
		}
		out = append(out, rd)
	}
	return out
}

// aggregatedMediaType returns the media type (JSON, YAML or protobuf) of
// the first Accept clause asking for aggregated discovery v2, or "" if none
// does. Like kube-apiserver, it ignores quality values and the profile
// parameter, and serves any such clause even when a plain type comes first.
// The browser build serves no protobuf: a protobuf clause is skipped there,
// and the client's next choice applies.
func aggregatedMediaType(accept string) string {
	for _, part := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil || params["g"] != "apidiscovery.k8s.io" || params["v"] != "v2" || params["as"] != "APIGroupDiscoveryList" {
			continue
		}
		switch mt {
		case encoding.JSON, "application/*", "*/*":
			return encoding.JSON
		case encoding.YAML:
			return encoding.YAML
		case encoding.Protobuf:
			if encoding.ProtobufServed {
				return encoding.Protobuf
			}
		}
	}
	return ""
}

// serveDiscoveryRoot answers /api (core) or /apis: aggregated discovery
// when the client asks for it, else the legacy document.
func (s *Server) serveDiscoveryRoot(w http.ResponseWriter, r *http.Request, core bool, legacy any) {
	if mt := aggregatedMediaType(r.Header.Get("Accept")); mt != "" {
		s.serveAggregated(w, r, mt, core)
		return
	}
	s.serveDiscovery(w, r, legacy, !core)
}

// serveAggregated answers /api or /apis in aggregated form, as
// kube-apiserver does for any method: cacheable by clients (public, with an
// ETag, 304 when If-None-Match names it), varying with Accept.
func (s *Server) serveAggregated(w http.ResponseWriter, r *http.Request, mediaType string, core bool) {
	body, err := encoding.Marshal(s.aggregated(core))
	if err != nil {
		encoding.WriteError(w, r, apierrors.NewInternalError(err))
		return
	}
	sum := sha512.Sum512(body)
	etag := `"` + strings.ToUpper(hex.EncodeToString(sum[:])) + `"`
	h := w.Header()
	h.Set("Cache-Control", "public")
	h.Set("Etag", etag)
	h.Set("Vary", "Accept")
	if r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	switch {
	case mediaType == encoding.Protobuf:
		// The ETag is the JSON's, whatever the form, as kube-apiserver's.
		if body, err = encoding.MarshalProtobuf(s.aggregated(core)); err != nil {
			encoding.WriteError(w, r, apierrors.NewInternalError(err))
			return
		}
	case mediaType == encoding.YAML:
		if body, err = yaml.JSONToYAML(body); err != nil {
			encoding.WriteError(w, r, apierrors.NewInternalError(err))
			return
		}
	case encoding.Pretty(r):
		var b bytes.Buffer
		json.Indent(&b, body, "", "  ")
		body = append(b.Bytes(), '\n')
	default:
		body = append(body, '\n')
	}
	h.Set("Content-Type", mediaType+";g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList")
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		w.Write(body)
	}
}

// rootPaths lists the paths kubeplay serves, as kube-apiserver answers GET /
// (sorted; "/apis/" and "/openapi/v3/" name the prefixes of their trees).
func (s *Server) rootPaths() map[string][]string {
	paths := []string{"/api", "/api/v1", "/apis", "/apis/", "/openapi/v2", "/openapi/v3", "/openapi/v3/", "/version"}
	for _, g := range s.groupList().Groups {
		paths = append(paths, "/apis/"+g.Name)
		for _, v := range g.Versions {
			paths = append(paths, "/apis/"+v.GroupVersion)
		}
	}
	if s.saTokens.discovery != nil {
		paths = append(paths, openIDConfigPath, jwksPath)
	}
	for _, endpoint := range []string{"healthz", "livez", "readyz"} {
		paths = append(paths, "/"+endpoint)
		for _, c := range s.healthChecks(endpoint) {
			paths = append(paths, "/"+endpoint+"/"+c.name)
		}
	}
	slices.Sort(paths)
	return map[string][]string{"paths": paths}
}
