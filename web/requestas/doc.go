// Package requestas is the UI's "request as" switch: a user and groups that
// the UI's own API requests impersonate, with the Impersonate-User and
// Impersonate-Group headers kubectl's --as and --as-group send, so that a
// learner can watch the same page or write allowed for one user and
// forbidden for another (the API's 403 is shown as it came).
//
// The switch belongs to the sandbox's UI, not to a browser: every tab acts
// as the same identity, natively and in the browser build alike (where the
// engine sees no cookies). Requests from kubectl and other clients are
// never changed.
package requestas
