// Package sandboxes is the UI's page of the playground's sandboxes
// (/ui/sandboxes): it lists them, creates one (empty, set up by a built-in
// scenario, or from an uploaded snapshot), resets and deletes them, links
// to their kubeconfig and snapshot, and runs a scenario (a built-in or the
// visitor's) in one, showing each step's result as it ends
// (web/assets/sandboxes.js reads the playground API's streamed run). It
// reads and writes everything through the playground API (playground/api),
// in process; where there is none (the browser build, hosted mode) the
// page says so.
package sandboxes
