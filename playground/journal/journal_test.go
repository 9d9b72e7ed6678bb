package journal_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"kubeplay/playground/journal"
)

// clock advances a millisecond each time it is read.
func clock() func() time.Time {
	t := time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)
	return func() time.Time { t = t.Add(time.Millisecond); return t }
}

func echo(code int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		fmt.Fprintf(w, `{"got":%q}`, body)
	})
}

func serve(h http.Handler, method, target, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	req.Header.Set("User-Agent", "kubectl/v1.35.0 (linux/amd64) kubernetes/abc")
	req.Header.Set("Authorization", "Bearer secret-token")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func TestJournal_records(t *testing.T) {
	j := journal.New(journal.Limits{}, clock())
	rec := serve(j.Handler(echo(http.StatusCreated)), http.MethodPost, "/api/v1/namespaces/default/configmaps?dryRun=All", `{"kind":"ConfigMap"}`)
	if rec.Code != http.StatusCreated || rec.Body.String() != `{"got":"{\"kind\":\"ConfigMap\"}"}` {
		t.Fatalf("the client got %d %s", rec.Code, rec.Body)
	}
	entries, oldest := j.Page(0, 0)
	if len(entries) != 1 || oldest != 1 {
		t.Fatalf("Page: %d entries, oldest %d", len(entries), oldest)
	}
	e := entries[0]
	want := journal.Entry{Seq: 1, Method: "POST", Path: "/api/v1/namespaces/default/configmaps", Query: "dryRun=All",
		UserAgent: "kubectl/v1.35.0 (linux/amd64) kubernetes/abc", Status: 201, Done: true}
	if e.Seq != want.Seq || e.Method != want.Method || e.Path != want.Path || e.Query != want.Query ||
		e.UserAgent != want.UserAgent || e.Status != want.Status || e.Done != want.Done {
		t.Errorf("entry %+v, want %+v", e, want)
	}
	if string(e.Request.Body) != `{"kind":"ConfigMap"}` || string(e.Response.Body) != rec.Body.String() {
		t.Errorf("bodies: request %s, response %s", e.Request.Body, e.Response.Body)
	}
	if e.Response.Header.Get("Content-Type") != "application/json" || e.Request.Header.Get("User-Agent") == "" ||
		e.Request.Header.Get("Authorization") != "Bearer <redacted>" {
		t.Errorf("headers: request %v, response %v", e.Request.Header, e.Response.Header)
	}
	if e.Latency <= 0 {
		t.Errorf("latency %v", e.Latency)
	}
}

func TestJournal_truncatesBodies(t *testing.T) {
	j := journal.New(journal.Limits{BodyBytes: 8}, nil)
	serve(j.Handler(echo(http.StatusOK)), http.MethodPut, "/api/v1/namespaces/x", "0123456789")
	entries, _ := j.Page(0, 0)
	e := entries[0]
	if string(e.Request.Body) != "01234567" || !e.Request.Truncated || string(e.Response.Body) != `{"got":"` || !e.Response.Truncated {
		t.Errorf("request %q (truncated %v), response %q (truncated %v)", e.Request.Body, e.Request.Truncated, e.Response.Body, e.Response.Truncated)
	}
}

func TestJournal_Page(t *testing.T) {
	j := journal.New(journal.Limits{Entries: 3}, nil)
	h := j.Handler(echo(http.StatusOK))
	for i := range 5 {
		serve(h, http.MethodGet, fmt.Sprintf("/api/v1/namespaces/n%d", i+1), "")
	}
	tests := []struct {
		after    int64
		limit    int
		wantSeqs string
	}{
		{0, 0, "3 4 5"},
		{3, 0, "4 5"},
		{0, 2, "3 4"},
		{5, 0, ""},
	}
	for _, tt := range tests {
		entries, oldest := j.Page(tt.after, tt.limit)
		var seqs []string
		for _, e := range entries {
			seqs = append(seqs, fmt.Sprint(e.Seq))
			if want := fmt.Sprintf("/api/v1/namespaces/n%d", e.Seq); e.Path != want {
				t.Errorf("entry %d has path %s, want %s", e.Seq, e.Path, want)
			}
		}
		if got := strings.Join(seqs, " "); got != tt.wantSeqs || oldest != 3 {
			t.Errorf("Page(%d, %d): seqs %q, oldest %d; want %q, 3", tt.after, tt.limit, got, oldest, tt.wantSeqs)
		}
	}
}

// watchHandler streams three events, one per write, the last split in two
// writes, each followed by a flush, pausing until told to go on.
func watchHandler(proceed <-chan struct{}) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		flusher := w.(http.Flusher)
		for _, chunk := range []string{"{\"type\":\"ADDED\"}\n", "{\"type\":\"MODIFIED\"}\n{\"type\":", "\"DELETED\"}\n"} {
			<-proceed
			io.WriteString(w, chunk)
			flusher.Flush()
		}
	})
}

func TestJournal_watch(t *testing.T) {
	j := journal.New(journal.Limits{}, nil)
	sub := j.Follow(0)
	defer sub.Stop()
	proceed := make(chan struct{})
	done := make(chan *httptest.ResponseRecorder)
	go func() { done <- serve(j.Handler(watchHandler(proceed)), http.MethodGet, "/api/v1/pods?watch=1", "") }()

	first := <-sub.Updates()
	if first.Entry == nil || first.Entry.Done || first.Entry.Status != 200 || first.Entry.Watch == nil {
		t.Fatalf("first update %+v, want the watch's entry, not done", first)
	}
	for _, want := range []string{`{"type":"ADDED"}`, `{"type":"MODIFIED"}`} {
		proceed <- struct{}{}
		u := <-sub.Updates()
		if u.Event == nil || u.Seq != 1 || string(u.Event.Data) != want {
			t.Fatalf("update %+v, want event %s", u, want)
		}
	}
	// Mid-stream, the entry already holds the events sent so far.
	entries, _ := j.Page(0, 0)
	if got := len(entries[0].Watch.Events); got != 2 || entries[0].Done {
		t.Errorf("mid-stream: %d events, done %v", got, entries[0].Done)
	}
	proceed <- struct{}{}
	if u := <-sub.Updates(); u.Event == nil || string(u.Event.Data) != `{"type":"DELETED"}` {
		t.Fatalf("update %+v, want the DELETED event", u)
	}
	last := <-sub.Updates()
	if last.Entry == nil || !last.Entry.Done || len(last.Entry.Watch.Events) != 3 {
		t.Fatalf("last update %+v, want the finished entry with 3 events", last)
	}
	if rec := <-done; !rec.Flushed || !strings.HasSuffix(rec.Body.String(), "\"DELETED\"}\n") {
		t.Errorf("the client got (flushed %v) %q", rec.Flushed, rec.Body)
	}
}

func TestJournal_dropsSlowSubscribers(t *testing.T) {
	j := journal.New(journal.Limits{}, nil)
	slow := j.Follow(0)
	h := j.Handler(echo(http.StatusOK))
	for range 300 { // more than a subscriber may have waiting
		serve(h, http.MethodGet, "/api", "")
	}
	n := 0
	for range slow.Updates() {
		n++
	}
	if !errors.Is(slow.Err(), journal.ErrTooSlow) || n == 0 || n >= 300 {
		t.Errorf("slow subscriber: got %d updates, then %v", n, slow.Err())
	}
	// Requests go on being served and recorded.
	if entries, _ := j.Page(299, 0); len(entries) != 1 {
		t.Errorf("after the drop: %d entries past 299", len(entries))
	}
}

func TestSubscription_Stop(t *testing.T) {
	j := journal.New(journal.Limits{}, nil)
	s := j.Follow(0)
	s.Stop()
	s.Stop()
	if _, open := <-s.Updates(); open || s.Err() != nil {
		t.Errorf("after Stop: open %v, err %v", open, s.Err())
	}
}

// describe is an update in short, to compare sequences of them.
func describe(u journal.Update) string {
	if u.Event != nil {
		return fmt.Sprintf("event %d#%d", u.Seq, u.Index)
	}
	e := u.Entry
	s := fmt.Sprintf("entry %d status %d", e.Seq, e.Status)
	if e.Watch != nil {
		s += fmt.Sprintf(" events %d", len(e.Watch.Events))
	}
	if e.Done {
		s += " done"
	}
	return s
}

// TestJournal_Follow follows from a moment when one request is answered,
// a watch has sent two of its three events and another request is being
// served: the catch-up shows each as it is, and the live updates bring
// exactly what changed after.
func TestJournal_Follow(t *testing.T) {
	j := journal.New(journal.Limits{}, nil)
	proceed, held, release := make(chan struct{}), make(chan struct{}), make(chan struct{})
	mux := http.NewServeMux()
	mux.Handle("/done", echo(http.StatusOK))
	mux.Handle("/watch", watchHandler(proceed))
	mux.HandleFunc("/held", func(w http.ResponseWriter, r *http.Request) {
		close(held)
		<-release
	})
	h := j.Handler(mux)
	// observer tells when the journal has recorded what the test waits for.
	observer := j.Follow(0)
	defer observer.Stop()
	await := func(want string) {
		t.Helper()
		for u := range observer.Updates() {
			if describe(u) == want {
				return
			}
		}
		t.Fatalf("the journal never recorded %q", want)
	}

	serve(h, http.MethodGet, "/done", "")
	watched := make(chan struct{})
	go func() { serve(h, http.MethodGet, "/watch?watch=1", ""); close(watched) }()
	proceed <- struct{}{}
	proceed <- struct{}{}
	await("event 2#1")
	answered := make(chan struct{})
	go func() { serve(h, http.MethodGet, "/held", ""); close(answered) }()
	<-held

	sub := j.Follow(0)
	proceed <- struct{}{}
	<-watched
	close(release)
	<-answered
	serve(h, http.MethodGet, "/done", "")
	sub.Stop()

	var got []string
	for u := range sub.Updates() {
		got = append(got, describe(u))
	}
	want := []string{
		// the catch-up
		"entry 1 status 200 done",
		"entry 2 status 200 events 2",
		"entry 3 status 0",
		// then what happened after
		"event 2#2",
		"entry 2 status 200 events 3 done",
		"entry 3 status 200 done",
		"entry 4 status 200 done",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("updates:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestJournal_Follow_concurrent follows while requests and watches are
// served concurrently: whatever the interleaving, replaying the updates
// gives the journal's final entries, each event coming once and in order,
// and nothing coming after an entry is done.
func TestJournal_Follow_concurrent(t *testing.T) {
	j := journal.New(journal.Limits{}, nil)
	mux := http.NewServeMux()
	mux.Handle("/done", echo(http.StatusOK))
	mux.HandleFunc("/watch", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		for i := range 5 {
			fmt.Fprintf(w, "{\"type\":\"ADDED\",\"i\":%d}\n", i)
			w.(http.Flusher).Flush()
		}
	})
	h := j.Handler(mux)
	const clients = 20
	var wg sync.WaitGroup
	started := make(chan struct{}, clients)
	for i := range clients {
		wg.Go(func() {
			started <- struct{}{}
			path := "/done"
			if i%4 == 0 {
				path = "/watch?watch=1"
			}
			serve(h, http.MethodGet, path, "")
		})
	}
	for range clients / 2 {
		<-started
	}
	sub := j.Follow(0) // while about half the clients are under way
	var updates []journal.Update
	collected := make(chan struct{})
	go func() {
		defer close(collected)
		for u := range sub.Updates() {
			updates = append(updates, u)
		}
	}()
	wg.Wait()
	sub.Stop()
	<-collected
	if err := sub.Err(); err != nil {
		t.Fatalf("the subscription ended with %v", err)
	}

	seen := map[int64]*journal.Entry{}
	for _, u := range updates {
		if u.Event != nil {
			e := seen[u.Seq]
			if e == nil || e.Done || e.Watch == nil || u.Index != len(e.Watch.Events) {
				t.Fatalf("%s arrived out of turn (entry %+v)", describe(u), e)
			}
			e.Watch.Events = append(e.Watch.Events, *u.Event)
			continue
		}
		if prev := seen[u.Entry.Seq]; prev != nil {
			if prev.Done {
				t.Fatalf("%s repeats a finished entry", describe(u))
			}
			if prev.Watch != nil && (u.Entry.Watch == nil || len(u.Entry.Watch.Events) != len(prev.Watch.Events)) {
				t.Fatalf("%s after %d events", describe(u), len(prev.Watch.Events))
			}
		}
		e := *u.Entry
		if e.Watch != nil {
			w := *e.Watch
			w.Events = slices.Clone(w.Events)
			e.Watch = &w
		}
		seen[e.Seq] = &e
	}
	final, _ := j.Page(0, 0)
	if len(final) != clients || len(seen) != clients {
		t.Fatalf("%d entries recorded, %d followed; want %d", len(final), len(seen), clients)
	}
	for _, want := range final {
		if got := describe(journal.Update{Entry: seen[want.Seq]}); got != describe(journal.Update{Entry: &want}) {
			t.Errorf("followed %s, the journal holds %s", got, describe(journal.Update{Entry: &want}))
		}
	}
}
