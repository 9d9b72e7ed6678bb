package requests

import (
	"net/http"
	"net/url"
	"slices"
	"strings"

	"kubeplay/playground/journal"
	"kubeplay/web/layout"
)

// Path is where the log is mounted; LivePath streams its updates.
const (
	Path     = "/ui/requests"
	LivePath = "/ui/requests/live"
)

// pageEntries is how many entries the page shows; older ones stay in the
// journal (and its API) but would make the page slow to render.
const pageEntries = 200

// Handler serves the request log page and its live updates.
type Handler struct {
	journal *journal.Journal
}

// New returns the request log over j.
func New(j *journal.Journal) *Handler { return &Handler{journal: j} }

// Filter selects entries; an empty field matches everything.
type Filter struct {
	Verb     string // Kubernetes verb: "watch", "create", ...
	Resource string // "pods", or qualified: "deployments.apps"
	Status   string // "2xx", "4xx", ...
	Client   string // "kubectl", ...
	// User matches the user a request ran as, the user who impersonated
	// it, or one of its groups.
	User string
	// Session matches the requests of one kubectl command (its
	// Kubectl-Session header).
	Session string
	// By default the log shows what a person or their client sent: the
	// requests of the cluster's controllers (?controllers=show) and the
	// reads this UI makes to draw its pages (?ui=show) are hidden, and the
	// page says how many of each it hid.
	ShowControllers bool
	ShowUI          bool
}

func filterFrom(q url.Values) Filter {
	return Filter{
		Verb:            strings.TrimSpace(q.Get("verb")),
		Resource:        strings.TrimSpace(q.Get("resource")),
		Status:          strings.TrimSpace(q.Get("status")),
		Client:          strings.TrimSpace(q.Get("client")),
		User:            strings.TrimSpace(q.Get("user")),
		Session:         strings.TrimSpace(q.Get("session")),
		ShowControllers: strings.TrimSpace(q.Get("controllers")) == "show",
		ShowUI:          strings.TrimSpace(q.Get("ui")) == "show",
	}
}

// URL is the log filtered by f.
func (f Filter) URL() string {
	q := url.Values{}
	for _, p := range [][2]string{{"verb", f.Verb}, {"resource", f.Resource}, {"status", f.Status}, {"client", f.Client}, {"user", f.User}, {"session", f.Session}} {
		if p[1] != "" {
			q.Set(p[0], p[1])
		}
	}
	if f.ShowControllers {
		q.Set("controllers", "show")
	}
	if f.ShowUI {
		q.Set("ui", "show")
	}
	if len(q) == 0 {
		return Path
	}
	return Path + "?" + q.Encode()
}

func (f Filter) empty() bool { return f == Filter{} }

// Who sent a request, as far as the filter hides it.
const (
	hiddenController = "controllers"
	hiddenUI         = "ui"
)

func (f Filter) matches(e EntryProps) bool {
	return f.hiddenAs(e) == "" && f.matchesRequest(e)
}

// hides says whether the filter hides e only because of who sent it, and
// as what: hiddenController or hiddenUI ("" when it does not).
func (f Filter) hides(e EntryProps) string {
	if !f.matchesRequest(e) {
		return ""
	}
	return f.hiddenAs(e)
}

func (f Filter) hiddenAs(e EntryProps) string {
	switch {
	case !f.ShowControllers && e.Controller != "":
		return hiddenController
	case !f.ShowUI && e.UIRead:
		return hiddenUI
	}
	return ""
}

// matchesRequest matches e by everything but who sent it.
func (f Filter) matchesRequest(e EntryProps) bool {
	resource, _, _ := strings.Cut(e.Resource, ".")
	return (f.Verb == "" || strings.EqualFold(f.Verb, e.Verb)) &&
		(f.Resource == "" || f.Resource == e.Resource || f.Resource == resource) &&
		(f.Status == "" || f.Status == e.StatusClass()) &&
		(f.Client == "" || strings.EqualFold(f.Client, e.Client)) &&
		(f.User == "" || slices.Contains(e.Names, f.User) || slices.Contains(e.Groups, f.User)) &&
		(f.Session == "" || f.Session == e.Session)
}

// ServeHTTP serves the page at Path and live updates at LivePath.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !layout.OnlyGet(w, r) {
		return
	}
	switch r.URL.Path {
	case Path:
		h.page(w, r)
	case LivePath:
		h.live(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (h *Handler) page(w http.ResponseWriter, r *http.Request) {
	filter := filterFrom(r.URL.Query())
	entries, _ := h.journal.Page(0, 0)
	p := Props{Filter: filter, Held: len(entries)}
	for _, e := range slices.Backward(entries) {
		p.LastSeq = max(p.LastSeq, e.Seq)
		props := entryProps(e, r.Host)
		switch filter.hides(props) {
		case hiddenController:
			p.HiddenControllers++
			continue
		case hiddenUI:
			p.HiddenUI++
			continue
		}
		if len(p.Entries) < pageEntries && filter.matches(props) {
			p.Entries = append(p.Entries, props)
		}
	}
	p.Shown = len(p.Entries)
	layout.Write(w, r, http.StatusOK, Page(p))
}
