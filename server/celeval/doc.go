// Package celeval is how the engine runs CEL: a CRD schema's
// x-kubernetes-validations and a ValidatingAdmissionPolicy's expressions,
// compiled and evaluated by package celrules, and the type check of a
// policy's expressions.
//
// Natively (local.go) celrules runs in process. In the browser (remote_js.go)
// cel-go is not linked into the engine at all: celrules runs in a second
// WebAssembly module, wasm/cel, which the host (static/worker.js, or
// wasm/node/run.mjs under Node) loads the first time the engine needs it.
// The two exchange the JSON of package celtypes, and what a module compiled
// is named by a handle, released once the engine no longer holds it.
//
// Every call takes a context and may fail as a whole (the module could not
// be loaded): its error is then a Kubernetes InternalError for the request.
// Nothing is compiled before it is needed: a CRD's rules on the first write
// that validates an object, not when the CRD is served.
package celeval
