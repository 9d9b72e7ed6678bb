package server

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"kubeplay/server/catalog"
	"kubeplay/server/encoding"
)

// request is an API request after its URL has been parsed.
type request struct {
	group, version string
	namespace      string
	resource       string
	name           string
	subresource    string
	// verb is the Kubernetes verb: get, list, watch, create, update, patch,
	// delete, deletecollection.
	verb string
	res  *catalog.Resource
	// store is res's store, resolved once for the whole request.
	store *resourceStore
	// fieldValidation is the query parameter: Ignore, Warn (default), Strict.
	fieldValidation string
	// query holds the request's query parameters, deleteOptions a delete's
	// options: admission policies see them as the request's options.
	query         url.Values
	deleteOptions *metav1.DeleteOptions
}

// namespaceSubresources are the paths under /namespaces/{name}/ that address
// the namespace itself rather than a resource inside it.
var namespaceSubresources = map[string]bool{"status": true, "finalize": true}

// parsePath splits a resource path after /api/v1 or /apis/<group>/<version>
// ("namespaces/default/configmaps/x") into its parts. ok is false when the
// path has too many segments to be a resource path.
func parsePath(parts []string) (ns, resource, name, sub string, ok bool) {
	if len(parts) >= 2 && parts[0] == "namespaces" {
		if len(parts) == 2 || namespaceSubresources[parts[2]] && len(parts) == 3 {
			resource, name = "namespaces", parts[1]
			if len(parts) == 3 {
				sub = parts[2]
			}
			return "", resource, name, sub, true
		}
		ns, parts = parts[1], parts[2:]
	}
	switch len(parts) {
	case 1:
		resource = parts[0]
	case 2:
		resource, name = parts[0], parts[1]
	case 3:
		resource, name, sub = parts[0], parts[1], parts[2]
	default:
		if len(parts) > 3 && parts[2] == "proxy" {
			// The rest of the path is the proxied one.
			return ns, parts[0], parts[1], "proxy", true
		}
		return "", "", "", "", false
	}
	return ns, resource, name, sub, resource != ""
}

// verbFor maps an HTTP method on a collection or an object to a verb; "" if
// the method is not allowed there.
func verbFor(method string, collection, watchParam, watchPath bool) string {
	switch {
	case watchPath:
		if method == http.MethodGet {
			return "watch"
		}
	case collection:
		switch method {
		case http.MethodGet, http.MethodHead:
			if watchParam {
				return "watch"
			}
			return "list"
		case http.MethodPost:
			return "create"
		case http.MethodDelete:
			return "deletecollection"
		}
	default:
		switch method {
		case http.MethodGet, http.MethodHead:
			return "get" // kube-apiserver ignores ?watch on an object's path
		case http.MethodPut:
			return "update"
		case http.MethodPatch:
			return "patch"
		case http.MethodDelete:
			return "delete"
		}
	}
	return ""
}

// QueryBool reads a boolean query parameter as kube-apiserver's parameter
// codec does: present with any value but "false" or "0" (in any case) is
// true, so the Python client's watch=True is a watch and a bare ?watch too.
func QueryBool(q url.Values, name string) bool {
	v, ok := q[name]
	if !ok || len(v) == 0 {
		return false
	}
	switch strings.ToLower(v[0]) {
	case "false", "0":
		return false
	}
	return true
}

// splitPath splits a URL path into its non-empty segments.
func splitPath(p string) []string {
	return strings.FieldsFunc(p, func(r rune) bool { return r == '/' })
}

// longRunningSubresources are the subresources kube-apiserver serves as
// long-running requests, without a deadline.
var longRunningSubresources = map[string]bool{"attach": true, "exec": true, "log": true, "portforward": true, "proxy": true}

// longRunning reports whether r is a request kube-apiserver sets no
// deadline for: a watch (by ?watch on a collection or the /watch/ path),
// a proxy, or a stream from a pod.
func longRunning(r *http.Request) bool {
	parts := splitPath(r.URL.Path)
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		parts = parts[3:]
	default:
		return false
	}
	if len(parts) > 0 && (parts[0] == "watch" || parts[0] == "proxy") {
		return true
	}
	subAt := 2 // resource, name, subresource
	if len(parts) > 0 && parts[0] == "namespaces" && !(len(parts) > 2 && namespaceSubresources[parts[2]]) {
		subAt = 4
	}
	if len(parts) > subAt+1 {
		parts = parts[:subAt+1] // a proxy's path goes on after the subresource
	}
	_, _, name, sub, ok := parsePath(parts)
	if !ok {
		return false
	}
	if longRunningSubresources[sub] {
		return true
	}
	get := r.Method == http.MethodGet || r.Method == http.MethodHead
	return get && name == "" && QueryBool(r.URL.Query(), "watch")
}

// checkTimeout answers 400 for a request whose timeout parameter is not a
// duration, as kube-apiserver does for every request it sets a deadline
// for, before it authenticates it.
func checkTimeout(r *http.Request) error {
	t := r.URL.Query().Get("timeout")
	if t == "" || longRunning(r) {
		return nil
	}
	if _, err := time.ParseDuration(t); err != nil {
		return encoding.BadRequest("invalid timeout specified in the request URL - %v", err)
	}
	return nil
}
