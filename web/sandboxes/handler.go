package sandboxes

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"kubeplay/playground"
	"kubeplay/server/releases"

	"kubeplay/server/inproc"
	"kubeplay/web/internal/origin"
	"kubeplay/web/layout"
)

// Path is where the page is mounted.
const Path = "/ui/sandboxes"

// playgroundPrefix is where the playground API is served.
const playgroundPrefix = "/playground/v1"

// Handler serves the page.
type Handler struct {
	play *inproc.Client // nil: no playground API here
}

// New returns the page over the playground API play serves (nil: none).
func New(play http.Handler) *Handler {
	if play == nil {
		return &Handler{}
	}
	return &Handler{play: inproc.New(play, "kubeplay-ui")}
}

// ServeHTTP shows the page (GET) or acts on a form (POST: action create,
// with an optional built-in scenario; upload, a multipart form with a
// snapshot; reset or delete, with id) and then shows the page again by
// redirection, or the page with the API's error.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var p Props
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		p.Notice = r.URL.Query().Get("notice")
	case http.MethodPost:
		if !origin.ParseForm(w, r) {
			return
		}
		form := r.PostForm
		if strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/form-data") {
			if err := r.ParseMultipartForm(maxMemory); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			form = r.PostForm
		}
		if h.play != nil {
			notice, err := h.act(r, form)
			if err == nil {
				http.Redirect(w, r, Path+"?notice="+url.QueryEscape(notice), http.StatusSeeOther)
				return
			}
			p.Error = err.Error()
		}
	default:
		w.Header().Set("Allow", "GET, HEAD, POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if h.play != nil {
		h.load(r.Context(), &p)
	}
	layout.Write(w, r, http.StatusOK, Page(p))
}

// sandbox is a sandbox as the playground API shows it (the fields the page
// uses).
type sandbox struct {
	ID       string
	Created  time.Time
	Settings struct {
		Controllers     map[string]bool
		FinalizerBots   []struct{ Finalizer, Delay string }
		EmulatedVersion string
		FeatureGates    map[string]bool
	}
	Usage struct{ Revision, Objects int64 }
}

// scenario is a built-in scenario (the fields the page uses).
type scenario struct {
	Name, Description string
	Sandbox           bool
	Steps             []struct{ Name string }
}

// load reads the sandboxes and the built-in scenarios.
func (h *Handler) load(ctx context.Context, p *Props) {
	p.Available = true
	var sandboxes struct{ Items []sandbox }
	var scenarios struct{ Items []scenario }
	for path, out := range map[string]any{"/sandboxes": &sandboxes, "/scenarios": &scenarios} {
		if err := h.call(ctx, http.MethodGet, path, out); err != nil && p.Error == "" {
			p.Error = err.Error()
		}
	}
	for _, s := range sandboxes.Items {
		p.Sandboxes = append(p.Sandboxes, sandboxProps(s))
	}
	for _, s := range scenarios.Items {
		p.Scenarios = append(p.Scenarios, ScenarioProps{Name: s.Name, Description: strings.TrimSpace(s.Description), Sandbox: s.Sandbox, Steps: len(s.Steps)})
	}
}

func sandboxProps(s sandbox) SandboxProps {
	sp := SandboxProps{ID: s.ID, Created: s.Created.UTC().Format(time.DateTime), Objects: s.Usage.Objects, Revision: s.Usage.Revision}
	for _, name := range slices.Sorted(maps.Keys(s.Settings.Controllers)) {
		if s.Settings.Controllers[name] {
			sp.Controllers = append(sp.Controllers, ControllerProps{Name: name, Simulated: playground.IsSimulated(name)})
		}
	}
	for _, b := range s.Settings.FinalizerBots {
		sp.Controllers = append(sp.Controllers, ControllerProps{Name: fmt.Sprintf("finalizer bot %s (%s)", b.Finalizer, b.Delay), Simulated: true})
	}
	sp.Version, _ = releases.Parse(s.Settings.EmulatedVersion)
	for _, name := range slices.Sorted(maps.Keys(s.Settings.FeatureGates)) {
		sp.Gates = append(sp.Gates, GateProps{Name: name, On: s.Settings.FeatureGates[name]})
	}
	return sp
}

// maxMemory is how much of an uploaded snapshot is held in memory (the
// rest goes to a temporary file).
const maxMemory = 8 << 20

// act does what a form asks and returns the notice to show.
func (h *Handler) act(r *http.Request, form url.Values) (string, error) {
	ctx, id := r.Context(), form.Get("id")
	switch form.Get("action") {
	case "upload":
		f, _, err := r.FormFile("snapshot")
		if err != nil {
			return "", fmt.Errorf("choose a snapshot to upload (%v)", err)
		}
		defer f.Close()
		snapshot, err := io.ReadAll(f)
		if err != nil {
			return "", err
		}
		var created struct{ ID string }
		header := http.Header{"Content-Type": {"application/vnd.sqlite3"}}
		if err := h.send(ctx, http.MethodPost, "/sandboxes", header, snapshot, &created); err != nil {
			return "", err
		}
		return "Created sandbox " + created.ID + " from the snapshot.", nil
	case "create":
		path := "/sandboxes"
		if name := form.Get("scenario"); name != "" {
			path += "?scenario=" + url.QueryEscape(name)
		}
		var created struct {
			ID       string
			Scenario *struct {
				Name   string
				Passed bool
				Error  string
			}
		}
		if err := h.call(ctx, http.MethodPost, path, &created); err != nil {
			return "", err
		}
		notice := "Created sandbox " + created.ID
		if sc := created.Scenario; sc != nil {
			outcome := "every step passed"
			if !sc.Passed {
				outcome = "a step failed" + strings.TrimPrefix(": "+sc.Error, ": ")
			}
			notice += fmt.Sprintf(", set up by the scenario %s (%s)", sc.Name, outcome)
		}
		return notice + ".", nil
	case "emulate":
		settings := map[string]any{"emulatedVersion": form.Get("version")}
		gates := map[string]bool{}
		for _, name := range form["gate"] {
			if v := form.Get("gate." + name); v != "" {
				gates[name] = v == "on"
			}
		}
		if len(gates) > 0 {
			settings["featureGates"] = gates
		}
		body, err := json.Marshal(settings)
		if err != nil {
			return "", err
		}
		header := http.Header{"Content-Type": {"application/merge-patch+json"}}
		if err := h.send(ctx, http.MethodPatch, "/sandboxes/"+url.PathEscape(id)+"/settings", header, body, nil); err != nil {
			return "", err
		}
		return "Sandbox " + id + " emulates Kubernetes v" + form.Get("version") + ".", nil
	case "reset":
		return "Reset sandbox " + id + ": it is empty again.", h.call(ctx, http.MethodPost, "/sandboxes/"+url.PathEscape(id)+"/reset", nil)
	case "delete":
		return "Deleted sandbox " + id + ".", h.call(ctx, http.MethodDelete, "/sandboxes/"+url.PathEscape(id), nil)
	}
	return "", fmt.Errorf("unknown action %q", form.Get("action"))
}

// call sends a request without a body to the playground API and decodes
// its JSON answer into out (if not nil); an error answer becomes an error
// with its message.
func (h *Handler) call(ctx context.Context, method, path string, out any) error {
	return h.send(ctx, method, path, http.Header{}, nil, out)
}

// send is call with a header and a body.
func (h *Handler) send(ctx context.Context, method, path string, header http.Header, body []byte, out any) error {
	header.Set("Accept", "application/json")
	resp, err := h.play.Raw(ctx, method, playgroundPrefix+path, header, body)
	if err != nil {
		return err
	}
	if resp.Code/100 != 2 {
		var e struct{ Error struct{ Message string } }
		if json.Unmarshal(resp.Body, &e) != nil || e.Error.Message == "" {
			e.Error.Message = strings.TrimSpace(string(resp.Body))
		}
		return fmt.Errorf("%s %s: %d %s", method, playgroundPrefix+path, resp.Code, e.Error.Message)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(resp.Body, out)
}
