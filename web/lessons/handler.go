package lessons

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"sigs.k8s.io/yaml"

	"kubeplay/playground/journal"
	"kubeplay/playground/scenario"
	"kubeplay/web/internal/origin"
	"kubeplay/web/layout"
	"kubeplay/web/requests"
)

// Path is where the lessons are mounted.
const Path = "/ui/lessons"

// maxStepRequests bounds the requests a step's result lists.
const maxStepRequests = 50

// Handler serves the lessons of target's cluster, its requests read from j.
type Handler struct {
	// lessons parses the built-in scenarios on the first page that needs
	// them, not at start; an error is a broken build.
	lessons func() ([]*scenario.Scenario, error)
	target  scenario.Target
	journal *journal.Journal

	mu       sync.Mutex // guards progress and serialises steps
	progress map[string]*progress
}

// progress is how far a lesson got.
type progress struct {
	session *scenario.Session
	runs    []stepRun // by step index; nil entries not run yet
}

// stepRun is a step's last run.
type stepRun struct {
	result   scenario.StepResult
	requests []journal.Entry
}

// New returns the lessons run against target, whose requests j records.
func New(target scenario.Target, j *journal.Journal) *Handler {
	return &Handler{lessons: sync.OnceValues(scenario.Builtin), target: target, journal: j, progress: map[string]*progress{}}
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodPost:
		if !origin.ParseForm(w, r) {
			return
		}
		name := r.PostForm.Get("name")
		through, _ := strconv.Atoi(r.PostForm.Get("through"))
		next, code, err := h.act(r, name, r.PostForm.Get("action"), through)
		if err != nil {
			layout.Write(w, r, code, Page(Props{Error: err.Error()}))
			return
		}
		http.Redirect(w, r, LessonURL(name, next)+"#step-"+strconv.Itoa(next), http.StatusSeeOther)
	default:
		if !layout.OnlyGet(w, r) {
			return
		}
		q := r.URL.Query()
		p, code := h.props(q.Get("name"), q.Get("step"))
		layout.Write(w, r, code, Page(p))
	}
}

// Featured are the lessons a newcomer might start with, in order.
var Featured = []string{"resource-versions", "list-and-watch", "ssa-conflicts", "foreground-deletion", "deployment-rollout"}

// LessonURL is the page of lesson name, open at step (1-based; 0 for none).
func LessonURL(name string, step int) string {
	u := Path + "?name=" + url.QueryEscape(name)
	if step > 0 {
		u += "&step=" + strconv.Itoa(step)
	}
	return u
}

func (h *Handler) lesson(name string) *scenario.Scenario {
	all, _ := h.lessons()
	for _, sc := range all {
		if sc.Name == name {
			return sc
		}
	}
	return nil
}

// act runs lesson name's next step ("next"), its steps through step
// through ("through"), or starts it again ("restart"); it returns the step
// to show next (1-based).
func (h *Handler) act(r *http.Request, name, action string, through int) (int, int, error) {
	sc := h.lesson(name)
	if sc == nil {
		return 0, http.StatusNotFound, fmt.Errorf("no lesson %q", name)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	p := h.progress[name]
	if p == nil || action == "restart" {
		s, err := scenario.NewSession(sc, h.target)
		if err != nil {
			return 0, http.StatusConflict, err
		}
		p = &progress{session: s, runs: make([]stepRun, len(sc.Steps))}
		h.progress[name] = p
	}
	switch action {
	case "restart":
		return 1, 0, nil
	case "next":
		through = p.session.Next() + 1
	case "through":
	default:
		return 0, http.StatusBadRequest, fmt.Errorf("unknown action %q: want next, through or restart", action)
	}
	through = min(through, len(sc.Steps))
	for !p.session.Done() && p.session.Next() < through {
		i := p.session.Next()
		before := h.lastSeq()
		res := p.session.RunNext(r.Context())
		p.runs[i] = stepRun{result: res, requests: h.requestsAfter(before)}
		if !res.OK() {
			return i + 1, 0, nil
		}
	}
	return min(p.session.Next()+1, len(sc.Steps)), 0, nil
}

// lastSeq is the sequence number of the newest request recorded.
func (h *Handler) lastSeq() int64 {
	if h.journal == nil {
		return 0
	}
	return h.journal.LastSeq()
}

// requestsAfter are the requests people's clients made after seq (the
// step's own; the controllers' are in the request log).
func (h *Handler) requestsAfter(seq int64) []journal.Entry {
	if h.journal == nil {
		return nil
	}
	entries, _ := h.journal.Page(seq, 0)
	var out []journal.Entry
	for _, e := range entries {
		if requests.ByPerson(e) && len(out) < maxStepRequests {
			e.Request.Body, e.Response.Body = nil, nil // the request log has them
			out = append(out, e)
		}
	}
	return out
}

func (h *Handler) props(name, step string) (Props, int) {
	all, err := h.lessons()
	if err != nil {
		return Props{Error: err.Error()}, http.StatusInternalServerError
	}
	if name == "" {
		p := Props{}
		h.mu.Lock()
		defer h.mu.Unlock()
		for _, sc := range all {
			lp := LessonProps{Name: sc.Name, Summary: summary(sc.Description), Steps: len(sc.Steps), Sandbox: sc.Sandbox, Href: LessonURL(sc.Name, 0)}
			if pr := h.progress[sc.Name]; pr != nil {
				lp.Done = pr.session.Next()
			}
			p.Lessons = append(p.Lessons, lp)
		}
		return p, http.StatusOK
	}
	sc := h.lesson(name)
	if sc == nil {
		return Props{Error: fmt.Sprintf("no lesson %q", name)}, http.StatusNotFound
	}
	open, _ := strconv.Atoi(step)
	lp := &LessonProps{Name: sc.Name, Description: sc.Description, Steps: len(sc.Steps), Sandbox: sc.Sandbox, Open: open}
	h.mu.Lock()
	defer h.mu.Unlock()
	pr := h.progress[name]
	expand := func(s string) string { return s }
	if pr != nil {
		lp.Done, expand = pr.session.Next(), pr.session.Expand
		lp.Started = true
	}
	for i, st := range sc.Steps {
		sp := StepProps{Number: i + 1, Name: st.Name, Explain: st.Explain, Action: expand(action(st)), Body: expand(body(st))}
		sp.Next = i == lp.Done
		if pr != nil && pr.runs[i].result.Step != 0 {
			run := pr.runs[i]
			sp.Ran, sp.OK = true, run.result.OK()
			sp.Status, sp.Output, sp.Failures = run.result.Status, run.result.Output, run.result.Failures
			for _, e := range run.requests {
				rp := RequestProps{Seq: e.Seq, Method: e.Method, Path: e.Path, Status: e.Status}
				if e.Query != "" {
					rp.Path += "?" + e.Query
				}
				rp.ViewLabel, rp.ViewHref, _ = requests.ViewOf(e.Method, e.Path, e.Query)
				sp.Requests = append(sp.Requests, rp)
			}
		}
		lp.StepList = append(lp.StepList, sp)
	}
	return Props{Lesson: lp}, http.StatusOK
}

// summary is a description's first sentence.
func summary(desc string) string {
	desc = strings.TrimSpace(desc)
	if i := strings.Index(desc, ". "); i > 0 {
		return desc[:i+1]
	}
	return desc
}

// action says what a step does, as a command or a request line.
func action(st scenario.Step) string {
	switch {
	case st.Kubectl != "":
		return "kubectl " + strings.TrimPrefix(strings.TrimSpace(st.Kubectl), "kubectl ")
	case st.Request != nil:
		return st.Request.Method + " " + st.Request.Path
	case st.Watch != nil:
		return fmt.Sprintf("watch GET %s (until %d events)", st.Watch.Path, st.Watch.Events)
	case st.WaitFor != nil:
		return "wait: GET " + st.WaitFor.Path + " until it shows what is expected"
	case st.AdvanceClock != "":
		return "advance the sandbox's clock by " + st.AdvanceClock
	case st.Compact:
		return "compact the store's history (as kube-apiserver's storage does with old revisions)"
	case st.Controllers != nil:
		b, _ := json.Marshal(st.Controllers)
		return "switch controllers: " + string(b)
	case st.EmulatedVersion != "":
		return "upgrade the control plane to Kubernetes " + st.EmulatedVersion
	}
	return ""
}

// body is what a step sends: the file a kubectl step reads, a request's
// body, the requests a watch step makes while watching (YAML).
func body(st scenario.Step) string {
	switch {
	case st.File != "":
		return st.File
	case st.Request != nil && st.Request.Body != nil:
		if s, ok := st.Request.Body.(string); ok {
			return s
		}
		b, _ := yaml.Marshal(st.Request.Body)
		return string(b)
	case st.Watch != nil && len(st.Watch.Then) > 0:
		b, _ := yaml.Marshal(st.Watch.Then)
		return "then, while watching:\n" + string(b)
	}
	return ""
}
