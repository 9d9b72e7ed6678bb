package explorer

import (
	"context"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"

	"kubeplay/server/inproc"
)

// resourceType is one listable resource type found by discovery.
type resourceType struct {
	gvr        schema.GroupVersionResource // Group is "" for the core group
	kind       string
	shortNames []string
	namespaced bool
}

// apiGroup is one group at the version discovery was asked about (the
// preferred one), with its listable types, or the error that hid them.
type apiGroup struct {
	name    string // "" for the core (legacy) group
	version string
	types   []resourceType
	err     error
}

// discover reads the legacy discovery documents: the core group from /api
// and /api/<version>, then every group of /apis at its preferred version, in
// the order the server lists them. A failing group version is kept with its
// error; a failing /api or /apis is returned in errs and the rest still shown.
func discover(ctx context.Context, c *inproc.Client) (groups []apiGroup, errs []error) {
	var core metav1.APIVersions
	if err := c.Get(ctx, "/api", &core); err != nil {
		errs = append(errs, err)
	} else if len(core.Versions) > 0 {
		g := apiGroup{version: core.Versions[0]}
		g.types, g.err = discoverVersion(ctx, c, schema.GroupVersion{Version: g.version})
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
		g := apiGroup{name: ag.Name, version: version}
		g.types, g.err = discoverVersion(ctx, c, schema.GroupVersion{Group: ag.Name, Version: version})
		groups = append(groups, g)
	}
	return groups, errs
}

// discoverVersion returns the listable resource types of one group version:
// subresources ("deployments/scale") and types without the list verb are
// left out.
func discoverVersion(ctx context.Context, c *inproc.Client, gv schema.GroupVersion) ([]resourceType, error) {
	var list metav1.APIResourceList
	if err := c.Get(ctx, discoveryPath(gv), &list); err != nil {
		return nil, err
	}
	var types []resourceType
	for _, r := range list.APIResources {
		if strings.Contains(r.Name, "/") || !slices.Contains(r.Verbs, "list") {
			continue
		}
		types = append(types, resourceType{
			gvr:        gv.WithResource(r.Name),
			kind:       r.Kind,
			shortNames: r.ShortNames,
			namespaced: r.Namespaced,
		})
	}
	return types, nil
}

// findType returns the discovered type named by gvr.
func findType(groups []apiGroup, gvr schema.GroupVersionResource) (resourceType, bool) {
	for _, g := range groups {
		for _, t := range g.types {
			if t.gvr == gvr {
				return t, true
			}
		}
	}
	return resourceType{}, false
}

// discoveryPath is the legacy discovery document of a group version:
// "/api/v1" for the core group, "/apis/<group>/<version>" otherwise.
func discoveryPath(gv schema.GroupVersion) string {
	if gv.Group == "" {
		return "/api/" + gv.Version
	}
	return "/apis/" + gv.Group + "/" + gv.Version
}

// listPath is the list endpoint of a type, in one namespace or (namespace "")
// across all namespaces; cluster-scoped types ignore namespace.
func listPath(t resourceType, namespace string) string {
	p := discoveryPath(t.gvr.GroupVersion())
	if t.namespaced && namespace != "" {
		p += "/namespaces/" + namespace
	}
	return p + "/" + t.gvr.Resource
}

// formatRef names a type in the page's URL: its apiVersion and resource,
// "v1/configmaps" or "apps/v1/deployments".
func formatRef(gvr schema.GroupVersionResource) string {
	return gvr.GroupVersion().String() + "/" + gvr.Resource
}

// parseRef reverses formatRef. Every part must be a lowercase DNS name, so a
// parsed ref is safe to put into an API path.
func parseRef(s string) (schema.GroupVersionResource, error) {
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

// validNamespace reports whether ns can name a namespace (a DNS label).
func validNamespace(ns string) bool { return len(validation.IsDNS1123Label(ns)) == 0 }
