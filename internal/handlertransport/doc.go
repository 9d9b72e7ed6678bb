// Package handlertransport serves HTTP requests with an http.Handler in
// process: an http.RoundTripper for the clients (an http.Client, the
// console, the watch view) that talk to the playground's own API without a
// network. The answer streams: the response returns as soon as the handler
// commits its header, and its body is read as the handler writes it, so a
// watch's events arrive one by one while the handler still runs. It links
// no network code, and works the same natively and in the browser build.
//
// kubeplay/server/inproc is its buffered sibling, for the simulated
// controllers: no goroutine, the whole answer read once the handler
// returns, decoded as client-go would.
package handlertransport
