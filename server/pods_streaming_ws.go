//go:build !js

package server

import (
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/gorilla/websocket"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// streamUpgrader accepts the WebSocket handshake of exec and attach as
// kube-apiserver does, without an Origin header (kubectl sends none).
var streamUpgrader = websocket.Upgrader{
	CheckOrigin: func(*http.Request) bool { return true },
	Error:       func(w http.ResponseWriter, _ *http.Request, status int, _ error) { w.WriteHeader(status) },
}

// errorChannel is the stream of the remote command protocols that carries
// the command's final Status.
const errorChannel = 3

// answerInStream answers an exec or attach that asks for a WebSocket as
// kube-apiserver does when the container's streams fail: it accepts the
// upgrade, sends err's Status on the error channel and closes, so that the
// client reports it and exits. It reports false, having written nothing,
// when r does not ask for a WebSocket of the channel protocols.
func answerInStream(w http.ResponseWriter, r *http.Request, err error) bool {
	protocols := websocket.Subprotocols(r)
	if !isWebSocket(r) || len(protocols) == 0 {
		return false
	}
	conn, upgradeErr := streamUpgrader.Upgrade(w, r, http.Header{"Sec-Websocket-Protocol": {protocols[0]}})
	if upgradeErr != nil {
		return true // the upgrader has answered
	}
	defer conn.Close()
	st := apierrors.NewInternalError(err).Status()
	var se apierrors.APIStatus
	if errors.As(err, &se) {
		st = se.Status()
	}
	st.TypeMeta = metav1.TypeMeta{} // as kube-apiserver sends it
	body, _ := json.Marshal(st)
	conn.WriteMessage(websocket.BinaryMessage, append([]byte{errorChannel}, body...))
	conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
	return true
}
