//go:build !js

package web_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"kubeplay/web"
	"kubeplay/web/internal/htmltest"
)

// A lesson runs one step at a time in the UI's own cluster: each step
// shows what it sent and got and links to the view of the object it
// touched; progress stays between pages; a link opens a given step.
func TestLessons_StepByStep(t *testing.T) {
	sb, _ := openSandbox(t)
	h := web.New(sb)
	index := page(t, h, "/ui/lessons", http.StatusOK)
	found := false
	for _, a := range index.All("a") {
		if a.Text() == "ssa-conflicts" {
			found = true
		}
	}
	if !found {
		t.Fatal("the lesson list has no ssa-conflicts")
	}
	run := func(form url.Values) string {
		t.Helper()
		req := httptest.NewRequestWithContext(t.Context(), "POST", "/ui/lessons", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", "http://example.com")
		req.Host = "example.com"
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusSeeOther {
			t.Fatalf("POST %v: %d %s", form, rec.Code, rec.Body)
		}
		return rec.Header().Get("Location")
	}
	if loc := run(url.Values{"name": {"ssa-conflicts"}, "action": {"next"}}); loc != "/ui/lessons?name=ssa-conflicts&step=2#step-2" {
		t.Errorf("after step 1, to %q", loc)
	}
	doc := page(t, h, "/ui/lessons?name=ssa-conflicts&step=2", http.StatusOK)
	step1 := doc.One(t, "li", "id", "step-1")
	if c, _ := step1.Attr("class"); c != "step step-passed" {
		t.Errorf("step 1 is %q", c)
	}
	// The step's apply, with the run's name filled in, and its link to the
	// ConfigMap's managed fields.
	reqs := htmltest.Texts(step1.All("span", "class", "mono"))
	if len(reqs) != 1 || !strings.HasPrefix(reqs[0], "PATCH /api/v1/namespaces/default/configmaps/ssa-") || strings.Contains(reqs[0], "${RUN}") {
		t.Fatalf("step 1's requests %q", reqs)
	}
	name := strings.TrimPrefix(strings.Fields(reqs[0])[1], "/api/v1/namespaces/default/configmaps/")
	name, _, _ = strings.Cut(name, "?")
	link, _ := step1.One(t, "details", "class", "step-requests").All("a")[0].Attr("href")
	if want := "/ui/object?name=" + name + "&ns=default&r=v1%2Fconfigmaps&tab=fields"; link != want {
		t.Errorf("step 1 links %q, want %q", link, want)
	}
	if cur, _ := doc.One(t, "li", "aria-current", "step").Attr("id"); cur != "step-2" {
		t.Errorf("the page opens at %q", cur)
	}
	// The rest, through the last step.
	run(url.Values{"name": {"ssa-conflicts"}, "action": {"through"}, "through": {"4"}})
	doc = page(t, h, "/ui/lessons?name=ssa-conflicts", http.StatusOK)
	for _, li := range doc.All("li", "class", "*") {
		if id, _ := li.Attr("id"); strings.HasPrefix(id, "step-") {
			if c, _ := li.Attr("class"); c != "step step-passed" {
				t.Errorf("%s is %q", id, c)
			}
		}
	}
	if got := doc.One(t, "span", "class", "progress").Text(); got != "4 of 4 steps done" {
		t.Errorf("progress %q", got)
	}
	// Started again, nothing has run.
	run(url.Values{"name": {"ssa-conflicts"}, "action": {"restart"}})
	doc = page(t, h, "/ui/lessons?name=ssa-conflicts", http.StatusOK)
	if c, _ := doc.One(t, "li", "id", "step-1").Attr("class"); c != "step step-next" {
		t.Errorf("after a restart, step 1 is %q", c)
	}
}

// The start page's console runs a command as kubectl would and shows what
// it printed, with the cluster's overview and its featured lessons.
func TestStart_Console(t *testing.T) {
	sb, _ := openSandbox(t)
	h := web.New(sb)
	doc := postConsole(t, h, "create configmap demo --from-literal=a=b")
	if out := doc.One(t, "pre", "class", "*").Text(); !strings.Contains(out, "configmap/demo created") {
		t.Errorf("console output %q", out)
	}
	var overview []string
	for _, dt := range doc.All("dt") {
		overview = append(overview, dt.Text())
	}
	if !slices.Contains(overview, "Namespaces") || !slices.Contains(overview, "Pods") {
		t.Errorf("overview %q", overview)
	}
	// The suggested commands, run in order as a newcomer would, all work.
	var suggested []string
	for _, in := range doc.One(t, "div", "class", "suggestions").All("input", "name", "command") {
		v, _ := in.Attr("value")
		suggested = append(suggested, v)
	}
	if len(suggested) < 3 {
		t.Fatalf("suggestions %q", suggested)
	}
	for _, c := range suggested {
		out := postConsole(t, h, c).One(t, "pre", "class", "*")
		if cls, _ := out.Attr("class"); strings.Contains(cls, "failed") {
			t.Errorf("the suggestion %q failed: %s", c, out.Text())
		}
	}
	// Every featured lesson is one that exists.
	lessons := map[string]bool{}
	for _, a := range page(t, h, "/ui/lessons", http.StatusOK).All("a") {
		lessons[a.Text()] = true
	}
	for _, a := range doc.One(t, "p", "class", "start-lessons").All("a") {
		if !lessons[a.Text()] && a.Text() != "all lessons" {
			t.Errorf("the start page features %q, not a lesson", a.Text())
		}
	}
}

// postConsole runs command from the start page's console form.
func postConsole(t *testing.T, h http.Handler, command string) htmltest.Node {
	t.Helper()
	form := url.Values{"command": {command}}
	req := httptest.NewRequestWithContext(t.Context(), "POST", "/ui/console", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "http://example.com")
	req.Host = "example.com"
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("POST /ui/console %q: %d %s", command, rec.Code, rec.Body)
	}
	return htmltest.Parse(t, rec.Body)
}

// The start page names an object held in its deletion by a finalizer, and
// what it waits for, linking to its deletion timeline.
func TestStart_BeingDeleted(t *testing.T) {
	sb, _ := openSandbox(t)
	h := web.New(sb)
	postConsole(t, h, "create configmap held")
	postConsole(t, h, `patch configmap held -p '{"metadata":{"finalizers":["example.com/hold"]}}'`)
	doc := postConsole(t, h, "delete configmap held --wait=false")
	var found bool
	for _, d := range doc.One(t, "dl", "class", "overview").All("div") {
		if d.One(t, "dt").Text() != "Being deleted" {
			continue
		}
		found = true
		href, _ := d.One(t, "a").Attr("href")
		if got := d.One(t, "dd").Text(); got != "ConfigMap default/held, waiting for example.com/hold" || href != "/ui/object?name=held&ns=default&r=v1%2Fconfigmaps&tab=deletion" {
			t.Errorf("being deleted: %q, link %q", got, href)
		}
	}
	if !found {
		t.Errorf("the overview does not name the ConfigMap being deleted")
	}
}

// The overview counts a crash-looping pod as kubectl get pods shows it.
func TestStart_CrashLooping(t *testing.T) {
	sb, _ := openSandbox(t)
	h := web.New(sb)
	req := httptest.NewRequestWithContext(t.Context(), "POST", "/api/v1/namespaces/default/pods",
		strings.NewReader(`{"metadata":{"name":"crash"},"spec":{"containers":[{"name":"c","image":"busybox","command":["sh","-c","exit 1"]}]}}`))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	sb.Handler().ServeHTTP(rec, req)
	if rec.Code != http.StatusCreated {
		t.Fatalf("create: %d %s", rec.Code, rec.Body)
	}
	// The simulated kubelet runs it, it fails, and it is restarted with a
	// back-off: wait for that (a bound only for a broken run).
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(10 * time.Millisecond) {
		var pods string
		for _, d := range page(t, h, "/", http.StatusOK).One(t, "dl", "class", "overview").All("div") {
			if d.One(t, "dt").Text() == "Pods" {
				pods = d.One(t, "dd").Text()
			}
		}
		if strings.Contains(pods, "1 in CrashLoopBackOff") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the overview's pods: %q", pods)
		}
	}
}
