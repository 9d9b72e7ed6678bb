// Package emulation is the UI's switch of the Kubernetes release the
// cluster emulates and of the feature gates kubeplay follows: the header
// of every page shows the release and switches it; the page at Path says
// what an emulated release is and switches the gates too.
//
// An emulated release is that release's API surface on today's engine: the
// group versions it served (older betas back, newer ones gone), its
// removals (404) and deprecation warnings, and /version; the types it
// shares with v1.35 keep v1.35's fields and behaviour.
package emulation
