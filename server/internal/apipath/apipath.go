// Package apipath splits the paths of the Kubernetes API into their parts,
// as the OpenAPI documents write them ("/apis/batch/v1/namespaces/{namespace}/jobs").
package apipath

import "strings"

// Split splits "/api/v1/x" or "/apis/g/v/x" into group, version and the
// rest ("x").
func Split(p string) (group, version, rest string, ok bool) {
	if r, found := strings.CutPrefix(p, "/api/v1/"); found {
		return "", "v1", r, true
	}
	r, found := strings.CutPrefix(p, "/apis/")
	if !found {
		return "", "", "", false
	}
	parts := strings.SplitN(r, "/", 3)
	if len(parts) < 3 {
		return "", "", "", false
	}
	return parts[0], parts[1], parts[2], true
}

// Resource is the resource of a path relative to its group version
// ("namespaces/{namespace}/jobs/{name}/status", "watch/jobs"): "" for the
// group version's own path.
func Resource(rel string) string {
	parts := strings.Split(strings.TrimPrefix(rel, "watch/"), "/")
	if len(parts) >= 3 && parts[0] == "namespaces" && parts[1] == "{namespace}" {
		return parts[2]
	}
	return parts[0]
}

// Path is a path of one resource or subresource.
type Path struct {
	Group, Version string
	Namespaced     bool
	// Resource is the plural name; Subresource is "" for the resource's
	// own paths (collection, object, watch).
	Resource, Subresource string
}

// Parse parses a path of one resource or subresource; ok is false for
// other paths (a group version's own, the proxy paths of a subresource:
// pods/{name}/proxy/{path}). The deprecated /watch/ paths are the
// resource's.
func Parse(p string) (path Path, ok bool) {
	group, version, rest, ok := Split(p)
	if !ok {
		return Path{}, false
	}
	path.Group, path.Version = group, version
	segs := strings.Split(strings.TrimPrefix(rest, "watch/"), "/")
	if len(segs) >= 3 && segs[0] == "namespaces" && segs[1] == "{namespace}" {
		path.Namespaced, segs = true, segs[2:]
	}
	path.Resource = segs[0]
	if path.Resource == "" || strings.HasPrefix(path.Resource, "{") {
		return Path{}, false
	}
	switch {
	case len(segs) == 1, len(segs) == 2 && segs[1] == "{name}":
	case len(segs) == 3 && segs[1] == "{name}":
		path.Subresource = segs[2]
	default:
		return Path{}, false
	}
	return path, true
}
