// Package playground holds sandboxes: one Kubernetes API server over one
// store, together with what a learning cluster needs around the API — the
// controllers a real cluster runs (for now the namespace controller), and
// later scenarios, the request journal and snapshots.
package playground
