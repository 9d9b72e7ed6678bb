package web

import (
	"math"
	"mime"
	"net/http"
	"strings"
	"time"

	"kubeplay/cli"
	"kubeplay/playground"
	"kubeplay/playground/journal"
	"kubeplay/playground/scenario"
	"kubeplay/web/assets"
	"kubeplay/web/editor"
	"kubeplay/web/emulation"
	"kubeplay/web/emulation/header"
	"kubeplay/web/explorer"
	"kubeplay/web/lessons"
	"kubeplay/web/object"
	"kubeplay/web/requestas"
	"kubeplay/web/requests"
	"kubeplay/web/sandboxes"
	"kubeplay/web/watch"
)

// Sandbox is the cluster the UI shows: its API, the journal of the
// requests that API served, and the timelines of deletions (nil if none are
// kept).
type Sandbox interface {
	Handler() http.Handler
	Journal() *journal.Journal
	DeletionJournal() *playground.DeletionJournal
}

// New returns the handler for the whole site: the UI routes it owns ("/"
// exactly, "/ui/..." for UI pages and assets), and everything else is passed
// to the sandbox's API unchanged (so /api, /apis, /version, /healthz etc.
// reach the API server, and are journaled).
//
// "/" is the UI for browsers; a GET or HEAD of "/" whose Accept header names
// a specific media type but not HTML (kubectl get --raw / sends
// "application/json, */*") goes to api, which lists its root paths as
// kube-apiserver does.
//
// The UI's pages send their own API requests as the identity the "request
// as" switch (POST /ui/as) chose; see package requestas. A sandbox that is
// an emulation.Cluster (as playground.Sandbox is) gets the switch of its
// emulated release in every page's header, and its page (/ui/emulation).
func New(sb Sandbox) http.Handler { return NewWithPlayground(sb, nil) }

// NewWithPlayground is New with the sandboxes page (/ui/sandboxes)
// managing the sandboxes of the playground API play serves (nil: the page
// says there is none).
func NewWithPlayground(sb Sandbox, play http.Handler) http.Handler {
	api := sb.Handler()
	uiAPI := requestas.Impersonating(api)
	var deletions object.Deletions
	start := explorer.New(uiAPI).WithStart(cli.New(uiAPI), featuredLessons())
	if j := sb.DeletionJournal(); j != nil {
		deletions = j
		start = start.WithDeletions(j)
	}
	c, _ := sb.(emulation.Cluster)
	var emu http.Handler
	if c != nil {
		emu = emulation.New(c)
	}
	return &site{
		cluster:   c,
		emulation: emu,
		api:       api,
		as:        &requestas.Switch{},
		explorer:  start,
		object:    withHistory(object.New(uiAPI, deletions), sb),
		watch:     watch.New(uiAPI),
		editor:    editor.New(uiAPI),
		requests:  requests.New(sb.Journal()),
		lessons:   lessons.New(lessonTarget(sb), sb.Journal()),
		sandboxes: sandboxes.New(play),
		assets:    assets.NewHandler(),
	}
}

type site struct {
	cluster   emulation.Cluster // nil: the sandbox cannot switch releases
	emulation http.Handler
	api       http.Handler
	as        *requestas.Switch
	explorer  *explorer.Handler
	object    http.Handler
	watch     http.Handler
	editor    http.Handler
	requests  http.Handler
	lessons   http.Handler
	sandboxes http.Handler
	assets    http.Handler
}

func (s *site) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	if p == "/" || strings.HasPrefix(p, "/ui/") {
		ctx := requestas.NewContext(r.Context(), s.as.Current(), r.URL.RequestURI())
		if s.cluster != nil {
			ctx = header.NewContext(ctx, s.cluster.Version(), r.URL.RequestURI())
		}
		r = r.WithContext(ctx)
	}
	switch {
	case p == "/" && isAPIClient(r):
		s.api.ServeHTTP(w, r)
	case p == "/":
		w.Header().Add("Vary", "Accept")
		pageHeaders(w.Header())
		s.explorer.ServeHTTP(w, r)
	case p == explorer.ConsolePath:
		pageHeaders(w.Header())
		s.explorer.Console(w, r)
	case strings.HasPrefix(p, assets.Prefix):
		assetHeaders(w.Header())
		s.assets.ServeHTTP(w, r)
	case p == requests.Path || p == requests.LivePath:
		pageHeaders(w.Header())
		s.requests.ServeHTTP(w, r)
	case p == object.Path:
		pageHeaders(w.Header())
		s.object.ServeHTTP(w, r)
	case p == watch.Path || p == watch.LivePath:
		pageHeaders(w.Header())
		s.watch.ServeHTTP(w, r)
	case p == editor.Path:
		pageHeaders(w.Header())
		s.editor.ServeHTTP(w, r)
	case p == requestas.Path:
		pageHeaders(w.Header())
		s.as.ServeHTTP(w, r)
	case p == emulation.Path && s.emulation != nil:
		pageHeaders(w.Header())
		s.emulation.ServeHTTP(w, r)
	case p == lessons.Path:
		pageHeaders(w.Header())
		s.lessons.ServeHTTP(w, r)
	case p == sandboxes.Path:
		pageHeaders(w.Header())
		s.sandboxes.ServeHTTP(w, r)
	case p == "/ui" || strings.HasPrefix(p, "/ui/"):
		pageHeaders(w.Header())
		http.NotFound(w, r)
	default:
		s.api.ServeHTTP(w, r)
	}
}

// pageHeaders are set on every UI page. Pages show live API state, so they
// are never cached. No frame restrictions: documentation embeds the UI.
func pageHeaders(h http.Header) {
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
}

// assetHeaders are set on every asset: revalidate each time (cheap: the
// assets handler sends ETags), since asset URLs carry no version.
func assetHeaders(h http.Header) {
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Content-Type-Options", "nosniff")
}

// isAPIClient reports whether a GET or HEAD request's Accept header names a
// specific media type (application/json, yaml, protobuf, ...) and no HTML: an
// API client rather than a browser. No Accept header, or only */*, is a browser.
func isAPIClient(r *http.Request) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	specific := false
	for _, v := range r.Header.Values("Accept") {
		for _, part := range strings.Split(v, ",") {
			mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err != nil {
				continue
			}
			switch {
			case mt == "text/html" || mt == "application/xhtml+xml":
				return false
			case !strings.Contains(mt, "*"):
				specific = true
			}
		}
	}
	return specific
}

func featuredLessons() []explorer.Link {
	var links []explorer.Link
	for _, name := range lessons.Featured {
		links = append(links, explorer.Link{Label: name, Href: lessons.LessonURL(name, 0)})
	}
	return links
}

// lessonTarget is where lessons run: sb itself, with its clock and
// controllers when it is a sandbox of this process.
func lessonTarget(sb Sandbox) scenario.Target {
	if l, ok := sb.(scenario.Local); ok {
		return scenario.LocalTarget(l)
	}
	return scenario.Target{Server: "http://sandbox", Client: scenario.HandlerClient(sb.Handler())}
}

// withHistory gives the object page its History tab when sb keeps one (a
// playground sandbox does), naming the request behind each version from
// sb's request log.
func withHistory(h *object.Handler, sb Sandbox) *object.Handler {
	hist, ok := sb.(object.Historian)
	if !ok {
		return h
	}
	j := sb.Journal()
	return h.WithHistory(hist, func() map[int64]object.Writer {
		entries, _ := j.Page(0, math.MaxInt)
		writers := map[int64]object.Writer{}
		for _, e := range entries {
			for _, rev := range e.Audit.Revisions {
				w := object.Writer{Time: e.Time.UTC().Format(time.RFC3339), UserAgent: e.UserAgent, Method: e.Method, Path: e.Path}
				if u := e.Audit.User; u != nil {
					w.User = u.Name
				}
				writers[rev] = w
			}
		}
		return writers
	})
}
