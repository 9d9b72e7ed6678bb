// Package cli is a command line in kubectl's syntax for the commands
// learners type first, run against a Kubernetes API http.Handler (the
// sandbox's) in process: natively and inside the WebAssembly build alike.
// Every command is made of real API requests — the ones kubectl would send,
// or close to them — so the request log shows what each command did.
//
// Supported: get (-o wide|yaml|json|name, -l, -n, -A, -w; Table output as
// kubectl prints it), describe (basic: metadata, then the object as YAML),
// create -f, apply -f (client-side, with the last-applied annotation, or
// --server-side with --field-manager and
// --force-conflicts), delete (--cascade), patch (--type
// strategic|merge|json), label, annotate, scale, explain, api-resources,
// and raw HTTP ("GET /api/v1/namespaces", the file as the body).
//
// Emulated, not kubectl: client-side apply sends a two-way JSON merge patch
// (last applied → file) where kubectl sends a three-way strategic merge
// patch; scale patches spec.replicas when the sandbox serves no scale
// subresource for the type, and says so; describe shows no events or
// related objects; explain reads the OpenAPI v3 documents and prints one
// level of fields.
package cli
