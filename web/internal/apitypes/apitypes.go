// Package apitypes finds the API's resource types through discovery and
// names them in UI URLs ("apps/v1/deployments"), for every view.
package apitypes

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"

	"kubeplay/server/inproc"
)

// Type is one listable resource type found by discovery.
type Type struct {
	GVR        schema.GroupVersionResource // Group is "" for the core group
	Kind       string
	ShortNames []string
	Namespaced bool
	Verbs      []string
}

// Group is one group at the version discovery was asked about (the
// preferred one), with its listable types, or the error that hid them.
type Group struct {
	Name    string // "" for the core (legacy) group
	Version string
	Types   []Type
	Err     error
}

// discover reads the legacy discovery documents: the core group from /api
// and /api/<version>, then every group of /apis at its preferred version, in
// the order the server lists them. A failing group version is kept with its
// error; a failing /api or /apis is returned in errs and the rest still shown.
func Discover(ctx context.Context, c *inproc.Client) (groups []Group, errs []error) {
	var core metav1.APIVersions
	if err := c.Get(ctx, "/api", &core); err != nil {
		errs = append(errs, err)
	} else if len(core.Versions) > 0 {
		g := Group{Version: core.Versions[0]}
		g.Types, g.Err = DiscoverVersion(ctx, c, schema.GroupVersion{Version: g.Version})
		groups = append(groups, g)
	}

	var list metav1.APIGroupList
	if err := c.Get(ctx, "/apis", &list); err != nil {
		errs = append(errs, err)
		return groups, errs
	}
	for _, ag := range list.Groups {
		version := ag.PreferredVersion.Version
		if version == "" && len(ag.Versions) > 0 {
			version = ag.Versions[0].Version
		}
		if version == "" {
			continue
		}
		g := Group{Name: ag.Name, Version: version}
		g.Types, g.Err = DiscoverVersion(ctx, c, schema.GroupVersion{Group: ag.Name, Version: version})
		groups = append(groups, g)
	}
	return groups, errs
}

// DiscoverVersion returns the listable resource types of one group version:
// subresources ("deployments/scale") and types without the list verb are
// left out.
func DiscoverVersion(ctx context.Context, c *inproc.Client, gv schema.GroupVersion) ([]Type, error) {
	var list metav1.APIResourceList
	if err := c.Get(ctx, DiscoveryPath(gv), &list); err != nil {
		return nil, err
	}
	var types []Type
	for _, r := range list.APIResources {
		if strings.Contains(r.Name, "/") || !slices.Contains(r.Verbs, "list") {
			continue
		}
		types = append(types, Type{
			GVR:        gv.WithResource(r.Name),
			Kind:       r.Kind,
			ShortNames: r.ShortNames,
			Namespaced: r.Namespaced,
			Verbs:      r.Verbs,
		})
	}
	return types, nil
}

// FindType returns the discovered type named by gvr.
func FindType(groups []Group, gvr schema.GroupVersionResource) (Type, bool) {
	for _, g := range groups {
		for _, t := range g.Types {
			if t.GVR == gvr {
				return t, true
			}
		}
	}
	return Type{}, false
}

// DiscoveryPath is the legacy discovery document of a group version:
// "/api/v1" for the core group, "/apis/<group>/<version>" otherwise.
func DiscoveryPath(gv schema.GroupVersion) string {
	if gv.Group == "" {
		return "/api/" + gv.Version
	}
	return "/apis/" + gv.Group + "/" + gv.Version
}

// ListPath is the list endpoint of a type, in one namespace or (namespace "")
// across all namespaces; cluster-scoped types ignore namespace.
func ListPath(t Type, namespace string) string {
	p := DiscoveryPath(t.GVR.GroupVersion())
	if t.Namespaced && namespace != "" {
		p += "/namespaces/" + namespace
	}
	return p + "/" + t.GVR.Resource
}

// FormatRef names a type in the page's URL: its apiVersion and resource,
// "v1/configmaps" or "apps/v1/deployments".
func FormatRef(gvr schema.GroupVersionResource) string {
	return gvr.GroupVersion().String() + "/" + gvr.Resource
}

// ParseRef reverses FormatRef. Every part must be a lowercase DNS name, so a
// parsed ref is safe to put into an API path.
func ParseRef(s string) (schema.GroupVersionResource, error) {
	var gvr schema.GroupVersionResource
	parts := strings.Split(s, "/")
	switch len(parts) {
	case 2:
		gvr = schema.GroupVersionResource{Version: parts[0], Resource: parts[1]}
	case 3:
		gvr = schema.GroupVersionResource{Group: parts[0], Version: parts[1], Resource: parts[2]}
	default:
		return gvr, fmt.Errorf("invalid resource type %q: want <version>/<resource> or <group>/<version>/<resource>, such as v1/configmaps or apps/v1/deployments", s)
	}
	if (len(parts) == 3 && !isDNSSubdomain(gvr.Group)) || !isDNSSubdomain(gvr.Version) || !isDNSSubdomain(gvr.Resource) {
		return schema.GroupVersionResource{}, fmt.Errorf("invalid resource type %q: group, version and resource must be lowercase DNS names", s)
	}
	return gvr, nil
}

func isDNSSubdomain(s string) bool { return len(validation.IsDNS1123Subdomain(s)) == 0 }

// ValidNamespace reports whether ns can name a namespace (a DNS label).
func ValidNamespace(ns string) bool { return len(validation.IsDNS1123Label(ns)) == 0 }

// Lookup finds the type ref names ("apps/v1/deployments") in its group
// version's discovery document. Errors are API Statuses: BadRequest for a
// malformed ref, NotFound for a type the API does not serve, or the error
// reading discovery.
func Lookup(ctx context.Context, c *inproc.Client, ref string) (Type, error) {
	gvr, err := ParseRef(ref)
	if err != nil {
		return Type{}, apierrors.NewBadRequest(err.Error())
	}
	types, err := DiscoverVersion(ctx, c, gvr.GroupVersion())
	if err != nil && !apierrors.IsNotFound(err) {
		return Type{}, err
	}
	if t, ok := FindType([]Group{{Types: types}}, gvr); ok {
		return t, nil
	}
	return Type{}, NotServed(gvr)
}

// NotServed is the error for a type the API does not serve.
func NotServed(gvr schema.GroupVersionResource) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Reason:  metav1.StatusReasonNotFound,
		Code:    http.StatusNotFound,
		Message: fmt.Sprintf("the server doesn't have a resource type %q in %s that can be listed", gvr.Resource, gvr.GroupVersion()),
	}}
}

// ObjectPath is the endpoint of one object of type t (namespace is ignored
// for cluster-scoped types). name is path-escaped.
func ObjectPath(t Type, namespace, name string) string {
	return ListPath(t, namespace) + "/" + url.PathEscape(name)
}

// CheckObject validates a namespace and name from a UI URL before they go
// into an API path: BadRequest when either cannot name an object of t.
func CheckObject(t Type, namespace, name string) error {
	switch {
	case t.Namespaced && !ValidNamespace(namespace):
		return apierrors.NewBadRequest(fmt.Sprintf("invalid namespace %q: must be a lowercase DNS label", namespace))
	case name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/%"):
		return apierrors.NewBadRequest(fmt.Sprintf("invalid name %q", name))
	}
	return nil
}

// ForKind finds the type of the objects of kind in apiVersion ("apps/v1"),
// as kubectl maps a manifest to its endpoint. Errors as for Lookup.
func ForKind(ctx context.Context, c *inproc.Client, apiVersion, kind string) (Type, error) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil || apiVersion == "" || kind == "" {
		return Type{}, apierrors.NewBadRequest(fmt.Sprintf("the object needs apiVersion and kind (got apiVersion %q, kind %q)", apiVersion, kind))
	}
	types, err := DiscoverVersion(ctx, c, gv)
	if err != nil && !apierrors.IsNotFound(err) {
		return Type{}, err
	}
	for _, t := range types {
		if t.Kind == kind {
			return t, nil
		}
	}
	return Type{}, &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Reason: metav1.StatusReasonNotFound, Code: http.StatusNotFound,
		Message: fmt.Sprintf("no matches for kind %q in version %q", kind, apiVersion),
	}}
}
