package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"kubeplay/server/catalog"
	"kubeplay/server/encoding"
	"kubeplay/store"
)

func typesUID(s string) types.UID { return types.UID(s) }

// selectors are a request's label and field selectors.
type selectors struct {
	label labels.Selector
	field fields.Selector
}

func (s selectors) empty() bool { return s.label.Empty() && s.field.Empty() }

// selectableField is a field a field selector may name besides
// metadata.name: its path in the object and the value an absent field has
// (kube-apiserver selects on the defaulted, typed object, where an unset
// bool is "false", an unset count "0", a pod's unset restartPolicy
// "Always"). or is the path read when path's value is empty (an Event's
// source is its reporting component when it has no source.component).
// none marks a field the real server accepts but never matches a value
// with (pods' status.podIPs).
type selectableField struct {
	path, or, zero string
	none           bool
}

// defaultFields is the table of the types without one of their own.
var defaultFields = withNamespace(map[string]selectableField{})

func withNamespace(t map[string]selectableField) map[string]selectableField {
	t["metadata.namespace"] = selectableField{}
	return t
}

func fieldsOf(r *catalog.Resource) (table map[string]selectableField, own bool) {
	if r.Custom != nil {
		// Custom resources select on their CRD's selectableFields, and
		// reject other fields as types with a table of their own do.
		table = withNamespace(map[string]selectableField{})
		for _, f := range r.Custom.SelectableFields {
			table[f] = selectableField{}
		}
		return table, true
	}
	if table = strategyOf(r).selectableFields; table == nil {
		return defaultFields, false
	}
	return table, true
}

// parseSelectors reads a request's selectors: their syntax, then the fields
// the type can select on.
func parseSelectors(r *http.Request, res *catalog.Resource) (selectors, error) {
	sel, err := parseSelectorSyntax(r)
	if err != nil {
		return sel, err
	}
	return sel, sel.supported(res)
}

func parseSelectorSyntax(r *http.Request) (selectors, error) {
	q := r.URL.Query()
	ls, err := labels.Parse(q.Get("labelSelector"))
	if err != nil {
		return selectors{}, encoding.BadRequest("%v", err)
	}
	fs, err := fields.ParseSelector(q.Get("fieldSelector"))
	if err != nil {
		return selectors{}, encoding.BadRequest("%v", err)
	}
	return selectors{label: ls, field: fs}, nil
}

// supported checks that res can select on every field s names.
func (s selectors) supported(res *catalog.Resource) error {
	table, own := fieldsOf(res)
	for _, req := range s.field.Requirements() {
		if _, ok := table[req.Field]; ok || req.Field == "metadata.name" {
			continue
		}
		if !own {
			return encoding.BadRequest("%q is not a known field selector: only \"metadata.name\", \"metadata.namespace\"", req.Field)
		}
		return encoding.BadRequest("field label not supported: %s", req.Field)
	}
	return nil
}

// matches reports whether obj is selected.
func (s selectors) matches(res *catalog.Resource, obj object) bool {
	md := metadata(obj)
	if !s.label.Empty() && !s.label.Matches(labelSet(md["labels"])) {
		return false
	}
	if !s.field.Empty() {
		set := fields.Set{"metadata.name": str(md, "name"), "metadata.namespace": str(md, "namespace")}
		table, _ := fieldsOf(res)
		for name, f := range table {
			if name == "metadata.namespace" || f.none {
				continue
			}
			path := f.path
			if path == "" {
				path = name
			}
			if set[name] = fieldValue(obj, path); set[name] == "" && f.or != "" {
				set[name] = fieldValue(obj, f.or)
			}
			if set[name] == "" {
				set[name] = f.zero
			}
		}
		if !s.field.Matches(set) {
			return false
		}
	}
	return true
}

// labelSet is the set a label selector sees of metadata.labels l: values
// that are not strings read as "".
func labelSet(l any) labels.Set {
	set := labels.Set{}
	if l, ok := l.(map[string]any); ok {
		for k, v := range l {
			set[k], _ = v.(string)
		}
	}
	return set
}

// fieldValue reads a dotted path as a field selector sees it.
func fieldValue(obj object, path string) string {
	var cur any = obj
	for _, p := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return ""
		}
		cur = m[p]
	}
	switch v := cur.(type) {
	case nil:
		return ""
	case string:
		return v
	default:
		return fmt.Sprint(v)
	}
}

type listOptions struct {
	limit     int64
	continued *continueToken
	// atRev reads at exactly this revision (0: the latest).
	atRev int64
	// minRev, for a read at the latest revision, is the oldest revision the
	// client accepts (resourceVersion with NotOlderThan semantics).
	minRev int64
}

// parseListOptions reads limit, continue, resourceVersion and
// resourceVersionMatch into where a list reads from, following the real
// server's table: unset reads the latest revision; "0" reads any (the
// latest here) and, like the watch cache that serves it, in one page;
// a value with Exact, or with no match and a limit, reads at that
// revision; a value otherwise reads one not older than it.
func parseListOptions(r *http.Request) (listOptions, error) {
	var opts listOptions
	q := r.URL.Query()
	if v := q.Get("limit"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return opts, encoding.BadRequest("%v", err)
		}
		if n > 0 {
			opts.limit = n
		}
	}
	rv, match := q.Get("resourceVersion"), q.Get("resourceVersionMatch")
	if rv == "0" {
		opts.limit = 0
	}
	if v := q.Get("continue"); v != "" {
		if rv != "" && rv != "0" {
			return opts, encoding.BadRequest("specifying resource version is not allowed when using continue")
		}
		t, err := decodeContinue(v)
		if err != nil {
			return opts, err
		}
		opts.continued = &t
		opts.atRev = max(t.ResourceVersion, 0) // negative: continue at the latest revision
		return opts, nil
	}
	n, err := parseResourceVersion(rv)
	switch {
	case err != nil:
		return opts, apierrors.NewBadRequest("invalid resource version: " + encoding.StatusOf(err).Message)
	case n == 0:
	case match == matchExact || match == "" && opts.limit > 0:
		opts.atRev = n
	default:
		opts.minRev = n
	}
	return opts, nil
}

// objectList is one page of a list: its objects decoded (items) or, for a
// list read to be sent as stored, not (stored).
type objectList struct {
	items  []object
	stored []storedObject
	listMeta
}

// listMeta is what a list says of itself: the revision it was read at,
// where the next page starts and how many objects the pages after it hold
// (when known).
type listMeta struct {
	rev       int64
	cont      string
	remaining *int64
}

// encode returns the list as the API serves it: items without kind and
// apiVersion, metadata first, as kube-apiserver serves built-in types (and
// as a get of each one reads); custom objects, served unstructured, keep
// them, their fields by name, and their list metadata always has a
// continue.
func (l *objectList) encode(res *catalog.Resource) object {
	items := make([]any, 0, len(l.items))
	for _, it := range l.items {
		if res.Custom != nil {
			items = append(items, it)
			continue
		}
		delete(it, "kind")
		delete(it, "apiVersion")
		items = append(items, encoding.Ordered(it))
	}
	md, kind := l.meta(), res.Kind+"List"
	if res.Custom != nil {
		kind = res.Custom.ListKind
		if _, ok := md["continue"]; !ok {
			md["continue"] = ""
		}
	}
	return object{"kind": kind, "apiVersion": res.APIVersion(), "metadata": md, "items": items}
}

// meta is the list's ListMeta.
func (l *listMeta) meta() map[string]any {
	md := map[string]any{"resourceVersion": strconv.FormatInt(l.rev, 10)}
	if l.cont != "" {
		md["continue"] = l.cont
	}
	if l.remaining != nil {
		md["remainingItemCount"] = *l.remaining
	}
	return md
}

// len is the number of objects in the page.
func (l *objectList) len() int { return len(l.items) + len(l.stored) }

// listObjects reads one page of res's objects in ns matching sel, from one
// consistent snapshot; decoded, or to be sent as stored when asStored.
func (s *registry) listObjects(ctx context.Context, res *catalog.Resource, ns string, sel selectors, opts listOptions, asStored bool) (*objectList, error) {
	out := &objectList{items: []object{}}
	keep := func(page []store.KeyValue) (int, error) {
		n := out.len()
		if asStored {
			out.stored = slices.Grow(out.stored, len(page))
		}
		for _, kv := range page {
			if asStored {
				o, err := readStored(res, kv)
				if err != nil {
					return 0, apierrors.NewInternalError(err)
				}
				ok, err := sel.matchesStored(res, &o)
				if err != nil {
					return 0, apierrors.NewInternalError(err)
				}
				if ok {
					out.stored = append(out.stored, o)
				}
				continue
			}
			obj, err := decodeStored(res, kv)
			if _, ok := err.(apierrors.APIStatus); ok {
				return 0, err // a conversion webhook failed
			}
			if err != nil {
				return 0, apierrors.NewInternalError(err)
			}
			if sel.matches(res, obj) {
				out.items = append(out.items, obj)
			}
		}
		return out.len() - n, nil
	}
	var err error
	if out.listMeta, err = s.readList(ctx, res, collectionPrefix(res, ns), opts, keep); err != nil {
		return nil, err
	}
	if !sel.empty() {
		out.remaining = nil // the rest is not filtered, so not counted (as kube-apiserver)
	}
	return out, nil
}

// readList is the one read of a list from the store: it reads the objects
// of the collection under prefix, a collection of res, from one consistent
// snapshot as opts says (where to continue from, at which revision, at most
// how many), a page at a time, handing each page's items to keep, which
// returns how many of them the list has (those a selector matches); it
// returns the list's metadata. A list that reaches opts.limit ends with a
// continue token and the count of the objects it did not read.
func (s *registry) readList(ctx context.Context, res *catalog.Resource, prefix string, opts listOptions, keep func([]store.KeyValue) (int, error)) (listMeta, error) {
	var md listMeta
	start := ""
	if opts.continued != nil {
		start = prefix + opts.continued.StartKey
	}
	rev, kept := opts.atRev, int64(0)
	for {
		want := 0
		if opts.limit > 0 {
			want = int(opts.limit - kept)
		}
		page, err := s.store.List(ctx, prefix, start, want, rev)
		switch {
		case errors.Is(err, store.ErrCompacted) && opts.continued != nil:
			return md, errContinueExpired(opts.continued.StartKey)
		case errors.Is(err, store.ErrCompacted):
			return md, errListTooOld()
		case err != nil:
			return md, storeError(res, "", err)
		}
		rev = page.Revision
		n, err := keep(page.Items)
		if err != nil {
			return md, err
		}
		kept += int64(n)
		md.rev = rev
		if page.Remaining == 0 || len(page.Items) == 0 {
			return md, nil
		}
		next := page.Items[len(page.Items)-1].Key + "\x00"
		if opts.limit > 0 && kept >= opts.limit {
			md.cont = encodeContinue(rev, strings.TrimPrefix(next, prefix))
			n := page.Remaining
			md.remaining = &n
			return md, nil
		}
		start = next
	}
}

func (s *Server) list(w http.ResponseWriter, r *http.Request, req *request) {
	sel, err := parseQuery(r, req.res, false, false)
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	opts, err := parseListOptions(r)
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	if err := s.reg.awaitRevision(r.Context(), max(opts.atRev, opts.minRev)); err != nil {
		writeError(w, r, err)
		return
	}
	asStored := s.sendsStored(r, req)
	if asStored && sel.empty() && opts.limit == 0 && opts.continued == nil && opts.atRev == 0 {
		s.writeWholeStoredList(r.Context(), w, r, req.res, req.namespace)
		return
	}
	list, err := s.reg.listObjects(r.Context(), req.res, req.namespace, sel, opts, asStored)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if asStored {
		writeStoredList(w, r, req.res, list)
		return
	}
	s.writeList(w, r, req, list)
}
