// Package scenario runs scripted scenarios against a Kubernetes API: HTTP
// requests, watches, waits and clock advances, with expectations on status
// codes, headers, JSONPath values and watch events, and variables captured
// from earlier answers. The format is documented in README.md beside this
// file; builtin/ holds scenarios from the Kubernetes API Concepts and
// Server-Side Apply documentation.
package scenario

import (
	"bytes"
	"context"
	"crypto/rand"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"kubeplay/cli"
	"kubeplay/playground"
)

// APIVersion is the version of the format this package reads.
const APIVersion = "kubeplay.dev/v1"

// Scenario is one script.
type Scenario struct {
	APIVersion  string `json:"apiVersion"`
	Kind        string `json:"kind"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Sandbox marks a scenario that needs a kubeplay sandbox (its clock or
	// its simulated controllers); it is not run against other servers.
	Sandbox bool `json:"sandbox,omitempty"`
	// FinalizerBots, in a sandbox scenario, are the simulated actors that
	// remove a finalizer some time after an object's deletion was asked
	// for (set before the first step).
	FinalizerBots []FinalizerBot `json:"finalizerBots,omitempty"`
	Steps         []Step         `json:"steps"`
}

// FinalizerBot removes Finalizer Delay (a Go duration) after an object's
// deletion was requested.
type FinalizerBot struct {
	Finalizer string `json:"finalizer"`
	Delay     string `json:"delay"`
}

// Step is one action and what its answer must be. Exactly one of Request,
// Watch, WaitFor, AdvanceClock, Compact, Kubectl, Controllers and
// EmulatedVersion is set.
type Step struct {
	Name string `json:"name"`
	// Explain tells a learner what the step shows.
	Explain      string   `json:"explain,omitempty"`
	Request      *Request `json:"request,omitempty"`
	Watch        *Watch   `json:"watch,omitempty"`
	WaitFor      *WaitFor `json:"waitFor,omitempty"`
	AdvanceClock string   `json:"advanceClock,omitempty"`
	// Compact drops the sandbox's history now, as the API server's
	// storage does with old history (sandbox only).
	Compact bool `json:"compact,omitempty"`
	// Kubectl is a kubectl command line ("kubectl" in front optional) run
	// by kubeplay's console (get, describe, create, apply, delete, patch,
	// label, annotate, scale, explain, api-resources); File is what -f -
	// (or -f with any name) reads.
	Kubectl string `json:"kubectl,omitempty"`
	File    string `json:"file,omitempty"`
	// Controllers switches the sandbox's simulated controllers on or off
	// and replaces its finalizer bots (sandbox only).
	Controllers *ControllerAction `json:"controllers,omitempty"`
	// EmulatedVersion moves the sandbox to the API of another Kubernetes
	// release ("1.25"), as an upgrade of the control plane would (sandbox
	// only).
	EmulatedVersion string `json:"emulatedVersion,omitempty"`
	Expect          Expect `json:"expect,omitempty"`
	// Capture sets variables (used later as ${name}) to JSONPath values of
	// the answer.
	Capture map[string]string `json:"capture,omitempty"`
}

// ControllerAction switches the controllers it names (true: run) and, if
// FinalizerBots is set, replaces the finalizer bots. In a scenario both sit
// side by side: {deployment: false, finalizerBots: [...]}.
type ControllerAction struct {
	Switches      playground.ControllerSwitches
	FinalizerBots *[]FinalizerBot
}

func (a ControllerAction) MarshalJSON() ([]byte, error) {
	fields := map[string]any{}
	for name, on := range a.Switches {
		fields[name] = on
	}
	if a.FinalizerBots != nil {
		fields["finalizerBots"] = a.FinalizerBots
	}
	return json.Marshal(fields)
}

func (a *ControllerAction) UnmarshalJSON(b []byte) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		return err
	}
	*a = ControllerAction{Switches: playground.ControllerSwitches{}}
	for name, v := range fields {
		if name == "finalizerBots" {
			if err := json.Unmarshal(v, &a.FinalizerBots); err != nil {
				return fmt.Errorf("finalizerBots: %w", err)
			}
			continue
		}
		var on bool
		if err := json.Unmarshal(v, &on); err != nil {
			return fmt.Errorf("controller %s: want true or false, not %s", name, v)
		}
		a.Switches[name] = on
	}
	return nil
}

// Request is an HTTP request; Body is sent as JSON unless it is a string
// (sent as is, e.g. YAML with a Content-Type header).
type Request struct {
	Method  string            `json:"method"`
	Path    string            `json:"path"`
	Headers map[string]string `json:"headers,omitempty"`
	Body    any               `json:"body,omitempty"`
}

// Watch reads the events of a watch request (Path includes watch=true)
// until it has Events of them or Timeout passes (default 10s) after the
// watch started and its Then requests were answered. Then are requests
// sent, in order, once the watch has started: changes it sees happen (each
// must succeed).
type Watch struct {
	Path    string            `json:"path"`
	Headers map[string]string `json:"headers,omitempty"`
	Events  int               `json:"events"`
	Timeout string            `json:"timeout,omitempty"`
	Then    []Request         `json:"then,omitempty"`
}

// WaitFor polls GET Path until the answer meets the step's Expect or
// Timeout passes (default 30s).
type WaitFor struct {
	Path    string `json:"path"`
	Timeout string `json:"timeout,omitempty"`
}

// Expect is what an answer must be; unset fields are not checked.
type Expect struct {
	Status int `json:"status,omitempty"`
	// Headers: the named header must contain the text.
	Headers map[string]string `json:"headers,omitempty"`
	// JSONPath: each expression's value must equal the given one (a
	// string compares with a scalar as kubectl -o jsonpath prints it).
	JSONPath map[string]any `json:"jsonpath,omitempty"`
	// BodyContains: the body (a kubectl step's output) must contain the
	// text.
	BodyContains string `json:"bodyContains,omitempty"`
	// Error: the kubectl command must fail, its error containing the text
	// (without it, a kubectl step fails when its command does).
	Error string `json:"error,omitempty"`
	// Events: the watch's events, in order, from the first.
	Events []EventExpect `json:"events,omitempty"`
}

// EventExpect is one expected watch event.
type EventExpect struct {
	Type     string         `json:"type"`
	JSONPath map[string]any `json:"jsonpath,omitempty"`
}

// Parse reads a scenario and checks its form.
func Parse(data []byte) (*Scenario, error) {
	var sc Scenario
	if err := yaml.UnmarshalStrict(data, &sc); err != nil {
		return nil, err
	}
	if sc.APIVersion != APIVersion || sc.Kind != "Scenario" {
		return nil, fmt.Errorf("want apiVersion %s and kind Scenario, not %q and %q", APIVersion, sc.APIVersion, sc.Kind)
	}
	if sc.Name == "" || len(sc.Steps) == 0 {
		return nil, errors.New("a scenario needs a name and steps")
	}
	if len(sc.FinalizerBots) > 0 && !sc.Sandbox {
		return nil, errors.New("finalizerBots need a sandbox: set sandbox: true")
	}
	if err := checkBots(sc.FinalizerBots); err != nil {
		return nil, err
	}
	for i, st := range sc.Steps {
		n := 0
		for _, set := range []bool{st.Request != nil, st.Watch != nil, st.WaitFor != nil, st.AdvanceClock != "", st.Compact, st.Kubectl != "", st.Controllers != nil, st.EmulatedVersion != ""} {
			if set {
				n++
			}
		}
		if n != 1 {
			return nil, fmt.Errorf("step %d (%s): want exactly one of request, watch, waitFor, advanceClock, compact, kubectl, controllers, emulatedVersion", i+1, st.Name)
		}
		if st.File != "" && st.Kubectl == "" {
			return nil, fmt.Errorf("step %d (%s): file goes with a kubectl command", i+1, st.Name)
		}
		if st.Expect.Error != "" && st.Kubectl == "" {
			return nil, fmt.Errorf("step %d (%s): expect.error goes with a kubectl command", i+1, st.Name)
		}
		if st.Controllers != nil {
			if !sc.Sandbox {
				return nil, fmt.Errorf("step %d (%s): controllers need a sandbox: set sandbox: true", i+1, st.Name)
			}
			if _, err := st.Controllers.Switches.Apply(playground.Controllers{}); err != nil {
				return nil, fmt.Errorf("step %d (%s): %w", i+1, st.Name, err)
			}
			if st.Controllers.FinalizerBots != nil {
				if err := checkBots(*st.Controllers.FinalizerBots); err != nil {
					return nil, fmt.Errorf("step %d (%s): %w", i+1, st.Name, err)
				}
			}
		}
		if st.AdvanceClock != "" {
			if _, err := time.ParseDuration(st.AdvanceClock); err != nil {
				return nil, fmt.Errorf("step %d (%s): advanceClock: %v", i+1, st.Name, err)
			}
		}
	}
	return &sc, nil
}

func checkBots(bots []FinalizerBot) error {
	for _, b := range bots {
		if d, err := time.ParseDuration(b.Delay); err != nil || d < 0 || b.Finalizer == "" {
			return fmt.Errorf("finalizerBots: want a finalizer and a delay such as \"5s\", not %q and %q", b.Finalizer, b.Delay)
		}
	}
	return nil
}

//go:embed builtin/*.yaml
var builtinFS embed.FS

// Builtin returns the built-in scenarios, by name.
func Builtin() ([]*Scenario, error) {
	files, err := fs.Glob(builtinFS, "builtin/*.yaml")
	if err != nil {
		return nil, err
	}
	var out []*Scenario
	for _, f := range files {
		b, _ := builtinFS.ReadFile(f)
		sc, err := Parse(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		out = append(out, sc)
	}
	return out, nil
}

// Doer sends a request: an *http.Client, or HandlerClient's in process
// (which, unlike an http.Client, links no network transport: the browser
// build runs lessons with it).
type Doer interface {
	Do(*http.Request) (*http.Response, error)
}

// Target is the API a scenario runs against.
type Target struct {
	// Server is the API's URL (a sandbox's includes its /sandboxes/<id>).
	Server string
	Client Doer
	// Token, if set, is sent as a bearer token.
	Token string
	// AdvanceClock advances a sandbox's clock, Compact drops its history
	// and SetControllers switches its controllers, SetEmulatedVersion
	// changes the release its API emulates (all nil: not a sandbox).
	AdvanceClock       func(time.Duration) error
	Compact            func() error
	SetControllers     func(ControllerAction) error
	SetEmulatedVersion func(string) error
}

// StepResult is the outcome of one step.
type StepResult struct {
	Step int    `json:"step"`
	Name string `json:"name"`
	// Explain is the step's explanation for learners.
	Explain string `json:"explain,omitempty"`
	Status  int    `json:"status,omitempty"`
	// Output is what a kubectl step printed.
	Output   string        `json:"output,omitempty"`
	Failures []string      `json:"failures,omitempty"`
	Duration time.Duration `json:"duration"`
}

// OK reports whether the step met its expectations.
func (r StepResult) OK() bool { return len(r.Failures) == 0 }

// ErrNeedsSandbox: the scenario needs a kubeplay sandbox.
var ErrNeedsSandbox = errors.New("the scenario needs a kubeplay sandbox (its clock or simulated controllers)")

// Run runs sc against t, reporting each step as it ends, and stops at the
// first step that fails. It returns whether every step passed.
func Run(ctx context.Context, sc *Scenario, t Target, report func(StepResult)) (bool, error) {
	s, err := NewSession(sc, t)
	if err != nil {
		return false, err
	}
	for !s.Done() {
		res := s.RunNext(ctx)
		report(res)
		if !res.OK() {
			return false, nil
		}
	}
	return true, nil
}

// Session runs a scenario one step at a time, as a lesson does, keeping
// what earlier steps captured for the later ones.
type Session struct {
	sc   *Scenario
	r    *runner
	next int
}

// NewSession starts sc against t: its finalizer bots are set up, and its
// first step is next.
func NewSession(sc *Scenario, t Target) (*Session, error) {
	if sc.Sandbox && t.AdvanceClock == nil {
		return nil, ErrNeedsSandbox
	}
	if len(sc.FinalizerBots) > 0 {
		if err := t.SetControllers(ControllerAction{FinalizerBots: &sc.FinalizerBots}); err != nil {
			return nil, err
		}
	}
	r := &runner{t: t, vars: map[string]string{"RUN": runID()}, console: cli.NewClient(t.Server, t.Client.Do, t.Token)}
	return &Session{sc: sc, r: r}, nil
}

// Next is the index of the step RunNext runs (len(Steps) when done).
func (s *Session) Next() int { return s.next }

// Done reports whether every step has run.
func (s *Session) Done() bool { return s.next >= len(s.sc.Steps) }

// Expand substitutes the session's variables (${RUN}, captures) in text,
// as the steps see it.
func (s *Session) Expand(text string) string { return s.r.expand(text) }

// RunNext runs the next step. A step that fails can be run again.
func (s *Session) RunNext(ctx context.Context) StepResult {
	i := s.next
	st := s.sc.Steps[i]
	start := time.Now()
	res := StepResult{Step: i + 1, Name: st.Name, Explain: st.Explain}
	if st.Kubectl != "" {
		res.Output, res.Failures = s.r.kubectl(ctx, st)
	} else {
		res.Status, res.Failures = s.r.step(ctx, st)
	}
	res.Duration = time.Since(start)
	if res.OK() {
		s.next++
	}
	return res
}

// runID is a suffix for the names a run creates, so that runs against a
// shared server do not collide.
func runID() string {
	b := make([]byte, 4)
	rand.Read(b)
	return fmt.Sprintf("%x", b)
}

type runner struct {
	t       Target
	vars    map[string]string
	console *cli.Console
}

var varRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// expand substitutes the variables in s.
func (r *runner) expand(s string) string {
	return varRef.ReplaceAllStringFunc(s, func(m string) string {
		if v, ok := r.vars[m[2:len(m)-1]]; ok {
			return v
		}
		return m
	})
}

// expandAny substitutes variables in every string of v.
func (r *runner) expandAny(v any) any {
	switch x := v.(type) {
	case string:
		return r.expand(x)
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			out[r.expand(k)] = r.expandAny(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = r.expandAny(e)
		}
		return out
	}
	return v
}

func (r *runner) step(ctx context.Context, st Step) (int, []string) {
	switch {
	case st.AdvanceClock != "":
		d, _ := time.ParseDuration(st.AdvanceClock)
		if err := r.t.AdvanceClock(d); err != nil {
			return 0, []string{err.Error()}
		}
		return 0, nil
	case st.Compact:
		if err := r.t.Compact(); err != nil {
			return 0, []string{err.Error()}
		}
		return 0, nil
	case st.Controllers != nil:
		if err := r.t.SetControllers(*st.Controllers); err != nil {
			return 0, []string{err.Error()}
		}
		return 0, nil
	case st.EmulatedVersion != "":
		if err := r.t.SetEmulatedVersion(st.EmulatedVersion); err != nil {
			return 0, []string{err.Error()}
		}
		return 0, nil
	case st.Watch != nil:
		return r.watch(ctx, st)
	case st.WaitFor != nil:
		timeout := duration(st.WaitFor.Timeout, 30*time.Second)
		deadline := time.Now().Add(timeout)
		for {
			code, _, body, err := r.do(ctx, "GET", st.WaitFor.Path, nil, nil)
			if err != nil {
				return 0, []string{err.Error()}
			}
			fails := r.check(st, code, nil, body)
			if len(fails) == 0 || time.Now().After(deadline) {
				if len(fails) > 0 {
					fails = append([]string{"still after " + timeout.String() + ":"}, fails...)
				}
				return code, fails
			}
			select {
			case <-ctx.Done():
				return 0, []string{ctx.Err().Error()}
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	code, header, body, err := r.do(ctx, st.Request.Method, st.Request.Path, st.Request.Headers, st.Request.Body)
	if err != nil {
		return 0, []string{err.Error()}
	}
	return code, r.check(st, code, header, body)
}

func duration(s string, def time.Duration) time.Duration {
	if d, err := time.ParseDuration(s); err == nil {
		return d
	}
	return def
}

func (r *runner) newRequest(ctx context.Context, method, path string, headers map[string]string, body any) (*http.Request, error) {
	var rd io.Reader
	ctype := ""
	switch b := r.expandAny(body).(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			return nil, err
		}
		rd, ctype = bytes.NewReader(j), "application/json"
	}
	req, err := http.NewRequestWithContext(ctx, method, r.t.Server+r.expand(path), rd)
	if err != nil {
		return nil, err
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	req.Header.Set("Accept", "application/json")
	if r.t.Token != "" {
		req.Header.Set("Authorization", "Bearer "+r.t.Token)
	}
	for k, v := range headers {
		req.Header.Set(k, r.expand(v))
	}
	return req, nil
}

// requestLimit bounds each request and kubectl command of a scenario.
const requestLimit = 30 * time.Second

func (r *runner) do(ctx context.Context, method, path string, headers map[string]string, body any) (int, http.Header, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, requestLimit)
	defer cancel()
	req, err := r.newRequest(ctx, method, path, headers, body)
	if err != nil {
		return 0, nil, nil, err
	}
	resp, err := r.t.Client.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b, err
}

// check compares an answer with the step's expectations and captures its
// variables.
func (r *runner) check(st Step, code int, header http.Header, body []byte) []string {
	var fails []string
	e := st.Expect
	if e.Status != 0 && code != e.Status {
		fails = append(fails, fmt.Sprintf("status %d, want %d: %s", code, e.Status, excerpt(body)))
	}
	for k, v := range e.Headers {
		got := strings.Join(header.Values(k), ", ")
		if !strings.Contains(got, r.expand(v)) {
			fails = append(fails, fmt.Sprintf("header %s: %q, want it to contain %q", k, got, r.expand(v)))
		}
	}
	if e.BodyContains != "" && !bytes.Contains(body, []byte(r.expand(e.BodyContains))) {
		fails = append(fails, fmt.Sprintf("body lacks %q: %s", r.expand(e.BodyContains), excerpt(body)))
	}
	var doc any
	if len(e.JSONPath) > 0 || len(st.Capture) > 0 {
		if err := json.Unmarshal(body, &doc); err != nil {
			return append(fails, fmt.Sprintf("the body is not JSON: %s", excerpt(body)))
		}
	}
	fails = append(fails, r.matchPaths(doc, e.JSONPath)...)
	for name, expr := range st.Capture {
		v, err := evalPath(doc, expr)
		if err != nil {
			fails = append(fails, fmt.Sprintf("capture %s: %v", name, err))
			continue
		}
		r.vars[name] = text(v)
	}
	return fails
}

// matchPaths compares JSONPath values of doc with the expected ones.
func (r *runner) matchPaths(doc any, want map[string]any) []string {
	var fails []string
	exprs := make([]string, 0, len(want))
	for k := range want {
		exprs = append(exprs, k)
	}
	slices.Sort(exprs)
	for _, expr := range exprs {
		w := r.expandAny(want[expr])
		got, err := evalPath(doc, r.expand(expr))
		if errors.Is(err, errNotFound) && w == nil {
			continue
		}
		if err != nil {
			fails = append(fails, fmt.Sprintf("%s: %v", expr, err))
			continue
		}
		if !sameValue(got, w) {
			fails = append(fails, fmt.Sprintf("%s = %s, want %s", expr, text(got), text(w)))
		}
	}
	return fails
}

// sameValue compares a decoded JSON value with a YAML-given one: equal as
// JSON, or a string equal to the value as kubectl prints it.
func sameValue(got, want any) bool {
	if s, ok := want.(string); ok {
		return text(got) == s
	}
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	return bytes.Equal(g, w)
}

func excerpt(b []byte) string {
	s := strings.Join(strings.Fields(string(b)), " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// kubectl runs a kubectl step's command and checks its output (as the
// body: bodyContains, and jsonpath and capture of -o json output).
func (r *runner) kubectl(ctx context.Context, st Step) (string, []string) {
	ctx, cancel := context.WithTimeout(ctx, requestLimit)
	defer cancel()
	var out bytes.Buffer
	err := r.console.Run(ctx, r.expand(st.Kubectl), r.expand(st.File), &out)
	output := out.String()
	var fails []string
	switch want := r.expand(st.Expect.Error); {
	case err != nil && want == "":
		return output, []string{"the command failed: " + excerpt(out.Bytes())}
	case err == nil && want != "":
		fails = append(fails, fmt.Sprintf("the command succeeded, want an error containing %q", want))
	case err != nil && !strings.Contains(output, want):
		fails = append(fails, fmt.Sprintf("the error lacks %q: %s", want, excerpt(out.Bytes())))
	}
	return output, append(fails, r.check(st, 0, nil, out.Bytes())...)
}

// watch reads the events of a watch and compares them with the expected.
func (r *runner) watch(ctx context.Context, st Step) (int, []string) {
	w := st.Watch
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, err := r.newRequest(ctx, "GET", w.Path, w.Headers, nil)
	if err != nil {
		return 0, []string{err.Error()}
	}
	// Starting the watch and each change are bounded as any request is; the
	// events then have Timeout to arrive, however slowly a busy machine
	// answered the changes.
	started := time.AfterFunc(requestLimit, cancel)
	resp, err := r.t.Client.Do(req)
	started.Stop()
	if err != nil {
		return 0, []string{err.Error()}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, r.check(st, resp.StatusCode, resp.Header, b)
	}
	var fails []string
	for _, then := range w.Then {
		code, _, body, err := r.do(ctx, then.Method, then.Path, then.Headers, then.Body)
		if err == nil && code/100 != 2 {
			err = fmt.Errorf("status %d: %s", code, excerpt(body))
		}
		if err != nil {
			fails = append(fails, fmt.Sprintf("then %s %s: %v", then.Method, r.expand(then.Path), err))
		}
	}
	defer time.AfterFunc(duration(w.Timeout, 10*time.Second), cancel).Stop()
	var events []map[string]any
	dec := json.NewDecoder(resp.Body)
	for len(events) < w.Events {
		var ev map[string]any
		if err := dec.Decode(&ev); err != nil {
			break // the timeout, or the server ended the watch
		}
		events = append(events, ev)
	}
	if len(events) < w.Events {
		fails = append(fails, fmt.Sprintf("%d watch events, want %d", len(events), w.Events))
	}
	for i, want := range st.Expect.Events {
		if i >= len(events) {
			fails = append(fails, fmt.Sprintf("event %d: missing, want %s", i+1, want.Type))
			continue
		}
		if events[i]["type"] != want.Type {
			fails = append(fails, fmt.Sprintf("event %d: %v, want %s", i+1, events[i]["type"], want.Type))
		}
		for _, f := range r.matchPaths(map[string]any(events[i]), want.JSONPath) {
			fails = append(fails, fmt.Sprintf("event %d: %s", i+1, f))
		}
	}
	if st.Expect.Status != 0 && st.Expect.Status != resp.StatusCode {
		fails = append(fails, fmt.Sprintf("status %d, want %d", resp.StatusCode, st.Expect.Status))
	}
	return resp.StatusCode, fails
}

// maxOutputLines is how much of a kubectl step's output Printer shows.
const maxOutputLines = 10

// Printer reports each step on w as a line (✓ or ✗, the step, its status
// and time), followed by a kubectl step's output and the failures of a
// failed step.
func Printer(w io.Writer) func(StepResult) {
	return func(r StepResult) {
		mark := "✓"
		if !r.OK() {
			mark = "✗"
		}
		status := ""
		if r.Status != 0 {
			status = fmt.Sprintf(" %d", r.Status)
		}
		fmt.Fprintf(w, "  %s %d. %s%s (%s)\n", mark, r.Step, r.Name, status, r.Duration.Round(time.Millisecond))
		// A kubectl step's output, as kubectl would print it (cut short).
		lines := strings.Split(strings.TrimRight(r.Output, "\n"), "\n")
		for i, l := range lines {
			if r.Output == "" || i == maxOutputLines {
				if i == maxOutputLines {
					fmt.Fprintf(w, "      │ … (%d more lines)\n", len(lines)-i)
				}
				break
			}
			fmt.Fprintf(w, "      │ %s\n", l)
		}
		for _, f := range r.Failures {
			fmt.Fprintf(w, "      %s\n", f)
		}
	}
}
