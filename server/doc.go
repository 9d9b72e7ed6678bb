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
// A request's path is handler → registry → strategy → store. Server is the
// handlers: routing, discovery, authentication and the responses
// (create.go, update.go, patch.go, delete.go, get.go, list.go, watch.go
// parse and decode, then encode). It holds no store: everything stored is
// reached through its registry (registry.go; its storage, keys and encoding
// in registry_store.go, its deletion in registry_delete.go), the generic
// registry store and the only holder of the store, which owns the catalog
// lookups it needs, the clock, the field managers and the admission chain.
// As kube-apiserver builds a registry.Store per resource, a request resolves
// its resource's store once (request.store, a resourceStore): the strategy,
// the store keys, the codec to and from storage, whether the status is a
// subresource. The registry asks these of it and looks none up again.
//
// A PUT, the three patch types and an apply (and a write through /scale,
// /status, /finalize or /approval) each become a function computing the new
// object from the live one, fed to the registry's one update (updateWith,
// retried on a conflict, a missing object created where the write allows it
// through the one create, createWith); a DELETE is the registry's delete
// (graceful, finalizers, propagation), a read its get, list or watch. The
// registry admits, validates, records managedFields and stores once; a
// write that would store the bytes already stored stores nothing.
//
// Admission runs in kube-apiserver's order (admission.go): the strategy's
// mutating plugins, the mutating webhooks, the type's own authorization of
// the write (RBAC's escalation check), validation, then the validating
// plugins, ValidatingAdmissionPolicies (vap.go), the validating webhooks
// (webhooks.go, package webhook) and ResourceQuota (quota.go).
//
// What differs by resource is asked of its strategy (strategy.go): the
// facts of each resource in a table per API group (strategies_<group>.go),
// the behaviour of those with their own in hooks (strategy_<resource>.go;
// strategy_custom.go for every custom resource), which receive the registry
// or its admission chain. Subresources that are no view of the stored
// object (a pod's binding, eviction, log, exec and proxy; a
// ServiceAccount's token) have handlers of their own (subresourceHandlers),
// which also reach the store through the registry. Warnings travel in the
// request's context (warnings.go) to its response headers. The CRD
// machinery that needs no store is package apiextensions; conversions
// between a built-in resource's versions are package conversion.
package server
