//go:build js

package server

import "net/http"

// In the browser, requests reach the engine through kubeplay.fetch, which
// cannot upgrade a connection: a watch that asks for a WebSocket gets the
// chunked stream, and gorilla/websocket stays out of the WebAssembly
// download.
func newWebSocketStream(http.ResponseWriter, *http.Request, *converter) watchStream { return nil }
