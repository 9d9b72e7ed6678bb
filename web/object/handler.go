package object

import (
	"context"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"kubeplay/server"
	"kubeplay/server/inproc"
	"kubeplay/web/internal/apitypes"
	"kubeplay/web/internal/status"
	"kubeplay/web/internal/yamlview"
	"kubeplay/web/layout"
)

// Deletions is where the deletion timelines come from (the sandbox's
// deletion journal).
type Deletions interface {
	// TimelineOf returns the deletion events of the latest object named
	// ns/name of resource gr, oldest first; nil if none.
	TimelineOf(gr schema.GroupResource, ns, name string) []server.DeletionEvent
}

// Handler serves the object page: one object as YAML, its managed fields,
// and its deletion. It reads the object through the API it was given.
type Handler struct {
	api       *inproc.Client
	deletions Deletions
	history   Historian
	writers   Writers
}

// New returns the object page over api and the deletion journal d.
func New(api http.Handler, d Deletions) *Handler {
	return &Handler{api: inproc.New(api, "kubeplay-ui"), deletions: d}
}

// ServeHTTP renders the page for GET and HEAD. The status is the API's
// (404 for a missing object or type, 400 for a malformed parameter), 200
// when the object was shown.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !layout.OnlyGet(w, r) {
		return
	}
	q := r.URL.Query()
	p := Props{Ref: q.Get("r"), Namespace: q.Get("ns"), Name: q.Get("name"), Tab: q.Get("tab"), Manager: q.Get("manager")}
	if p.Tab != TabFields && p.Tab != TabDeletion && (p.Tab != TabHistory || h.history == nil) {
		p.Tab = TabYAML
	}
	p.HasHistory = h.history != nil
	code := h.props(r.Context(), &p)
	layout.Write(w, r, code, Page(p))
}

func (h *Handler) props(ctx context.Context, p *Props) int {
	fail := func(err error) int {
		p.Error = status.From(err)
		if p.Error.Code == 0 {
			return http.StatusInternalServerError
		}
		return p.Error.Code
	}
	t, err := apitypes.Lookup(ctx, h.api, p.Ref)
	if err != nil {
		return fail(err)
	}
	if !t.Namespaced {
		p.Namespace = ""
	}
	if err := apitypes.CheckObject(t, p.Namespace, p.Name); err != nil {
		return fail(err)
	}
	p.Kind = t.Kind
	p.APIPath = apitypes.ObjectPath(t, p.Namespace, p.Name)
	var obj map[string]any
	err = h.api.Get(ctx, p.APIPath, &obj)
	if p.Tab == TabDeletion {
		// A deleted object still has its timeline.
		p.Deletion = h.deletion(ctx, t, p.Namespace, p.Name, obj)
	}
	if p.Tab == TabHistory {
		// A deleted object still has its history.
		p.History = h.historyProps(ctx, t.GVR, p.Ref, p.Namespace, p.Name)
	}
	if err != nil {
		if apierrors.IsNotFound(err) && p.Deletion != nil && len(p.Deletion.Timeline) > 0 {
			p.Gone = true
			return http.StatusOK
		}
		if apierrors.IsNotFound(err) && p.History != nil && len(p.History.Revisions) > 0 {
			p.Gone = true
			return http.StatusOK
		}
		return fail(err)
	}
	md, _ := obj["metadata"].(map[string]any)
	_, p.Terminating = md["deletionTimestamp"]
	if p.Tab == TabDeletion || p.Tab == TabHistory {
		return http.StatusOK
	}
	ms := managers(obj)
	for _, m := range ms {
		p.Managers = append(p.Managers, m.ManagerProps)
	}
	if p.Tab == TabYAML {
		// The YAML view leaves managedFields in, as kubectl get -o yaml shows them.
		for _, l := range yamlview.Lines(obj, yamlview.ByIndex) {
			p.Lines = append(p.Lines, LineProps{Tokens: l.Tokens})
		}
		if uid, _ := md["uid"].(string); uid != "" && t.Kind != "Event" {
			p.Events = h.events(ctx, p.Namespace, uid)
		}
		return http.StatusOK
	}
	// The fields view marks fields instead of printing managedFields.
	if md, ok := obj["metadata"].(map[string]any); ok {
		delete(md, "managedFields")
	}
	for _, l := range yamlview.Lines(obj, elementFunc(ms)) {
		lp := LineProps{Tokens: l.Tokens, Owners: owners(ms, l)}
		var names []string
		for _, i := range lp.Owners {
			names = append(names, ms[i].describe())
		}
		lp.Title = strings.Join(names, "\n")
		if p.Manager != "" {
			lp.Dim = true
			for _, i := range lp.Owners {
				lp.Dim = lp.Dim && ms[i].Name != p.Manager
			}
		}
		p.Lines = append(p.Lines, lp)
	}
	return http.StatusOK
}

// describe is a manager as the hover text shows it.
func (m manager) describe() string {
	s := m.Name + " · " + m.Operation
	if m.Subresource != "" {
		s += " /" + m.Subresource
	}
	return s + " · " + m.APIVersion + " · " + m.Time
}
