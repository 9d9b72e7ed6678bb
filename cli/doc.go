// Package cli is a command line in kubectl's syntax for the commands
// learners type first, run against a Kubernetes API http.Handler (the
// sandbox's) in process: natively and inside the WebAssembly build alike.
// Every command is made of real API requests — the ones kubectl would send,
// or close to them — so the request log shows what each command did.
//
// Supported: get (-o wide|yaml|json|name, -l, -n, -A, -w; Table output as
// kubectl prints it), describe (as kubectl for ConfigMaps and Namespaces;
// other kinds: kubectl's header, then the object as YAML),
// create -f, apply -f (client-side, with the last-applied annotation, or
// --server-side with --field-manager and
// --force-conflicts), delete (--cascade), patch (--type
// strategic|merge|json), label, annotate, scale, explain, api-resources,
// and raw HTTP ("GET /api/v1/namespaces", the file as the body).
//
// Emulated, not kubectl: client-side apply sends a two-way JSON merge patch
// (last applied → file) where kubectl sends a three-way strategic merge
// patch; scale patches spec.replicas when the sandbox serves no scale
// subresource for the type, and says so; describe is basic for kinds other
// than ConfigMap and Namespace.
//
// The outputs are kubectl's, byte for byte where the same request gives the
// same answer: e2e/console_test.go runs both against one server.
package cli
