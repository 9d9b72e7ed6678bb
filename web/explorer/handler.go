package explorer

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"kubeplay/cli"
	"kubeplay/server/inproc"
	"kubeplay/web/internal/apitypes"
	"kubeplay/web/internal/status"
	"kubeplay/web/layout"
	"kubeplay/web/object"
)

// listLimit is the page size the objects table asks the API for.
const listLimit = 500

// Handler serves the explorer page. It reads everything it shows from the
// Kubernetes API it was given, through in-memory requests.
type Handler struct {
	api       *inproc.Client
	console   *cli.Console // nil: the start page has no console
	lessons   []Link
	deletions Deletions // nil: the start page names no object being deleted
}

// New returns the explorer page handler for api.
func New(api http.Handler) *Handler {
	return &Handler{api: inproc.New(api, "kubeplay-ui")}
}

// ServeHTTP renders the page for GET and HEAD; other methods get 405. The
// status is 400 for a malformed r or ns parameter, 404 for a resource type
// the API does not serve, and 200 otherwise, including when the API answered
// an error (which the page shows).
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !layout.OnlyGet(w, r) {
		return
	}
	q := r.URL.Query()
	props, code := h.props(r.Context(), q.Get("r"), q.Get("ns"), q.Get("rv"))

	layout.Write(w, r, code, Page(props))
}

// props gathers what the page shows for the type ref (empty: none selected)
// in namespace ns (empty: all namespaces), as of revision rv (empty: now).
func (h *Handler) props(ctx context.Context, ref, ns, rv string) (Props, int) {
	var p Props
	groups, errs := apitypes.Discover(ctx, h.api)
	for _, err := range errs {
		p.DiscoveryErrors = append(p.DiscoveryErrors, *errorProps(err))
	}
	code := http.StatusOK
	if ref != "" {
		sel, c := h.selection(ctx, groups, ref, ns, rv)
		p.Selection, code = &sel, c
	} else {
		p.EventsServed, p.RecentEvents, p.RecentEventsError = h.recentEvents(ctx, groups)
		p.Start = h.start(ctx)
	}

	current := ""
	if p.Selection != nil {
		current = p.Selection.Ref
	}
	linkNS := ns // carry only a usable namespace into the catalog's links
	if !apitypes.ValidNamespace(ns) {
		linkNS = ""
	}
	for _, g := range groups {
		gp := GroupProps{Name: g.Name, Version: g.Version}
		if g.Name == "" {
			gp.Name = "core"
		}
		if g.Err != nil {
			gp.Error = errorProps(g.Err)
		}
		for _, t := range g.Types {
			r := apitypes.FormatRef(t.GVR)
			gp.Types = append(gp.Types, TypeProps{
				Ref:        r,
				Kind:       t.Kind,
				Resource:   t.GVR.Resource,
				ShortNames: t.ShortNames,
				Namespaced: t.Namespaced,
				Href:       pageURL(r, t.Namespaced, linkNS),
				Current:    r == current,
			})
		}
		p.Groups = append(p.Groups, gp)
	}
	return p, code
}

// recentEventsShown is how many of the newest Events the page shows.
const recentEventsShown = 10

// recentEvents are the newest Events of the cluster (of the first page of
// them, as a list has no order but name), each linked to its object's page.
func (h *Handler) recentEvents(ctx context.Context, groups []apitypes.Group) (served bool, _ []object.ObjectEventProps, _ *ErrorProps) {
	refs := map[[2]string]apitypes.Type{} // by apiVersion and kind
	for _, g := range groups {
		for _, t := range g.Types {
			refs[[2]string{t.GVR.GroupVersion().String(), t.Kind}] = t
		}
	}
	if _, ok := refs[[2]string{"v1", "Event"}]; !ok {
		return false, nil, nil
	}
	items, err := object.Events(ctx, h.api, "/api/v1/events?limit="+strconv.Itoa(listLimit))
	if err != nil {
		return true, nil, errorProps(err)
	}
	items = items[max(len(items)-recentEventsShown, 0):]
	for i, e := range items {
		if t, ok := refs[[2]string{e.Regarding.APIVersion, e.Regarding.Kind}]; ok {
			ns := e.Regarding.Namespace
			if !t.Namespaced {
				ns = ""
			}
			items[i].Href = object.URL(apitypes.FormatRef(t.GVR), ns, e.Regarding.Name, object.TabYAML)
		}
	}
	return true, items, nil
}

// selection lists the objects of the type ref names.
func (h *Handler) selection(ctx context.Context, groups []apitypes.Group, ref, ns, rv string) (SelectionProps, int) {
	s := SelectionProps{Ref: ref, Namespace: ns}
	if rv != "" {
		n, err := strconv.ParseInt(rv, 10, 64)
		if err != nil || n <= 0 {
			s.Error = errorProps(apierrors.NewBadRequest(fmt.Sprintf("invalid rv %q: want a resourceVersion, a positive integer", rv)))
			return s, http.StatusBadRequest
		}
		s.AtRevision = n
	}
	gvr, err := apitypes.ParseRef(ref)
	if err != nil {
		s.Error = errorProps(apierrors.NewBadRequest(err.Error()))
		return s, http.StatusBadRequest
	}
	s.Ref = apitypes.FormatRef(gvr)

	t, ok := apitypes.FindType(groups, gvr)
	if !ok {
		// Discovery showed preferred versions only; another served version
		// is just as bookmarkable.
		types, err := apitypes.DiscoverVersion(ctx, h.api, gvr.GroupVersion())
		if err != nil && !apierrors.IsNotFound(err) {
			s.Error = errorProps(err)
			return s, http.StatusOK
		}
		t, ok = apitypes.FindType([]apitypes.Group{{Types: types}}, gvr)
	}
	if !ok {
		s.Error = errorProps(apitypes.NotServed(gvr))
		return s, http.StatusNotFound
	}
	s.Kind = t.Kind
	s.Resource = t.GVR.Resource
	s.GroupVersion = t.GVR.GroupVersion().String()
	s.Namespaced = t.Namespaced

	if t.Namespaced {
		s.Namespaces, s.NamespacesError = h.namespaces(ctx, ns)
		if ns != "" && !apitypes.ValidNamespace(ns) {
			s.Error = errorProps(apierrors.NewBadRequest(fmt.Sprintf("invalid namespace %q: must be a lowercase DNS label", ns)))
			return s, http.StatusBadRequest
		}
	} else {
		s.Namespace = ""
	}

	s.APIPath = apitypes.ListPath(t, s.Namespace) + "?limit=" + strconv.Itoa(listLimit)
	if s.AtRevision > 0 {
		// The list as the store held it then, which it can serve until
		// compaction drops that revision (410 Gone after).
		s.APIPath += "&resourceVersion=" + strconv.FormatInt(s.AtRevision, 10) + "&resourceVersionMatch=Exact"
		s.Now = h.currentRevision(ctx)
	}
	resp, err := h.api.Raw(ctx, http.MethodGet, s.APIPath, http.Header{"Accept": {tableMediaType}}, nil)
	if err == nil {
		err = resp.Err(http.MethodGet, s.APIPath)
	}
	var table metav1.Table
	if err == nil {
		if err = json.Unmarshal(resp.Body, &table); err != nil {
			err = apierrors.NewInternalError(fmt.Errorf("GET %s: decoding response: %w", s.APIPath, err))
		}
	}
	if err != nil {
		s.Error = errorProps(err)
		return s, http.StatusOK
	}
	s.ResourceVersion = table.ResourceVersion
	s.Truncated = table.Continue != ""
	s.AllNamespaces = t.Namespaced && s.Namespace == ""
	// kubectl get shows the columns of priority 0 (-o wide shows all).
	var shown []int
	for i, c := range table.ColumnDefinitions {
		if c.Priority == 0 {
			shown = append(shown, i)
			s.Columns = append(s.Columns, c.Name)
		}
	}
	for _, row := range table.Rows {
		var md metav1.PartialObjectMetadata
		_ = json.Unmarshal(row.Object.Raw, &md) // a row without its object still shows its cells
		o := ObjectProps{Name: md.Name, Namespace: md.Namespace}
		for _, i := range shown {
			if i < len(row.Cells) {
				o.Cells = append(o.Cells, cellText(row.Cells[i]))
			} else {
				o.Cells = append(o.Cells, "")
			}
		}
		if md.Name != "" {
			tab := ""
			if s.AtRevision > 0 {
				tab = object.TabHistory // where the object's versions are
			}
			o.Href = object.URL(s.Ref, md.Namespace, md.Name, tab)
		}
		s.Objects = append(s.Objects, o)
	}
	return s, http.StatusOK
}

// currentRevision is the cluster's resourceVersion now, as a consistent
// list reports it (0 if it cannot be read).
func (h *Handler) currentRevision(ctx context.Context) int64 {
	var l metav1.List
	if err := h.api.Get(ctx, "/api/v1/namespaces?limit=1", &l); err != nil {
		return 0
	}
	n, _ := strconv.ParseInt(l.ResourceVersion, 10, 64)
	return n
}

// tableMediaType asks the list endpoint for the Table kubectl get prints.
const tableMediaType = "application/json;as=Table;g=meta.k8s.io;v=v1"

// cellText prints a Table cell as kubectl does: strings as they are,
// numbers and booleans in JSON, nothing for null.
func cellText(c any) string {
	switch v := c.(type) {
	case nil:
		return ""
	case string:
		return v
	default:
		b, _ := json.Marshal(v)
		return string(b)
	}
}

// namespaces lists the namespace names for the selector, making sure the
// selected one (which may not exist, or not yet) is among them.
func (h *Handler) namespaces(ctx context.Context, selected string) ([]string, *ErrorProps) {
	var names []string
	var list unstructured.UnstructuredList
	err := h.api.Get(ctx, "/api/v1/namespaces", &list)
	for _, item := range list.Items {
		names = append(names, item.GetName())
	}
	found := selected == ""
	for _, n := range names {
		found = found || n == selected
	}
	if !found {
		names = append(names, selected)
	}
	if err != nil {
		return names, errorProps(err)
	}
	return names, nil
}

// pageURL is the page's URL for the type ref, keeping the namespace for
// namespaced types.
func pageURL(ref string, namespaced bool, ns string) string {
	u := "/?r=" + ref // a parsed ref holds only [a-z0-9.-/]
	if namespaced && ns != "" {
		u += "&ns=" + url.QueryEscape(ns)
	}
	return u
}

func errorProps(err error) *ErrorProps { return status.From(err) }
