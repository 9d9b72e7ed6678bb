// Package requests is the UI's request log: every request the sandbox
// served — from this UI, kubectl, client-go, scripts and the sandbox's own
// controllers — with method, path, status, latency, client and the user it
// ran as, and on demand who sent it, the authorizer's decision, the
// admission stages it went through (and what rejected it), its headers and
// bodies (pretty-printed), a watch's events as they
// were sent, the request as a curl command and the kubectl command that
// sends it. New entries arrive live (see live.go).
//
// It reads the sandbox's journal (package playground/journal); filters are
// query parameters, so a filtered log is bookmarkable:
// "/ui/requests?verb=watch&resource=pods&status=4xx&client=kubectl&user=alice".
package requests
