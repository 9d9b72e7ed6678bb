package server

import (
	"net"
	"net/http"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"kubeplay/server/catalog"
	"kubeplay/server/encoding"
)

// serveDiscovery answers a discovery request; discovery documents are
// read-only.
func (s *Server) serveDiscovery(w http.ResponseWriter, r *http.Request, doc any) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		encoding.WriteError(w, r, errMethodNotAllowed())
		return
	}
	encoding.Write(w, r, http.StatusOK, doc)
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

func containsVersion(g catalog.Group, v string) bool { return slices.Contains(g.Versions, v) }

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
		if !isReview(r) { // reviews are never stored, so they have no storage version
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
