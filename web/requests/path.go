package requests

import (
	"net/url"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"kubeplay/server"
	"kubeplay/web/internal/apitypes"
	"kubeplay/web/object"
)

// attributes are what a request path and method say about it, as the API
// server reads them.
type attributes struct {
	group, version      string
	namespace, resource string
	name, subresource   string
	verb                string
	discovery           bool // /api, /apis, /apis/<group>[/<version>]
	nonResource         bool // /version, /healthz, /openapi/v3, ...
}

func (a attributes) qualifiedResource() string {
	if a.resource == "" || a.group == "" {
		return a.resource
	}
	return a.resource + "." + a.group
}

// parse reads a request's attributes from its method, path and query.
func parse(method, path, rawQuery string) attributes {
	parts := strings.FieldsFunc(path, func(r rune) bool { return r == '/' })
	var a attributes
	switch {
	case len(parts) >= 1 && parts[0] == "api" && len(parts) <= 2:
		a.discovery = true
	case len(parts) >= 1 && parts[0] == "api":
		a.version, parts = parts[1], parts[2:]
	case len(parts) >= 1 && parts[0] == "apis" && len(parts) <= 3:
		a.discovery = true
	case len(parts) >= 1 && parts[0] == "apis":
		a.group, a.version, parts = parts[1], parts[2], parts[3:]
	default:
		a.nonResource = true
	}
	if a.discovery || a.nonResource {
		a.verb = strings.ToLower(method)
		return a
	}
	watchPath := len(parts) > 0 && parts[0] == "watch"
	if watchPath {
		parts = parts[1:]
	}
	if len(parts) >= 2 && parts[0] == "namespaces" && (len(parts) == 2 || len(parts) == 3 && (parts[2] == "status" || parts[2] == "finalize")) {
		a.resource, a.name = "namespaces", parts[1]
		if len(parts) == 3 {
			a.subresource = parts[2]
		}
	} else {
		if len(parts) >= 2 && parts[0] == "namespaces" {
			a.namespace, parts = parts[1], parts[2:]
		}
		if len(parts) > 0 {
			a.resource = parts[0]
		}
		if len(parts) > 1 {
			a.name = parts[1]
		}
		if len(parts) > 2 {
			a.subresource = parts[2]
		}
	}
	q, _ := url.ParseQuery(rawQuery)
	a.verb = verb(method, a.name == "", watchPath || server.QueryBool(q, "watch"))
	return a
}

func verb(method string, collection, watch bool) string {
	switch method {
	case "GET", "HEAD":
		switch {
		case watch:
			return "watch"
		case collection:
			return "list"
		}
		return "get"
	case "POST":
		return "create"
	case "PUT":
		return "update"
	case "PATCH":
		return "patch"
	case "DELETE":
		if collection {
			return "deletecollection"
		}
		return "delete"
	}
	return strings.ToLower(method)
}

// ViewOf is the UI view that shows what a request concerned, as a link
// label and URL: the object's page (its deletion for a delete, its managed
// fields for a write), the live watch of a watch, the list of a list or a
// create; ok is false for other requests (discovery, non-resource paths).
func ViewOf(method, path, rawQuery string) (label, href string, ok bool) {
	a := parse(method, path, rawQuery)
	if a.discovery || a.nonResource || a.resource == "" {
		return "", "", false
	}
	ref := apitypes.FormatRef(schema.GroupVersionResource{Group: a.group, Version: a.version, Resource: a.resource})
	switch {
	case a.verb == "watch":
		// The watch page asks as the request did: from the same
		// resourceVersion (so a 410 Gone shows again), with its selectors.
		sent, _ := url.ParseQuery(rawQuery)
		q := url.Values{"r": {ref}}
		if a.namespace != "" {
			q.Set("ns", a.namespace)
		}
		for _, p := range []string{"resourceVersion", "labelSelector", "fieldSelector"} {
			if v := sent.Get(p); v != "" {
				q.Set(p, v)
			}
		}
		if a.name != "" {
			q.Set("fieldSelector", "metadata.name="+a.name)
		}
		if server.QueryBool(sent, "allowWatchBookmarks") {
			q.Set("bookmarks", "1")
		}
		if server.QueryBool(sent, "sendInitialEvents") {
			q.Set("sendInitialEvents", "1")
		}
		return "the watch of " + a.qualifiedResource(), "/ui/watch?" + q.Encode(), true
	case a.name == "":
		u := "/?r=" + url.QueryEscape(ref)
		if a.namespace != "" {
			u += "&ns=" + url.QueryEscape(a.namespace)
		}
		return a.qualifiedResource(), u, true
	}
	tab := object.TabYAML
	switch a.verb {
	case "delete":
		tab = object.TabDeletion
	case "create", "update", "patch":
		tab = object.TabFields
	}
	return a.qualifiedResource() + "/" + a.name, object.URL(ref, a.namespace, a.name, tab), true
}
