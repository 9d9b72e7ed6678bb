// Package requests is the UI's request log: every request the sandbox
// served — from this UI, kubectl, client-go, scripts and the sandbox's own
// controllers — with method, path, status, latency, client and the user it
// ran as, and on demand who sent it, the authorizer's decision, the
// admission stages it went through (and what rejected it), its headers and
// bodies (pretty-printed), a watch's events as they
// were sent, the request as a curl command and the kubectl command that
// sends it. New entries arrive live (see live.go).
//
// The requests of the cluster's controllers — kube-controller-manager's
// (known by their User-Agent or the kube-system service account they act
// as), the scheduler's, and kubeplay's simulated kubelets, workload
// controllers and finalizer bots (the system:kubeplay-simulator user) —
// are marked with the controller's name, and "simulated" for kubeplay's
// stand-ins (see controller in entry.go). ?controllers=hide hides them,
// saying how many it hid; by default they are shown.
//
// It reads the sandbox's journal (package playground/journal); filters are
// query parameters, so a filtered log is bookmarkable:
// "/ui/requests?verb=watch&resource=pods&status=4xx&client=kubectl&user=alice&controllers=hide".
package requests
