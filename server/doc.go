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
// as stays in its context. Writes then pass admit before they are stored.
package server
