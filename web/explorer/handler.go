package explorer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/duration"

	"kubeplay/server/inproc"
)

// listLimit is the page size the objects table asks the API for.
const listLimit = 500

// Handler serves the explorer page. It reads everything it shows from the
// Kubernetes API it was given, through in-memory requests.
type Handler struct {
	api *inproc.Client
	now func() time.Time
}

// New returns the explorer page handler for api; now is the clock ages are
// measured against (time.Now outside tests).
func New(api http.Handler, now func() time.Time) *Handler {
	return &Handler{api: inproc.New(api, "kubeplay-ui"), now: now}
}

// ServeHTTP renders the page for GET and HEAD; other methods get 405. The
// status is 400 for a malformed r or ns parameter, 404 for a resource type
// the API does not serve, and 200 otherwise, including when the API answered
// an error (which the page shows).
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	q := r.URL.Query()
	props, code := h.props(r.Context(), q.Get("r"), q.Get("ns"))

	var buf bytes.Buffer
	if err := Page(props).Render(r.Context(), &buf); err != nil {
		http.Error(w, "rendering the page: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(code)
	_, _ = w.Write(buf.Bytes())
}

// props gathers what the page shows for the type ref (empty: none selected)
// in namespace ns (empty: all namespaces).
func (h *Handler) props(ctx context.Context, ref, ns string) (Props, int) {
	var p Props
	groups, errs := discover(ctx, h.api)
	for _, err := range errs {
		p.DiscoveryErrors = append(p.DiscoveryErrors, *errorProps(err))
	}
	code := http.StatusOK
	if ref != "" {
		sel, c := h.selection(ctx, groups, ref, ns)
		p.Selection, code = &sel, c
	}

	current := ""
	if p.Selection != nil {
		current = p.Selection.Ref
	}
	linkNS := ns // carry only a usable namespace into the catalog's links
	if !validNamespace(ns) {
		linkNS = ""
	}
	for _, g := range groups {
		gp := GroupProps{Name: g.name, Version: g.version}
		if g.name == "" {
			gp.Name = "core"
		}
		if g.err != nil {
			gp.Error = errorProps(g.err)
		}
		for _, t := range g.types {
			r := formatRef(t.gvr)
			gp.Types = append(gp.Types, TypeProps{
				Ref:        r,
				Kind:       t.kind,
				Resource:   t.gvr.Resource,
				ShortNames: t.shortNames,
				Namespaced: t.namespaced,
				Href:       pageURL(r, t.namespaced, linkNS),
				Current:    r == current,
			})
		}
		p.Groups = append(p.Groups, gp)
	}
	return p, code
}

// selection lists the objects of the type ref names.
func (h *Handler) selection(ctx context.Context, groups []apiGroup, ref, ns string) (SelectionProps, int) {
	s := SelectionProps{Ref: ref, Namespace: ns}
	gvr, err := parseRef(ref)
	if err != nil {
		s.Error = errorProps(apierrors.NewBadRequest(err.Error()))
		return s, http.StatusBadRequest
	}
	s.Ref = formatRef(gvr)

	t, ok := findType(groups, gvr)
	if !ok {
		// Discovery showed preferred versions only; another served version
		// is just as bookmarkable.
		types, err := discoverVersion(ctx, h.api, gvr.GroupVersion())
		if err != nil && !apierrors.IsNotFound(err) {
			s.Error = errorProps(err)
			return s, http.StatusOK
		}
		t, ok = findType([]apiGroup{{types: types}}, gvr)
	}
	if !ok {
		s.Error = &ErrorProps{
			Reason:  string(metav1.StatusReasonNotFound),
			Code:    http.StatusNotFound,
			Message: fmt.Sprintf("the server doesn't have a resource type %q in %s that can be listed", gvr.Resource, gvr.GroupVersion()),
		}
		return s, http.StatusNotFound
	}
	s.Kind = t.kind
	s.Resource = t.gvr.Resource
	s.GroupVersion = t.gvr.GroupVersion().String()
	s.Namespaced = t.namespaced

	if t.namespaced {
		s.Namespaces, s.NamespacesError = h.namespaces(ctx, ns)
		if ns != "" && !validNamespace(ns) {
			s.Error = errorProps(apierrors.NewBadRequest(fmt.Sprintf("invalid namespace %q: must be a lowercase DNS label", ns)))
			return s, http.StatusBadRequest
		}
	} else {
		s.Namespace = ""
	}

	s.APIPath = listPath(t, s.Namespace) + "?limit=" + strconv.Itoa(listLimit)
	var list unstructured.UnstructuredList
	if err := h.api.Get(ctx, s.APIPath, &list); err != nil {
		s.Error = errorProps(err)
		return s, http.StatusOK
	}
	s.ResourceVersion = list.GetResourceVersion()
	s.Truncated = list.GetContinue() != ""
	now := h.now()
	for _, item := range list.Items {
		created := item.GetCreationTimestamp().Time
		row := ObjectProps{Name: item.GetName(), Namespace: item.GetNamespace(), Age: "<unknown>"}
		if !created.IsZero() {
			row.Created = created.UTC().Format(time.RFC3339)
			row.Age = duration.HumanDuration(now.Sub(created))
		}
		s.Objects = append(s.Objects, row)
	}
	return s, http.StatusOK
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

// errorProps shows err the way the API reported it: the Status's reason,
// code and message.
func errorProps(err error) *ErrorProps {
	var se apierrors.APIStatus
	if errors.As(err, &se) {
		st := se.Status()
		return &ErrorProps{Reason: string(st.Reason), Code: int(st.Code), Message: st.Message}
	}
	return &ErrorProps{Message: err.Error()}
}
