package watch

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"kubeplay/server/inproc"
	"kubeplay/web/internal/apitypes"
	"kubeplay/web/internal/status"
	"kubeplay/web/layout"
)

// Path is where the watch page is mounted; LivePath streams its events.
const (
	Path     = "/ui/watch"
	LivePath = "/ui/watch/live"
)

const userAgent = "kubeplay-ui"

// Handler serves the live watch page and its WebSocket.
type Handler struct {
	api    http.Handler
	client *inproc.Client
}

// New returns the watch view over api; watches go through api like any
// client's, so they show in the request log.
func New(api http.Handler) *Handler {
	return &Handler{api: api, client: inproc.New(api, userAgent)}
}

// Options is what the page's form chooses: a watch request.
type Options struct {
	Ref               string // "v1/configmaps"
	Namespace         string // "" for all namespaces
	LabelSelector     string
	FieldSelector     string
	ResourceVersion   string
	Bookmarks         bool
	SendInitialEvents bool
}

func optionsFrom(q url.Values) Options {
	return Options{
		Ref:               strings.TrimSpace(q.Get("r")),
		Namespace:         strings.TrimSpace(q.Get("ns")),
		LabelSelector:     q.Get("labelSelector"),
		FieldSelector:     q.Get("fieldSelector"),
		ResourceVersion:   strings.TrimSpace(q.Get("resourceVersion")),
		Bookmarks:         q.Get("bookmarks") != "",
		SendInitialEvents: q.Get("sendInitialEvents") != "",
	}
}

// request is the API watch the options ask for, on type t.
func (o Options) request(t apitypes.Type) string {
	q := url.Values{"watch": {"1"}}
	if o.LabelSelector != "" {
		q.Set("labelSelector", o.LabelSelector)
	}
	if o.FieldSelector != "" {
		q.Set("fieldSelector", o.FieldSelector)
	}
	if o.ResourceVersion != "" {
		q.Set("resourceVersion", o.ResourceVersion)
	}
	if o.Bookmarks || o.SendInitialEvents {
		q.Set("allowWatchBookmarks", "true")
	}
	if o.SendInitialEvents {
		// The API requires both with sendInitialEvents.
		q.Set("sendInitialEvents", "true")
		q.Set("resourceVersionMatch", "NotOlderThan")
	}
	ns := o.Namespace
	if !t.Namespaced {
		ns = ""
	}
	return apitypes.ListPath(t, ns) + "?" + q.Encode()
}

// ServeHTTP serves the page at Path and the events at LivePath.
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

// lookup validates the options and finds their type.
func (h *Handler) lookup(ctx context.Context, o Options) (apitypes.Type, error) {
	t, err := apitypes.Lookup(ctx, h.client, o.Ref)
	if err == nil && t.Namespaced && o.Namespace != "" && !apitypes.ValidNamespace(o.Namespace) {
		err = apierrors.NewBadRequest(fmt.Sprintf("invalid namespace %q: must be a lowercase DNS label", o.Namespace))
	}
	return t, err
}

func (h *Handler) page(w http.ResponseWriter, r *http.Request) {
	o := optionsFrom(r.URL.Query())
	p := Props{Options: o}
	groups, _ := apitypes.Discover(r.Context(), h.client)
	for _, g := range groups {
		for _, t := range g.Types {
			if slices.Contains(t.Verbs, "watch") {
				p.Types = append(p.Types, TypeOption{Ref: apitypes.FormatRef(t.GVR), Label: t.Kind + " (" + apitypes.FormatRef(t.GVR) + ")"})
			}
		}
	}
	code := http.StatusOK
	if o.Ref != "" {
		t, err := h.lookup(r.Context(), o)
		if err != nil {
			p.Error = status.From(err)
			code = p.Error.Code
		} else {
			p.Request = o.request(t)
		}
	}
	layout.Write(w, r, code, Page(p))
}
