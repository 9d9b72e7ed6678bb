// Package explorer is the UI's first page: the API's resource types, found
// through the legacy discovery documents (/api, /api/v1, /apis,
// /apis/<group>/<version>) and grouped by API group, and for a selected type
// its objects, listed through the ordinary list endpoints, with a namespace
// selector for namespaced types.
//
// The page is bookmarkable: "/?r=<apiVersion>/<resource>&ns=<namespace>", for
// example "/?r=v1/configmaps&ns=default" (core group) or
// "/?r=apps/v1/deployments" (all namespaces when ns is absent or empty).
package explorer
