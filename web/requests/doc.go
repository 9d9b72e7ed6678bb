// Package requests is the UI's request log: the requests the sandbox
// served — from kubectl, client-go, scripts, the console, this UI and the
// sandbox's own controllers — with method, path, status, latency, client and the user it
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
// stand-ins (see controller in entry.go). By default the log is for
// humans: it shows what a person or their client sent, and hides the
// controllers' requests (?controllers=show shows them) and the reads this
// UI makes to draw its pages (?ui=show), saying how many of each it hid.
// The requests of one kubectl command (newer kubectl versions send
// Kubectl-Command and Kubectl-Session headers) are labelled with the
// command, drawn together, and link to that run alone (?session=).
//
// It reads the sandbox's journal (package playground/journal); filters are
// query parameters, so a filtered log is bookmarkable:
// "/ui/requests?verb=watch&resource=pods&status=4xx&client=kubectl&user=alice&controllers=show".
package requests
