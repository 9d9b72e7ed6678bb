// Package server is the Kubernetes API engine: one http.Handler that turns
// API requests into store operations with the semantics of kube-apiserver.
//
// It is platform-neutral (no listener, no cgo, no os/exec) so the same code
// serves natively and inside the WebAssembly build. Objects are kept as JSON
// in the store under etcd-style keys (/registry/<resource>/<namespace>/<name>);
// the store's revision of a key is the object's resourceVersion, filled in on
// every read rather than stored.
package server
