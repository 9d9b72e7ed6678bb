// Package web is kubeplay's user interface: server-rendered pages built with
// templ, which read everything they show from the Kubernetes API through
// in-memory requests to its http.Handler. It is platform-neutral (no
// listener, no os/exec, no cgo), so the same components render in the native
// server and inside the WebAssembly build.
//
// Layout, one folder per feature:
//
//	web/            New: the site's router (UI routes, everything else to the API)
//	web/layout/     the page shell
//	web/explorer/   "/": resource types from discovery, and a type's objects
//	web/sandboxes/  "/ui/sandboxes": the playground's sandboxes and scenario runs
//	web/assets/     the stylesheet, embedded, served under /ui/assets/
//	web/internal/apiclient/  in-memory GETs against the API handler
//	web/internal/fakeapi/    a canned API for tests
package web
