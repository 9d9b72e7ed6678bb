package requests_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"kubeplay/playground/journal"
	"kubeplay/server/audit"
	"kubeplay/web/internal/htmltest"
	"kubeplay/web/requests"
)

// api answers every request with its path in a JSON object; watches stream
// one event per value sent on events.
func api(events <-chan string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if r.URL.Query().Get("watch") == "1" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			for ev := range events {
				fmt.Fprintln(w, ev)
				w.(http.Flusher).Flush()
			}
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "/missing") {
			w.WriteHeader(http.StatusNotFound)
		}
		fmt.Fprintf(w, `{"path":%q}`, r.URL.Path)
	})
}

func send(t *testing.T, h http.Handler, method, target, userAgent, body string) {
	t.Helper()
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	req.Header.Set("User-Agent", userAgent)
	h.ServeHTTP(httptest.NewRecorder(), req)
}

func TestHandler_page(t *testing.T) {
	j := journal.New(journal.Limits{}, nil)
	h := j.Handler(api(nil))
	send(t, h, "GET", "/api/v1/namespaces/default/configmaps", "kubectl/v1.35.0", "")
	send(t, h, "POST", "/api/v1/namespaces/default/configmaps", "kubectl/v1.35.0", `{"metadata":{"name":"<script>alert(1)</script>"}}`)
	send(t, h, "GET", "/api/v1/namespaces/default/configmaps/missing", "Go-http-client/1.1", "")

	tests := []struct {
		query string
		want  []string // targets, newest first
	}{
		{"", []string{"/api/v1/namespaces/default/configmaps/missing", "/api/v1/namespaces/default/configmaps", "/api/v1/namespaces/default/configmaps"}},
		{"?verb=create", []string{"/api/v1/namespaces/default/configmaps"}},
		{"?status=4xx", []string{"/api/v1/namespaces/default/configmaps/missing"}},
		{"?client=kubectl&verb=list", []string{"/api/v1/namespaces/default/configmaps"}},
		{"?resource=secrets", nil},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			rec := httptest.NewRecorder()
			requests.New(j).ServeHTTP(rec, httptest.NewRequest("GET", "/ui/requests"+tt.query, nil))
			if rec.Code != 200 {
				t.Fatalf("status %d", rec.Code)
			}
			doc := htmltest.Parse(t, rec.Body)
			got := htmltest.Texts(doc.All("span", "class", "target"))
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("targets %q, want %q", got, tt.want)
			}
			// Bodies are text, never markup.
			if len(doc.All("script")) != 1 {
				t.Errorf("the page has %d script elements, want only requests.js", len(doc.All("script")))
			}
		})
	}
}

// liveMessage is one message of the live log's WebSocket.
type liveMessage struct {
	Seq       int64
	HTML      string
	EventHTML string
	Index     int
	Hidden    string
}

// dialLive opens the live log at wsURL as a page of origin would, and
// returns a function that reads its next message.
func dialLive(t *testing.T, origin, wsURL string) func() liveMessage {
	t.Helper()
	conn, _, err := websocket.DefaultDialer.Dial(wsURL, http.Header{"Origin": {origin}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return func() liveMessage {
		t.Helper()
		conn.SetReadDeadline(time.Now().Add(waitLimit(t)))
		var m liveMessage
		if err := conn.ReadJSON(&m); err != nil {
			t.Fatalf("reading: %v", err)
		}
		return m
	}
}

func TestHandler_live(t *testing.T) {
	j := journal.New(journal.Limits{}, nil)
	events := make(chan string)
	h := j.Handler(api(events))
	send(t, h, "GET", "/api/v1/namespaces", "kubectl/v1.35.0", "") // seq 1, before the page
	srv := httptest.NewServer(requests.New(j))
	defer srv.Close()
	wsURL := "ws" + strings.TrimPrefix(srv.URL, "http") + "/ui/requests/live?after=1&client=kubectl"

	t.Run("another site cannot connect", func(t *testing.T) {
		_, res, err := websocket.DefaultDialer.Dial(wsURL, http.Header{"Origin": {"https://evil.example"}})
		if err == nil || res == nil || res.StatusCode != http.StatusForbidden {
			t.Fatalf("dial from another origin: %v (%v)", err, res)
		}
	})

	next := dialLive(t, srv.URL, wsURL)

	send(t, h, "GET", "/api/v1/pods", "Go-http-client/1.1", "")                      // filtered out
	send(t, h, "DELETE", "/api/v1/namespaces/default/pods/p", "kubectl/v1.35.0", "") // seq 3
	if m := next(); m.Seq != 3 || !strings.Contains(m.HTML, `id="entry-3"`) || !strings.Contains(m.HTML, "kubectl delete pods p -n default") {
		t.Fatalf("first message %+v", m)
	}

	go send(t, h, "GET", "/api/v1/namespaces/default/pods?watch=1", "kubectl/v1.35.0", "") // seq 4
	if m := next(); m.Seq != 4 || !strings.Contains(m.HTML, "streaming") {
		t.Fatalf("watch started: %+v", m)
	}
	events <- `{"type":"ADDED","object":{"kind":"Pod","metadata":{"name":"p","namespace":"default","resourceVersion":"9"}}}`
	if m := next(); m.Seq != 4 || m.Index != 0 || !strings.Contains(m.EventHTML, "Pod default/p rv 9") {
		t.Fatalf("watch event: %+v", m)
	}
	close(events)
	if m := next(); m.Seq != 4 || m.HTML == "" || strings.Contains(m.HTML, "streaming") {
		t.Fatalf("watch ended: %+v", m)
	}
}

// audited answers as an API that ran each request as bob, but /as-alice
// as admin impersonating alice (forbidden); whose validating admission
// rejected /denied, and RBAC's escalation check /escalating.
func audited() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := audit.FromContext(r.Context())
		rec.User, rec.Decision = &audit.User{Name: "bob", Groups: []string{"devs", "system:authenticated"}}, "allow"
		code := http.StatusCreated
		switch r.URL.Path {
		case "/as-alice":
			rec.User, rec.ImpersonatedBy = &audit.User{Name: "alice", Groups: []string{"system:authenticated"}}, &audit.User{Name: "admin"}
			rec.Decision, rec.Reason, code = "forbid", "", http.StatusForbidden
		case "/escalating":
			rec.RefusedBy, code = "RBAC escalation check", http.StatusForbidden
		case "/denied":
			rec.Ran(audit.Stage{Phase: audit.Mutating, Plugin: "NamespaceLifecycle"}, nil)
			rec.Ran(audit.Stage{Phase: audit.Validating, Plugin: "ValidatingAdmissionPolicy", Policy: "p", Binding: "b"}, errors.New("denied"))
			code = http.StatusUnprocessableEntity
		}
		w.WriteHeader(code)
	})
}

func TestHandler_access(t *testing.T) {
	j := journal.New(journal.Limits{}, nil)
	h := j.Handler(audited())
	send(t, h, "POST", "/as-alice", "kubectl/v1.35.0", "")
	send(t, h, "POST", "/denied", "kubectl/v1.35.0", "")
	send(t, h, "POST", "/escalating", "kubectl/v1.35.0", "")

	page := func(query string) htmltest.Node {
		rec := httptest.NewRecorder()
		requests.New(j).ServeHTTP(rec, httptest.NewRequest("GET", "/ui/requests"+query, nil))
		return htmltest.Parse(t, rec.Body)
	}
	doc := page("")
	if got := htmltest.Texts(doc.All("span", "class", "user")); strings.Join(got, "|") != "bob|bob|admin (as alice)" {
		t.Errorf("users %q", got)
	}
	if got := htmltest.Texts(doc.All("span", "class", "rejected")); strings.Join(got, "|") != "rejected by RBAC escalation check|rejected by ValidatingAdmissionPolicy|rejected by authorization" {
		t.Errorf("rejections %q", got)
	}
	denied := doc.One(t, "li", "id", "entry-2")
	stages := htmltest.Texts(denied.All("li"))
	want := []string{"mutating NamespaceLifecycle", "validating ValidatingAdmissionPolicy policy p, binding b rejected the request"}
	if strings.Join(stages, "\n") != strings.Join(want, "\n") {
		t.Errorf("stages %q, want %q", stages, want)
	}
	if !denied.Has("li", "class", "stage-rejected") {
		t.Errorf("the rejecting stage is not marked")
	}

	for query, want := range map[string]string{"?user=alice": "/as-alice", "?user=admin": "/as-alice", "?user=devs": "/escalating/denied", "?user=carol": ""} {
		if got := htmltest.Texts(page(query).All("span", "class", "target")); strings.Join(got, "") != want {
			t.Errorf("%s: targets %q, want %q", query, got, want)
		}
	}
}

// waitLimit bounds a wait for something that must happen. It only ends a
// broken run, so it is generous: a loaded machine (CI) can be many times
// slower than an idle one. It leaves a margin before the test binary's
// -timeout for the test to fail with its own message.
func waitLimit(t *testing.T) time.Duration {
	if d, ok := t.Deadline(); ok {
		return max(time.Until(d)-30*time.Second, time.Until(d)/2)
	}
	return 2 * time.Minute
}
