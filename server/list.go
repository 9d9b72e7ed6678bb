package server

import (
	"context"
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
)

func typesUID(s string) types.UID { return types.UID(s) }

// selectors are a request's label and field selectors.
type selectors struct {
	label labels.Selector
	field fields.Selector
}

func (s selectors) empty() bool { return s.label.Empty() && s.field.Empty() }

// selectableFields lists, per type, the fields a field selector may use
// besides metadata.name and metadata.namespace.
var selectableFields = map[string][]string{
	"/pods":                   {"spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName", "spec.hostNetwork", "status.phase", "status.podIP", "status.nominatedNodeName"},
	"/secrets":                {"type"},
	"/namespaces":             {"status.phase"},
	"/nodes":                  {"spec.unschedulable"},
	"/events":                 {"involvedObject.kind", "involvedObject.namespace", "involvedObject.name", "involvedObject.uid", "involvedObject.apiVersion", "involvedObject.resourceVersion", "involvedObject.fieldPath", "reason", "reportingComponent", "source", "type"},
	"/replicationcontrollers": {"status.replicas"},
	"/services":               {"spec.clusterIP", "spec.type"},
	"apps/replicasets":        {"status.replicas"},
	"batch/jobs":              {"status.successful"},
	"certificates.k8s.io/certificatesigningrequests": {"spec.signerName"},
}

func fieldsOf(r *catalog.Resource) []string {
	return selectableFields[r.Group+"/"+r.Resource]
}

func parseSelectors(r *http.Request, res *catalog.Resource) (selectors, error) {
	q := r.URL.Query()
	ls, err := labels.Parse(q.Get("labelSelector"))
	if err != nil {
		return selectors{}, encoding.BadRequest("%v", err)
	}
	fs, err := fields.ParseSelector(q.Get("fieldSelector"))
	if err != nil {
		return selectors{}, encoding.BadRequest("%v", err)
	}
	known := append([]string{"metadata.name", "metadata.namespace"}, fieldsOf(res)...)
	for _, req := range fs.Requirements() {
		if !slices.Contains(known, req.Field) {
			if len(known) == 2 {
				return selectors{}, encoding.BadRequest("%q is not a known field selector: only \"metadata.name\", \"metadata.namespace\"", req.Field)
			}
			return selectors{}, encoding.BadRequest("field label not supported: %s", req.Field)
		}
	}
	return selectors{label: ls, field: fs}, nil
}

// matches reports whether obj is selected.
func (s selectors) matches(res *catalog.Resource, obj object) bool {
	md := metadata(obj)
	if !s.label.Empty() {
		set := labels.Set{}
		if l, ok := md["labels"].(map[string]any); ok {
			for k, v := range l {
				set[k], _ = v.(string)
			}
		}
		if !s.label.Matches(set) {
			return false
		}
	}
	if !s.field.Empty() {
		set := fields.Set{"metadata.name": str(md, "name")}
		if res.Namespaced {
			set["metadata.namespace"] = str(md, "namespace")
		}
		for _, f := range fieldsOf(res) {
			set[f] = fieldValue(obj, f)
		}
		if !s.field.Matches(set) {
			return false
		}
	}
	return true
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
	// atRev reads at this revision (0: the latest).
	atRev int64
}

func parseListOptions(r *http.Request) (listOptions, error) {
	q := r.URL.Query()
	var opts listOptions
	if v := q.Get("limit"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return opts, encoding.BadRequest("%v", err)
		}
		if n > 0 {
			opts.limit = n
		}
	}
	if v := q.Get("continue"); v != "" {
		t, err := decodeContinue(v)
		if err != nil {
			return opts, err
		}
		opts.continued = &t
		opts.atRev = t.ResourceVersion
	}
	return opts, nil
}

// objectList is one page of a list.
type objectList struct {
	items     []object
	rev       int64
	cont      string
	remaining *int64
}

// encode returns the list as the API serves it: items without kind and
// apiVersion, as kube-apiserver serves built-in types.
func (l *objectList) encode(res *catalog.Resource) object {
	items := make([]any, 0, len(l.items))
	for _, it := range l.items {
		delete(it, "kind")
		delete(it, "apiVersion")
		items = append(items, it)
	}
	return object{"kind": res.Kind + "List", "apiVersion": res.APIVersion(), "metadata": l.meta(), "items": items}
}

// meta is the list's ListMeta.
func (l *objectList) meta() map[string]any {
	md := map[string]any{"resourceVersion": strconv.FormatInt(l.rev, 10)}
	if l.cont != "" {
		md["continue"] = l.cont
	}
	if l.remaining != nil {
		md["remainingItemCount"] = *l.remaining
	}
	return md
}

// listObjects reads one page of res's objects in ns matching sel, from one
// consistent snapshot.
func (s *Server) listObjects(ctx context.Context, res *catalog.Resource, ns string, sel selectors, opts listOptions) (*objectList, error) {
	prefix := collectionPrefix(res, ns)
	start := ""
	if opts.continued != nil {
		start = prefix + opts.continued.StartKey
	}
	out := &objectList{items: []object{}}
	rev := opts.atRev
	for {
		want := 0
		if opts.limit > 0 {
			want = int(opts.limit) - len(out.items)
		}
		page, err := s.store.List(ctx, prefix, start, want, rev)
		if err != nil {
			return nil, storeError(res, "", err)
		}
		rev = page.Revision
		for _, kv := range page.Items {
			obj, err := decodeStored(res, kv)
			if err != nil {
				return nil, apierrors.NewInternalError(err)
			}
			if sel.matches(res, obj) {
				out.items = append(out.items, obj)
			}
		}
		out.rev = rev
		if page.Remaining == 0 || len(page.Items) == 0 {
			return out, nil
		}
		next := page.Items[len(page.Items)-1].Key + "\x00"
		if opts.limit > 0 && int64(len(out.items)) >= opts.limit {
			out.cont = encodeContinue(rev, strings.TrimPrefix(next, prefix))
			if sel.empty() {
				n := page.Remaining
				out.remaining = &n
			}
			return out, nil
		}
		start = next
	}
}

func (s *Server) list(w http.ResponseWriter, r *http.Request, req *request) {
	sel, err := parseSelectors(r, req.res)
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	opts, err := parseListOptions(r)
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	list, err := s.listObjects(r.Context(), req.res, req.namespace, sel, opts)
	if err != nil {
		encoding.WriteError(w, r, err)
		return
	}
	s.writeList(w, r, req, list)
}
