package server

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"kubeplay/server/encoding"
)

// watchStream is the transport of a watch: it knows how events travel
// (chunked HTTP, WebSocket messages), not which events a watch sends.
type watchStream interface {
	// start commits the response (status and headers, or the WebSocket
	// upgrade); later calls do nothing. Before it, the watch may still
	// answer with an HTTP error instead.
	start()
	// send writes one event, starting the stream if needed; false when the
	// client is gone and the watch should end.
	send(ev watchEvent) bool
	// context derives the watch's context from parent, ending it when the
	// transport notices that the client went away.
	context(parent context.Context) context.Context
	// finish ends the stream once the watch is over.
	finish()
}

// newEventStream returns the transport r asks for: a WebSocket when it asks
// to upgrade (natively; see websocket_js.go), otherwise a chunked HTTP
// response. conv converts each event's object into the negotiated
// representation.
func newEventStream(w http.ResponseWriter, r *http.Request, conv *converter) watchStream {
	if isWebSocket(r) {
		if ws := newWebSocketStream(w, r, conv); ws != nil {
			return ws
		}
	}
	f, _ := w.(http.Flusher)
	return &chunkedStream{w: w, flusher: f, conv: conv}
}

// isWebSocket reports whether r asks to upgrade to a WebSocket.
func isWebSocket(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Upgrade"), "websocket") &&
		strings.Contains(strings.ToLower(r.Header.Get("Connection")), "upgrade")
}

// encodeEvent encodes one event as the JSON object a watch sends (or in
// CBOR or protobuf, when negotiated; a protobuf event is not framed yet),
// its object converted as the client asked (a Table of one row, metadata
// only). Status objects of ERROR events are sent as they are.
func (c *converter) encodeEvent(ev watchEvent) ([]byte, error) {
	if ev.encoded != nil {
		return ev.encoded, nil
	}
	o := ev.Object
	if obj, ok := o.(object); ok {
		var err error
		if o, err = c.object(obj); err != nil {
			return nil, err // a list conversion: the stream ends, empty, as on the oracle
		}
		if c.as.As == encoding.AsTable {
			c.columnsSent = true
		}
	}
	if c.as.MediaType == encoding.Protobuf {
		body, err := encoding.MarshalProtobuf(o)
		if err != nil {
			return nil, err
		}
		return encoding.WatchEventProtobuf(ev.Type, body)
	}
	body, err := encoding.Marshal(o)
	if err != nil {
		return nil, err
	}
	if c.as.MediaType == encoding.CBOR {
		if body, err = encoding.JSONToCBOR(body); err != nil {
			return nil, err
		}
		return encoding.WatchEventCBOR(ev.Type, body)
	}
	return json.Marshal(struct {
		Type   string          `json:"type"`
		Object json.RawMessage `json:"object"`
	}{ev.Type, body})
}

// chunkedStream writes watch events as a stream of JSON objects, one per
// line, as a CBOR sequence, or as length-prefixed protobuf frames, flushing
// each.
type chunkedStream struct {
	w       http.ResponseWriter
	flusher http.Flusher
	conv    *converter
	started bool
	line    []byte // a JSON event and its newline, written at once
}

// maxLineBuffer is the largest JSON event a stream copies to write it with
// its newline in one Write (which a recorder of the stream, the request
// journal, then takes as one whole line); a larger one goes in two writes
// rather than held in memory for the rest of the watch.
const maxLineBuffer = 64 << 10

func (e *chunkedStream) start() {
	if e.started {
		return
	}
	e.started = true
	mt := encoding.JSON
	switch e.conv.as.MediaType {
	case encoding.CBOR:
		mt = encoding.CBORSeq
	case encoding.Protobuf:
		mt = encoding.ProtobufWatch
	}
	e.w.Header().Set("Content-Type", mt)
	e.w.Header().Set("Cache-Control", "no-cache, private")
	e.w.WriteHeader(http.StatusOK)
	e.flush()
}

// context is parent: net/http cancels a request's context when its client
// goes away.
func (e *chunkedStream) context(parent context.Context) context.Context { return parent }

// finish does nothing: returning from the handler ends the response.
func (e *chunkedStream) finish() {}

func (e *chunkedStream) flush() {
	if e.flusher != nil {
		e.flusher.Flush()
	}
}

var newline = []byte("\n")

func (e *chunkedStream) send(ev watchEvent) bool {
	e.start()
	b, err := e.conv.encodeEvent(ev)
	if err != nil {
		return false
	}
	switch {
	case e.conv.as.MediaType == encoding.Protobuf:
		b = encoding.ProtobufFrame(b)
	case e.conv.as.MediaType == encoding.JSON && len(b) < maxLineBuffer:
		e.line = append(append(e.line[:0], b...), '\n')
		b = e.line
	case e.conv.as.MediaType == encoding.JSON:
		if _, err := e.w.Write(b); err != nil {
			return false
		}
		b = newline
	}
	if _, err := e.w.Write(b); err != nil {
		return false
	}
	e.flush()
	return true
}
