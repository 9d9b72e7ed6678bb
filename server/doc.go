// Package server is the Kubernetes API engine: one http.Handler that turns
// API requests into store operations with the semantics of kube-apiserver.
//
// It is platform-neutral (no listener, no cgo, no os/exec) so the same code
// serves natively and inside the WebAssembly build. Objects are kept as JSON
// in the store under etcd-style keys (/registry/<resource>/<namespace>/<name>);
// the store's revision of a key is the object's resourceVersion, filled in on
// every read rather than stored.
//
// Every request is first authenticated (server/authn: a bearer token, a
// ServiceAccount token, or anonymous; in-process callers may put their user
// in the request's context), then impersonation headers are applied, then
// RBAC authorizes it (server/authz) before it is routed; the user it runs
// as stays in its context.
//
// A write's path is handler → registry → strategy → store. The handlers
// (create.go, update.go, patch.go, delete.go) parse and decode; a PUT, the
// three patch types and an apply each become a function computing the new
// object from the live one, fed to the registry's one update (registry.go:
// updateWith, retried on a conflict, a missing object created where the
// write allows it through the one create, createWith). The registry admits,
// validates, records managedFields and stores once; a write that would
// store the bytes already stored stores nothing. What differs by resource
// is asked of its strategy: the facts of each resource in a table per API
// group (strategies_<group>.go), the behaviour of those with their own in
// hooks (strategy_<resource>.go; strategy_custom.go for every custom
// resource). Deletion (delete.go) is one generic path the strategies join.
// Mutating and validating webhooks are called from the registry, in
// kube-apiserver's order (webhooks.go, package webhook). Warnings travel in
// the request's context (warnings.go) to its response headers. The CRD
// machinery that needs no store is package apiextensions; conversions
// between a built-in resource's versions are package conversion.
package server
