// Package lessons serves the built-in scenarios as lessons (/ui/lessons):
// one step at a time in the UI's own cluster, the explanation beside each
// step, what the step sent and got, and links into the views that make it
// visible. Progress is kept by the handler, so in the browser it lives as
// long as the tab; a link with ?step=N opens a lesson at step N.
package lessons
