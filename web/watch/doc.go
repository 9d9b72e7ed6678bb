// Package watch is the live watch view: a form choosing a resource type,
// namespace, selectors, starting resourceVersion, bookmarks and
// sendInitialEvents, and the events of that watch as they arrive, each with
// its resourceVersion and, for a changed object, a diff against the version
// seen before. The watch is a real API request through the sandbox's
// handler (so the request log shows it), streamed in process and relayed
// over a WebSocket (live.go states the transport's policies).
package watch
