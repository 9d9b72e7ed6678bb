package requests_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"kubeplay/playground/journal"
	"kubeplay/web/internal/htmltest"
	"kubeplay/web/requests"
)

// TestHandler_forHumans: by default the log shows what people and their
// clients sent: this UI's reads are counted apart (its writes are the
// person's), and the requests of one kubectl command carry its name and
// link to that run alone.
func TestHandler_forHumans(t *testing.T) {
	j := journal.New(journal.Limits{}, nil)
	h := j.Handler(asSenders(nil))
	kubectl := func(method, target, command, session string) {
		t.Helper()
		req := httptest.NewRequest(method, target, strings.NewReader("{}"))
		req.Header.Set("User-Agent", "kubectl/v1.35.0 (linux/amd64) kubernetes/7b8c6cf")
		req.Header.Set("Kubectl-Command", command)
		req.Header.Set("Kubectl-Session", session)
		h.ServeHTTP(httptest.NewRecorder(), req)
	}
	send(t, h, "GET", "/api/v1/namespaces", "kubeplay-ui", "")                                    // 1: the UI drawing a page
	send(t, h, "GET", "/apis", "kubeplay-ui", "")                                                 // 2
	send(t, h, "POST", "/api/v1/namespaces/default/configmaps", "kubeplay-ui", `{"metadata":{}}`) // 3: written through the UI
	kubectl("GET", "/api/v1/namespaces/default/configmaps/a", "kubectl apply", "s-apply")         // 4
	kubectl("PATCH", "/api/v1/namespaces/default/configmaps/a", "kubectl apply", "s-apply")       // 5
	kubectl("GET", "/api/v1/namespaces/default/configmaps", "kubectl get", "s-get")               // 6
	send(t, h, "GET", "/api/v1/pods", "kubectl/v1.20.2 (linux/amd64) kubernetes/faecb19", "")     // 7: no command headers

	page := func(t *testing.T, query string) htmltest.Node {
		t.Helper()
		rec := httptest.NewRecorder()
		requests.New(j).ServeHTTP(rec, httptest.NewRequest("GET", "/ui/requests"+query, nil))
		return htmltest.Parse(t, rec.Body)
	}
	seqs := func(doc htmltest.Node) string {
		var ids []string
		for _, li := range doc.All("li", "class", "entry") {
			id, _ := li.Attr("id")
			ids = append(ids, strings.TrimPrefix(id, "entry-"))
		}
		return strings.Join(ids, " ")
	}

	doc := page(t, "")
	if got := seqs(doc); got != "7 6 5 4 3" {
		t.Errorf("shown by default: %s, want 7 6 5 4 3", got)
	}
	note := doc.One(t, "p", "id", "hidden-ui")
	if got := note.Text(); got != "2 requests of this UI drawing its pages hidden — show" {
		t.Errorf("note %q", got)
	}
	if href, _ := note.One(t, "a").Attr("href"); href != "/ui/requests?ui=show" {
		t.Errorf("show links to %s", href)
	}
	for _, tt := range []struct{ seq, session, command string }{{"4", "s-apply", "kubectl apply"}, {"5", "s-apply", "kubectl apply"}, {"6", "s-get", "kubectl get"}, {"7", "", ""}} {
		li := doc.One(t, "li", "id", "entry-"+tt.seq)
		if s, _ := li.Attr("data-session"); s != tt.session {
			t.Errorf("entry %s: data-session %q, want %q", tt.seq, s, tt.session)
		}
		links := li.All("a", "class", "kubectl-run")
		switch {
		case tt.command == "" && len(links) != 0:
			t.Errorf("entry %s links to a command", tt.seq)
		case tt.command != "" && (len(links) != 1 || links[0].Text() != tt.command):
			t.Errorf("entry %s: command links %v, want %q", tt.seq, htmltest.Texts(links), tt.command)
		case tt.command != "":
			if href, _ := links[0].Attr("href"); href != "/ui/requests?session="+tt.session {
				t.Errorf("entry %s: the command links to %s", tt.seq, href)
			}
		}
	}

	if got := seqs(page(t, "?session=s-apply")); got != "5 4" {
		t.Errorf("one kubectl apply: %s, want 5 4", got)
	}
	doc = page(t, "?ui=show")
	if got := seqs(doc); got != "7 6 5 4 3 2 1" {
		t.Errorf("with the UI's reads: %s", got)
	}
	if doc.Has("p", "id", "hidden-ui") {
		t.Errorf("the page says the UI's reads are hidden")
	}
}
