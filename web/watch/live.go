package watch

import (
	"bytes"
	"net/http"
	"time"

	"kubeplay/web/internal/livesocket"
	"kubeplay/web/internal/status"
	"kubeplay/web/internal/yamlview"
)

// The live watch is a WebSocket carrying liveMessage frames (JSON), one per
// watch event, rendered as HTML by the Event component. The page opens it
// with the form's options; on reconnecting it passes resourceVersion=<the
// last it saw> so the watch resumes where it stopped.
//
// Slow clients: events wait in a queue of queueSize; when a client lets it
// fill, the server closes the connection (1013, "try again later") and
// the page reconnects from its last resourceVersion, so nothing is lost
// while the history lasts (and 410 Gone is shown when it does not).
// Keepalive and origin check: see livesocket.
type liveMessage struct {
	Type            string `json:"type"`
	ResourceVersion string `json:"resourceVersion,omitempty"`
	Code            int    `json:"code,omitempty"` // an ERROR event's or a failed request's status
	HTML            string `json:"html"`
}

// queueSize bounds the events waiting for a slow client.
const queueSize = 256

func (h *Handler) live(w http.ResponseWriter, r *http.Request) {
	o := optionsFrom(r.URL.Query())
	conn, ctx, cancel, ok := livesocket.Open(w, r)
	if !ok {
		return
	}
	defer conn.Close()
	defer cancel()
	send := conn.WriteJSON
	render := func(e EventProps) string {
		var buf bytes.Buffer
		_ = Event(e).Render(ctx, &buf)
		return buf.String()
	}

	t, err := h.lookup(ctx, o)
	if err != nil {
		st := status.From(err)
		send(liveMessage{Type: "ERROR", Code: st.Code, HTML: render(EventProps{Type: "ERROR", Code: st.Code, Reason: st.Reason, Message: st.Message})})
		return
	}
	path := o.request(t)
	code, dec, body, err := openWatch(ctx, h.api, path)
	if err != nil || code != http.StatusOK {
		msg := statusMessage(code, body)
		if err != nil {
			msg = err.Error()
		}
		send(liveMessage{Type: "ERROR", Code: code, HTML: render(EventProps{Type: "ERROR", Message: "GET " + path + ": " + msg})})
		return
	}

	queue := make(chan event, queueSize)
	go func() { // reads the watch into the queue
		defer close(queue)
		for {
			var ev event
			if dec.Decode(&ev) != nil {
				return
			}
			select {
			case queue <- ev:
			default:
				cancel() // the client fell behind: it reconnects and resumes
				return
			}
		}
	}()
	prev := map[string]string{} // object key → its last YAML, for diffs
	ping := time.NewTicker(livesocket.PingInterval)
	defer ping.Stop()
	for {
		select {
		case <-ping.C:
			if !conn.Ping() {
				return
			}
		case ev, ok := <-queue:
			if !ok {
				reason := "the watch ended; reconnect"
				if ctx.Err() != nil {
					reason = "fell behind; reconnect"
				}
				conn.CloseTryAgain(reason)
				return
			}
			m := liveMessage{Type: ev.Type}
			e := eventProps(ev, prev)
			m.ResourceVersion, m.Code = e.ResourceVersion, e.Code
			m.HTML = render(e)
			if !send(m) {
				return
			}
		}
	}
}

// eventProps describes ev, diffing a changed object against its previous
// version (managedFields left out: they change with every write).
func eventProps(ev event, prev map[string]string) EventProps {
	e := EventProps{Type: ev.Type}
	md, _ := ev.Object["metadata"].(map[string]any)
	s := func(k string) string { v, _ := md[k].(string); return v }
	e.ResourceVersion = s("resourceVersion")
	if ev.Type == "ERROR" {
		c, _ := ev.Object["code"].(float64)
		e.Code = int(c)
		e.Reason, _ = ev.Object["reason"].(string)
		e.Message, _ = ev.Object["message"].(string)
		return e
	}
	if ev.Type == "BOOKMARK" {
		if a, ok := md["annotations"].(map[string]any); ok && a["k8s.io/initial-events-end"] == "true" {
			e.Message = "initial events end"
		}
		return e
	}
	e.Namespace, e.Name = s("namespace"), s("name")
	key := e.Namespace + "/" + e.Name
	obj := map[string]any{}
	for k, v := range ev.Object {
		obj[k] = v
	}
	if md != nil {
		m := map[string]any{}
		for k, v := range md {
			if k != "managedFields" {
				m[k] = v
			}
		}
		obj["metadata"] = m
	}
	text := yamlview.Text(obj)
	old, seen := prev[key]
	switch {
	case ev.Type == "DELETED":
		delete(prev, key)
		e.YAML = text
	case seen:
		e.Diff = diffLines(old, text, 2)
		prev[key] = text
	default:
		e.YAML = text
		prev[key] = text
	}
	return e
}
