package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
)

// resource is one resource type the API serves.
type resource struct {
	Group, Version, Name, Singular, Kind string
	ShortNames                           []string
	Namespaced                           bool
	Verbs                                []string
}

func (r resource) apiVersion() string {
	if r.Group == "" {
		return r.Version
	}
	return r.Group + "/" + r.Version
}

// prefix is the path of the group version: /api/v1 or /apis/GROUP/VERSION.
func (r resource) prefix() string {
	if r.Group == "" {
		return "/api/" + r.Version
	}
	return "/apis/" + r.Group + "/" + r.Version
}

// path is the path of the collection in ns ("" for every namespace, or a
// cluster-scoped type), or of the object name when it is not "".
func (r resource) path(ns, name string) string {
	p := r.prefix()
	if r.Namespaced && ns != "" {
		p += "/namespaces/" + ns
	}
	p += "/" + r.Name
	if name != "" {
		p += "/" + name
	}
	return p
}

// ref is how kubectl names an object in its messages: configmap/demo,
// deployment.apps/web.
func (r resource) ref(name string) string {
	kind := strings.ToLower(r.Kind)
	if r.Group != "" {
		kind += "." + r.Group
	}
	return kind + "/" + name
}

// discovery is what the API serves, as kubectl's discovery sees it: the
// preferred version of each group.
type discovery struct {
	resources []resource
	hasScale  map[string]bool // "group/resource" with a scale subresource
}

type apiResourceList struct {
	GroupVersion string `json:"groupVersion"`
	Resources    []struct {
		Name         string   `json:"name"`
		SingularName string   `json:"singularName"`
		Namespaced   bool     `json:"namespaced"`
		Kind         string   `json:"kind"`
		ShortNames   []string `json:"shortNames"`
		Verbs        []string `json:"verbs"`
	} `json:"resources"`
}

func (c *Console) discovery(ctx context.Context) (*discovery, error) {
	c.mu.Lock()
	d := c.disc
	c.mu.Unlock()
	if d != nil {
		return d, nil
	}
	var groups struct {
		Groups []struct {
			PreferredVersion struct {
				GroupVersion string `json:"groupVersion"`
			} `json:"preferredVersion"`
		} `json:"groups"`
	}
	if err := c.getJSON(ctx, "/apis", &groups); err != nil {
		return nil, err
	}
	versions := []string{"/api/v1"}
	for _, g := range groups.Groups {
		versions = append(versions, "/apis/"+g.PreferredVersion.GroupVersion)
	}
	d = &discovery{hasScale: map[string]bool{}}
	for _, p := range versions {
		var list apiResourceList
		if err := c.getJSON(ctx, p, &list); err != nil {
			return nil, err
		}
		group, version, ok := strings.Cut(list.GroupVersion, "/")
		if !ok {
			group, version = "", list.GroupVersion
		}
		for _, r := range list.Resources {
			if name, sub, ok := strings.Cut(r.Name, "/"); ok {
				if sub == "scale" {
					d.hasScale[group+"/"+name] = true
				}
				continue
			}
			d.resources = append(d.resources, resource{Group: group, Version: version, Name: r.Name, Singular: r.SingularName,
				Kind: r.Kind, ShortNames: r.ShortNames, Namespaced: r.Namespaced, Verbs: r.Verbs})
		}
	}
	c.mu.Lock()
	c.disc = d
	c.mu.Unlock()
	return d, nil
}

func (c *Console) getJSON(ctx context.Context, path string, out any) error {
	data, err := c.request(ctx, "GET", path, "", nil, "")
	if err != nil {
		return err
	}
	return json.Unmarshal(data, out)
}

// lookup finds the resource a command names: plural, singular, short name
// or kind, optionally followed by ".group" (kubectl's rules, minus
// versions).
func (c *Console) lookup(ctx context.Context, name string) (resource, error) {
	d, err := c.discovery(ctx)
	if err != nil {
		return resource{}, err
	}
	want := strings.ToLower(name)
	base, group, hasGroup := strings.Cut(want, ".")
	for _, r := range d.resources {
		if hasGroup && r.Group != group {
			continue
		}
		if r.Name == base || r.Singular == base || strings.ToLower(r.Kind) == base || contains(r.ShortNames, base) {
			return r, nil
		}
	}
	return resource{}, usageError(fmt.Sprintf("the server doesn't have a resource type %q", name))
}

// byKind finds the resource of an object's apiVersion and kind.
func (c *Console) byKind(ctx context.Context, apiVersion, kind string) (resource, error) {
	d, err := c.discovery(ctx)
	if err != nil {
		return resource{}, err
	}
	for _, r := range d.resources {
		if r.apiVersion() == apiVersion && r.Kind == kind {
			return r, nil
		}
	}
	return resource{}, usageError(fmt.Sprintf("resource mapping not found for kind %q in version %q", kind, apiVersion))
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// typeAndNames reads "TYPE NAME..." or "TYPE/NAME" from the arguments.
func (c *Console) typeAndNames(ctx context.Context, args []string) (resource, []string, error) {
	if len(args) == 0 {
		return resource{}, nil, usageError("you must specify the type of resource")
	}
	typ, name, slash := strings.Cut(args[0], "/")
	r, err := c.lookup(ctx, typ)
	if err != nil {
		return resource{}, nil, err
	}
	names := args[1:]
	if slash {
		names = append([]string{name}, names...)
	}
	return r, names, nil
}

func (c *Console) apiResources(ctx context.Context, f flags, args []string, _ string, out io.Writer) error {
	d, err := c.discovery(ctx)
	if err != nil {
		return err
	}
	rs := append([]resource(nil), d.resources...)
	sort.SliceStable(rs, func(i, j int) bool {
		if rs[i].Group != rs[j].Group {
			return rs[i].Group < rs[j].Group
		}
		return rs[i].Name < rs[j].Name
	})
	tw := newTabWriter(out)
	fmt.Fprintln(tw, "NAME\tSHORTNAMES\tAPIVERSION\tNAMESPACED\tKIND")
	for _, r := range rs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%t\t%s\n", r.Name, strings.Join(r.ShortNames, ","), r.apiVersion(), r.Namespaced, r.Kind)
	}
	return tw.Flush()
}
