package requests

import (
	"bytes"
	"context"
	"net/http"
	"strconv"
	"time"

	"kubeplay/playground/journal"
	"kubeplay/web/internal/livesocket"
)

// The live log is a WebSocket carrying liveMessage frames (JSON). The page
// connects with ?after=<the newest seq it shows> and the page's filter; it
// first gets every matching entry after that, then each new or changed
// entry and each watch event as it happens. Entries come as rendered HTML
// (the same Entry component as the page) so the page needs no template of
// its own. A new request the filter hides only because of who sent it (a
// controller, or this UI drawing a page) comes as its seq with hidden
// saying which, so that the page counts it: nothing is hidden silently.
//
// Slow clients: the journal subscription buffers a bounded number of
// updates; a client that lets it fill is disconnected (close code 1013,
// "try again later") and reconnects with the newest seq it has, catching up
// from the journal. Keepalive and origin check: see livesocket.
type liveMessage struct {
	Seq int64 `json:"seq"`
	// HTML is a whole entry (replace or insert by seq) ...
	HTML string `json:"html,omitempty"`
	// ... or one watch event to append to the entry's events (index is its
	// position, so a repeat can be recognised).
	EventHTML string `json:"eventHTML,omitempty"`
	Index     int    `json:"index"`
	// ... or, when Hidden is set, a request the page hides, as sent by
	// "controllers" or "ui".
	Hidden string `json:"hidden,omitempty"`
}

func (h *Handler) live(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	filter := filterFrom(q)
	after, _ := strconv.ParseInt(q.Get("after"), 10, 64)
	conn, ctx, cancel, ok := livesocket.Open(w, r)
	if !ok {
		return
	}
	defer conn.Close()
	defer cancel()

	sub := h.journal.Follow(after)
	defer sub.Stop()
	s := &liveSession{conn: conn, filter: filter, host: r.Host, after: after, shown: map[int64]bool{}, hidden: map[int64]bool{}}
	ping := time.NewTicker(livesocket.PingInterval)
	defer ping.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ping.C:
			if !conn.Ping() {
				return
			}
		case u, ok := <-sub.Updates():
			if !ok {
				conn.CloseTryAgain("fell behind; reconnect")
				return
			}
			if u.Entry != nil && !s.sendEntry(ctx, *u.Entry) {
				return
			}
			if u.Event != nil && s.shown[u.Seq] && !s.sendEvent(ctx, u) {
				return
			}
		}
	}
}

// liveSession is one client's connection and what it was sent.
type liveSession struct {
	conn   *livesocket.Conn
	filter Filter
	host   string
	// after is the newest entry the page knew of: it counted the requests
	// it hid up to there.
	after  int64
	shown  map[int64]bool // entries sent, whose events follow
	hidden map[int64]bool // requests counted as hidden
}

func (s *liveSession) sendEntry(ctx context.Context, e journal.Entry) bool {
	props := entryProps(e, s.host)
	if as := s.filter.hides(props); as != "" {
		// Counted once, even when a watch's entry comes again as it ends.
		if e.Seq <= s.after || s.hidden[e.Seq] || s.shown[e.Seq] {
			return true
		}
		s.hidden[e.Seq] = true
		return s.write(liveMessage{Seq: e.Seq, Hidden: as})
	}
	if !s.filter.matches(props) {
		return true
	}
	s.shown[e.Seq] = true
	var buf bytes.Buffer
	if err := Entry(props).Render(ctx, &buf); err != nil {
		return false
	}
	return s.write(liveMessage{Seq: e.Seq, HTML: buf.String()})
}

func (s *liveSession) sendEvent(ctx context.Context, u journal.Update) bool {
	var buf bytes.Buffer
	if err := Event(u.Index, eventProps(*u.Event)).Render(ctx, &buf); err != nil {
		return false
	}
	return s.write(liveMessage{Seq: u.Seq, EventHTML: buf.String(), Index: u.Index})
}

func (s *liveSession) write(m liveMessage) bool { return s.conn.WriteJSON(m) }
