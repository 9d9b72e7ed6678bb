package object

import (
	"net/url"
	"strings"
)

// Path is where the object page is mounted.
const Path = "/ui/object"

// Tabs of the object page, chosen with ?tab=.
const (
	TabYAML     = "yaml"
	TabFields   = "fields"
	TabDeletion = "deletion"
	TabHistory  = "history"
)

// URL is the page of the object ns/name (ns "" for cluster-scoped objects)
// of the type ref ("apps/v1/deployments"), showing tab ("" for the YAML).
func URL(ref, ns, name, tab string) string {
	q := url.Values{"r": {ref}, "name": {name}}
	if ns != "" {
		q.Set("ns", ns)
	}
	if tab != "" && tab != TabYAML {
		q.Set("tab", tab)
	}
	return Path + "?" + q.Encode()
}

func urlQuery(s string) string { return url.QueryEscape(s) }

func stateClass(state string) string {
	s, _, _ := strings.Cut(state, ",")
	return "state-" + s
}

// watchURL is the live watch of the object's type and namespace, filtered
// to the object.
func watchURL(p Props) string {
	q := url.Values{"r": {p.Ref}, "fieldSelector": {"metadata.name=" + p.Name}}
	if p.Namespace != "" {
		q.Set("ns", p.Namespace)
	}
	return "/ui/watch?" + q.Encode()
}

// editURL is the editor with the object loaded.
func editURL(p Props) string {
	q := url.Values{"r": {p.Ref}, "name": {p.Name}}
	if p.Namespace != "" {
		q.Set("ns", p.Namespace)
	}
	return "/ui/edit?" + q.Encode()
}
