package journal

import (
	"errors"
	"net/http"
	"sync"
	"time"

	"kubeplay/server/audit"
)

// Limits bound the memory a journal holds.
type Limits struct {
	// Entries is how many requests are kept (default 1000).
	Entries int
	// BodyBytes caps each recorded request or response body (default 64 KiB);
	// longer bodies are cut and marked truncated.
	BodyBytes int
	// WatchEvents caps the events kept per watch (default 1000); later ones
	// are counted but not kept.
	WatchEvents int
}

func (l Limits) withDefaults() Limits {
	if l.Entries <= 0 {
		l.Entries = 1000
	}
	if l.BodyBytes <= 0 {
		l.BodyBytes = 64 << 10
	}
	if l.WatchEvents <= 0 {
		l.WatchEvents = 1000
	}
	return l
}

// Entry is one request and its answer.
type Entry struct {
	// Seq numbers entries from 1 in the order requests arrived.
	Seq       int64         `json:"seq"`
	Time      time.Time     `json:"time"`
	Method    string        `json:"method"`
	Path      string        `json:"path"`
	Query     string        `json:"query,omitempty"`
	UserAgent string        `json:"userAgent,omitempty"`
	Request   Message       `json:"request"`
	Status    int           `json:"status"`
	Latency   time.Duration `json:"latency"`
	Response  Message       `json:"response"`
	// Watch holds the events of a streamed response (a watch), in order.
	Watch *Stream `json:"watch,omitempty"`
	// Done is false while the response is still being written (a watch).
	Done bool `json:"done"`
	// Audit is what the API server found out: who the request ran as, the
	// authorizer's decision, the admission stages it passed through.
	Audit audit.Record `json:"audit"`
}

// Message is the header and body of a request or response.
type Message struct {
	Header    http.Header `json:"header,omitempty"`
	Body      []byte      `json:"body,omitempty"`
	Truncated bool        `json:"truncated,omitempty"`
}

// Stream is what a watch sent.
type Stream struct {
	Events []Event `json:"events"`
	// Dropped counts events sent after the journal stopped keeping them.
	Dropped int `json:"dropped,omitempty"`
}

// Event is one frame of a watch stream (one JSON watch event).
type Event struct {
	Time time.Time `json:"time"`
	Data []byte    `json:"data"`
}

// Update is what subscribers receive: a new or finished entry, or one more
// event of a watch.
type Update struct {
	// Entry is set when a request was answered (Done false for a watch
	// whose stream goes on) and again when a watch ends.
	Entry *Entry `json:"entry,omitempty"`
	// Seq, Event and Index (the event's position in the watch's stream) are
	// set for each event a watch sends.
	Seq   int64  `json:"seq,omitempty"`
	Event *Event `json:"event,omitempty"`
	Index int    `json:"index,omitempty"`
}

// ErrTooSlow ends a subscription whose receiver fell behind; it resumes with
// Follow from the last sequence number it saw.
var ErrTooSlow = errors.New("journal: subscriber too slow, page from the last entry seen")

// subscriberBuffer is how many updates may wait for a subscriber before it
// is dropped: enough for bursts (a kubectl apply of many objects), small
// enough that one stuck browser tab holds little memory.
const subscriberBuffer = 256

// Journal holds the newest entries of one sandbox.
type Journal struct {
	limits Limits
	now    func() time.Time

	mu      sync.Mutex
	seq     int64
	entries []*Entry // ring, oldest first once full
	start   int      // index of the oldest entry once the ring is full
	subs    map[*Subscription]struct{}
}

// New returns an empty journal. now is its clock (time.Now if nil).
func New(limits Limits, now func() time.Time) *Journal {
	if now == nil {
		now = time.Now
	}
	return &Journal{limits: limits.withDefaults(), now: now, subs: map[*Subscription]struct{}{}}
}

// LastSeq is the sequence number of the newest entry (0 before the first).
func (j *Journal) LastSeq() int64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.seq
}

// Page returns copies of up to limit entries with a sequence number above
// after, oldest first, and the sequence number of the oldest entry still
// held (0 if none), so a reader can tell that entries fell off between two
// pages.
func (j *Journal) Page(after int64, limit int) (entries []Entry, oldest int64) {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.pageLocked(after, limit)
}

// pageLocked is Page; it requires j.mu.
func (j *Journal) pageLocked(after int64, limit int) (entries []Entry, oldest int64) {
	n := len(j.entries)
	if n == 0 {
		return nil, 0
	}
	oldest = j.at(0).Seq
	first := max(int(after-oldest+1), 0)
	for i := first; i < n && (limit <= 0 || len(entries) < limit); i++ {
		entries = append(entries, j.at(i).snapshot())
	}
	return entries, oldest
}

func (j *Journal) at(i int) *Entry { return j.entries[(j.start+i)%len(j.entries)] }

// snapshot copies e for a reader; events already appended never change, so
// the copy shares them.
func (e *Entry) snapshot() Entry {
	c := *e
	if e.Watch != nil {
		w := *e.Watch
		w.Events = w.Events[:len(w.Events):len(w.Events)]
		c.Watch = &w
	}
	return c
}

// Subscription delivers updates until Stop or until the receiver falls
// behind (then Err is ErrTooSlow and Updates is closed).
type Subscription struct {
	j       *Journal
	updates chan Update
	err     error
}

// Updates delivers new entries and watch events in order. It is closed when
// the subscription ends.
func (s *Subscription) Updates() <-chan Update { return s.updates }

// Err says why Updates was closed: nil after Stop, ErrTooSlow otherwise.
func (s *Subscription) Err() error {
	s.j.mu.Lock()
	defer s.j.mu.Unlock()
	return s.err
}

// Stop ends the subscription; it is idempotent.
func (s *Subscription) Stop() {
	s.j.mu.Lock()
	defer s.j.mu.Unlock()
	s.j.unsubscribe(s, nil)
}

// Follow catches up, then follows: it delivers copies of the entries with a
// sequence number above after (as Page returns them, each as an Update with
// Entry set), then every update from the call on. Both are taken in one hold
// of the journal's lock, so an update recorded meanwhile is neither lost
// between the catch-up and the live updates nor delivered twice: an entry
// the catch-up shows unfinished comes again only when it changes (answered,
// or its watch ended), and each watch event comes once, in the entry or
// after it. Entries that fell off the ring before the call do not come.
func (j *Journal) Follow(after int64) *Subscription {
	j.mu.Lock()
	defer j.mu.Unlock()
	catchUp, _ := j.pageLocked(after, 0)
	// Room for the whole catch-up besides the usual buffer, so only live
	// updates the receiver does not take can make it too slow.
	s := &Subscription{j: j, updates: make(chan Update, len(catchUp)+subscriberBuffer)}
	for i := range catchUp {
		s.updates <- Update{Entry: &catchUp[i]}
	}
	j.subs[s] = struct{}{}
	return s
}

// unsubscribe requires j.mu.
func (j *Journal) unsubscribe(s *Subscription, err error) {
	if _, ok := j.subs[s]; !ok {
		return
	}
	delete(j.subs, s)
	s.err = err
	close(s.updates)
}

// publish requires j.mu. It never blocks: a full subscriber is dropped.
func (j *Journal) publish(u Update) {
	for s := range j.subs {
		select {
		case s.updates <- u:
		default:
			j.unsubscribe(s, ErrTooSlow)
		}
	}
}

// begin adds a new entry for a request that just arrived, dropping the
// oldest if the ring is full. Subscribers hear of it when it is answered.
func (j *Journal) begin(e *Entry) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.seq++
	e.Seq = j.seq
	if len(j.entries) < j.limits.Entries {
		j.entries = append(j.entries, e)
		return
	}
	j.entries[j.start] = e
	j.start = (j.start + 1) % len(j.entries)
}

// update changes e under the journal's lock (readers copy entries under it)
// and, if publish, tells subscribers.
func (j *Journal) update(e *Entry, publish bool, change func(*Entry)) {
	j.mu.Lock()
	defer j.mu.Unlock()
	change(e)
	if publish {
		c := e.snapshot()
		j.publish(Update{Entry: &c})
	}
}

// event appends one watch event to e.
func (j *Journal) event(e *Entry, data []byte) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if len(e.Watch.Events) >= j.limits.WatchEvents {
		e.Watch.Dropped++
		return
	}
	ev := Event{Time: j.now(), Data: data}
	e.Watch.Events = append(e.Watch.Events, ev)
	j.publish(Update{Seq: e.Seq, Event: &ev, Index: len(e.Watch.Events) - 1})
}
