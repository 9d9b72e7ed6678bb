package requests_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"kubeplay/playground/journal"
	"kubeplay/server/audit"
	"kubeplay/web/internal/htmltest"
	"kubeplay/web/requests"
)

const (
	namespaceController = "kube-controller-manager/v1.35.4 (linux/amd64) kubernetes/7b8c6cf/system:serviceaccount:kube-system:namespace-controller"
	kubelet             = "kubelet/v1.35.4 (linux/amd64) kubernetes/7b8c6cf"
)

// asSenders answers as an API that ran each request as the user the
// sandbox's senders are: the namespace controller its service account,
// the kubelet kubeplay's simulator, anyone else alice. Watches stream one
// event per value sent on events.
func asSenders(events <-chan string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		rec := audit.FromContext(r.Context())
		switch r.UserAgent() {
		case namespaceController:
			rec.User = &audit.User{Name: "system:serviceaccount:kube-system:namespace-controller"}
		case kubelet:
			rec.User = &audit.User{Name: "system:kubeplay-simulator"}
		default:
			rec.User = &audit.User{Name: "alice"}
		}
		rec.Decision = "allow"
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("watch") == "1" {
			w.WriteHeader(http.StatusOK)
			for ev := range events {
				fmt.Fprintln(w, ev)
				w.(http.Flusher).Flush()
			}
			return
		}
		fmt.Fprintf(w, `{"path":%q}`, r.URL.Path)
	})
}

func TestHandler_controllers(t *testing.T) {
	j := journal.New(journal.Limits{}, nil)
	h := j.Handler(asSenders(nil))
	send(t, h, "GET", "/api/v1/namespaces/gone/configmaps", "kubectl/v1.35.0", "")
	send(t, h, "DELETE", "/api/v1/namespaces/gone/configmaps", namespaceController, "")
	send(t, h, "PATCH", "/api/v1/namespaces/default/pods/p/status", kubelet, "{}")

	page := func(t *testing.T, query string) htmltest.Node {
		t.Helper()
		rec := httptest.NewRecorder()
		requests.New(j).ServeHTTP(rec, httptest.NewRequest("GET", "/ui/requests"+query, nil))
		if rec.Code != 200 {
			t.Fatalf("status %d", rec.Code)
		}
		return htmltest.Parse(t, rec.Body)
	}
	targets := func(doc htmltest.Node) string {
		return strings.Join(htmltest.Texts(doc.All("span", "class", "target")), " | ")
	}
	showBox := func(t *testing.T, doc htmltest.Node) bool {
		t.Helper()
		box := doc.One(t, "input", "name", "controllers")
		if v, _ := box.Attr("value"); v != "show" {
			t.Errorf("the toggle sends controllers=%s", v)
		}
		_, checked := box.Attr("checked")
		return checked
	}

	t.Run("shown, as controllers' requests", func(t *testing.T) {
		doc := page(t, "?controllers=show")
		want := "/api/v1/namespaces/default/pods/p/status | /api/v1/namespaces/gone/configmaps | /api/v1/namespaces/gone/configmaps"
		if got := targets(doc); got != want {
			t.Errorf("targets %q, want %q", got, want)
		}
		kubeletRow, ncRow, kubectlRow := doc.One(t, "li", "id", "entry-3"), doc.One(t, "li", "id", "entry-2"), doc.One(t, "li", "id", "entry-1")
		for _, tt := range []struct {
			row        htmltest.Node
			client     string
			controller bool
			simulated  bool
			sender     string
		}{
			{kubeletRow, "kubelet simulated", true, true, "kubelet — a controller of the cluster, simulated by kubeplay (client: kubelet)"},
			{ncRow, "namespace-controller", true, false, "namespace-controller — a controller of the cluster (client: kube-controller-manager)"},
			{kubectlRow, "kubectl", false, false, ""},
		} {
			id, _ := tt.row.Attr("id")
			if got := tt.row.One(t, "span", "class", "client").Text(); got != tt.client {
				t.Errorf("%s: client %q, want %q", id, got, tt.client)
			}
			if got := tt.row.Has("span", "class", "controller"); got != tt.controller {
				t.Errorf("%s: controller badge %v, want %v", id, got, tt.controller)
			}
			if class, _ := tt.row.Attr("class"); strings.Contains(class, "by-controller") != tt.controller {
				t.Errorf("%s: class %q", id, class)
			}
			if got := tt.row.Has("span", "class", "simulated"); got != tt.simulated {
				t.Errorf("%s: simulated badge %v, want %v", id, got, tt.simulated)
			}
			var sender string
			if dd := tt.row.All("dd", "class", "sender"); len(dd) == 1 {
				sender = dd[0].Text()
			}
			if sender != tt.sender {
				t.Errorf("%s: sent by %q, want %q", id, sender, tt.sender)
			}
		}
		if doc.Has("", "id", "hidden-controllers") {
			t.Errorf("the page says controllers' requests are hidden")
		}
		if !showBox(t, doc) {
			t.Errorf("the show toggle is off")
		}
	})

	for _, tt := range []struct {
		query, targets, hidden, show string
	}{
		{"", "/api/v1/namespaces/gone/configmaps", "2 controller requests hidden — show", "/ui/requests?controllers=show"},
		{"?verb=deletecollection", "", "1 controller request hidden — show", "/ui/requests?controllers=show&verb=deletecollection"},
		{"?resource=pods&status=2xx", "", "1 controller request hidden — show", "/ui/requests?controllers=show&resource=pods&status=2xx"},
	} {
		t.Run(tt.query, func(t *testing.T) {
			doc := page(t, tt.query)
			if got := targets(doc); got != tt.targets {
				t.Errorf("targets %q, want %q", got, tt.targets)
			}
			if doc.Has("span", "class", "controller") {
				t.Errorf("a controller's request is shown")
			}
			note := doc.One(t, "p", "id", "hidden-controllers")
			if got := note.Text(); got != tt.hidden {
				t.Errorf("note %q, want %q", got, tt.hidden)
			}
			if _, hidden := note.Attr("hidden"); hidden {
				t.Errorf("the note is hidden")
			}
			if href, _ := note.One(t, "a").Attr("href"); href != tt.show {
				t.Errorf("show links to %s, want %s", href, tt.show)
			}
			if showBox(t, doc) {
				t.Errorf("the show toggle is on")
			}
		})
	}

	t.Run("none to hide", func(t *testing.T) {
		doc := page(t, "?client=kubectl")
		if got := targets(doc); got != "/api/v1/namespaces/gone/configmaps" {
			t.Errorf("targets %q", got)
		}
		// There, for live updates to count into, but not shown.
		note := doc.One(t, "p", "id", "hidden-controllers")
		if _, hidden := note.Attr("hidden"); !hidden {
			t.Errorf("the note %q is shown", note.Text())
		}
	})
}

func TestHandler_liveHidesControllers(t *testing.T) {
	j := journal.New(journal.Limits{}, nil)
	events := make(chan string)
	h := j.Handler(asSenders(events))
	send(t, h, "GET", "/api/v1/namespaces", namespaceController, "") // seq 1, counted by the page
	srv := httptest.NewServer(requests.New(j))
	defer srv.Close()
	wsURL := "ws" + strings.TrimPrefix(srv.URL, "http") + "/ui/requests/live?after=1"
	next := dialLive(t, srv.URL, wsURL)

	send(t, h, "DELETE", "/api/v1/namespaces/gone/configmaps", namespaceController, "") // seq 2
	if m := next(); m.Seq != 2 || m.Hidden != "controllers" || m.HTML != "" {
		t.Fatalf("a controller's request: %+v, want it counted as hidden", m)
	}
	send(t, h, "GET", "/api/v1/pods", "kubectl/v1.35.0", "") // seq 3
	if m := next(); m.Seq != 3 || m.Hidden != "" || !strings.Contains(m.HTML, `id="entry-3"`) {
		t.Fatalf("kubectl's request: %+v", m)
	}

	// A controller's watch is counted once: not again as it ends, and its
	// events are not sent.
	go send(t, h, "GET", "/api/v1/namespaces/default/pods?watch=1", kubelet, "") // seq 4
	if m := next(); m.Seq != 4 || m.Hidden != "controllers" {
		t.Fatalf("a kubelet's watch: %+v, want it counted as hidden", m)
	}
	events <- `{"type":"ADDED","object":{"kind":"Pod","metadata":{"name":"p","namespace":"default","resourceVersion":"9"}}}`
	close(events)
	for deadline := time.Now().Add(waitLimit(t)); ; {
		if es, _ := j.Page(3, 0); len(es) == 1 && es[0].Done {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the watch did not end")
		}
		time.Sleep(10 * time.Millisecond)
	}
	send(t, h, "GET", "/api/v1/configmaps", "kubectl/v1.35.0", "") // seq 5
	if m := next(); m.Seq != 5 || m.Hidden != "" || !strings.Contains(m.HTML, `id="entry-5"`) {
		t.Fatalf("after the watch ended: %+v, want kubectl's next request", m)
	}
}
