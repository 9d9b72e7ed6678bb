//go:build js

package server

import "net/http"

// In the browser no request can upgrade its connection (see
// websocket_js.go): exec and attach answer their error as a Status.
func answerInStream(http.ResponseWriter, *http.Request, error) bool { return false }
