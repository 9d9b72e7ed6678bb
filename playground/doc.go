// Package playground holds sandboxes: one Kubernetes API server over one
// store, together with what a learning cluster needs around the API — the
// controllers a real cluster runs (for now the namespace controller), the
// journal of every request it serves (package journal), and later scenarios
// and snapshots.
package playground
