// Package defaults fills in what kube-apiserver v1.35 fills in on the
// built-in kinds, as facts recorded from a real server (see
// ../testdata/scenarios/defaults-*.json):
//
//   - Apply is the defaulting kube-apiserver does when it decodes an object
//     into its Go types (a Deployment's replicas and strategy, a pod
//     template's restartPolicy and dnsPolicy, a container's
//     imagePullPolicy from its image's tag, a Service's type and
//     targetPorts). It runs before the field manager, so the writer of a
//     create or update owns these fields; an apply defaults its result
//     after merging, so the applier does not.
//   - PrepareForCreate is what the types' storage sets on a new object
//     after the field manager has run, so no manager owns it: a Pod's
//     status.phase and qosClass, a Job's generated selector and labels.
//
// Objects are decoded JSON (map[string]any); an absent, null or empty
// string field counts as unset, as a Go zero value does.
package defaults
