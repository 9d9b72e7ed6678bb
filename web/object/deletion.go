package object

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"

	"kubeplay/internal/jsonmap"
	"kubeplay/server"
	"kubeplay/web/internal/apitypes"
)

// treeDepth bounds the owner/dependent tree shown.
const treeDepth = 4

// remover says who is expected to remove the finalizers kubeplay knows.
var remover = map[string]string{
	"kubernetes":                   "the namespace controller, once everything in the namespace is gone",
	server.FinalizerForeground:     "the garbage collector, once every dependent with blockOwnerDeletion is deleted",
	server.FinalizerOrphan:         "the garbage collector, once no dependent lists this object among its owners",
	"kubernetes.io/pvc-protection": "the PVC protection controller, once no pod uses the claim",
	"kubernetes.io/pv-protection":  "the PV protection controller, once no claim is bound to the volume",
}

// addedBy names who adds the finalizers the API server itself sets.
var addedBy = map[string]string{
	"kubernetes":               "the API server, when the namespace was created",
	server.FinalizerForeground: "the API server, for a DELETE with propagationPolicy Foreground",
	server.FinalizerOrphan:     "the API server, for a DELETE with propagationPolicy Orphan",
}

// deletion gathers the deletion view of the object ns/name of type t; obj
// is nil when the object is gone.
func (h *Handler) deletion(ctx context.Context, t apitypes.Type, ns, name string, obj map[string]any) *DeletionProps {
	d := &DeletionProps{}
	var timeline []server.DeletionEvent
	if h.deletions != nil {
		timeline = h.deletions.TimelineOf(t.GVR.GroupResource(), ns, name)
	}
	for _, ev := range timeline {
		d.Timeline = append(d.Timeline, eventProps(ev))
	}
	if obj == nil {
		return d
	}
	md, _ := obj["metadata"].(map[string]any)
	d.DeletionTimestamp, _ = md["deletionTimestamp"].(string)
	if g, ok := md["deletionGracePeriodSeconds"]; ok {
		d.GracePeriod = fmt.Sprint(g) + "s"
	}
	ms := managers(obj)
	for _, f := range jsonmap.Strings(md, "finalizers") {
		d.Finalizers = append(d.Finalizers, finalizerProps(ms, f, "metadata.finalizers",
			fieldpath.MakePathOrDie("metadata", "finalizers", value.NewValueInterface(f))))
	}
	isNamespace := t.GVR.Group == "" && t.GVR.Resource == "namespaces"
	if isNamespace {
		spec, _ := obj["spec"].(map[string]any)
		for _, f := range jsonmap.Strings(spec, "finalizers") {
			d.Finalizers = append(d.Finalizers, finalizerProps(ms, f, "spec.finalizers", nil))
		}
		st, _ := obj["status"].(map[string]any)
		d.Phase, _ = st["phase"].(string)
		for _, c := range jsonmap.List(st, "conditions") {
			c, _ := c.(map[string]any)
			s := func(k string) string { v, _ := c[k].(string); return v }
			d.Conditions = append(d.Conditions, ConditionProps{Type: s("type"), Status: s("status"), Reason: s("reason"), Message: s("message")})
		}
	}

	idx := h.index(ctx, t, ns, name, isNamespace)
	d.ScanErrors = idx.errs
	if isNamespace {
		d.Contents = idx.contents()
		return d
	}
	uid, _ := md["uid"].(string)
	root := node(t, obj)
	root.Children = idx.dependents(uid, treeDepth)
	for _, ev := range timeline {
		// Dependents the garbage collector already deleted or orphaned.
		if ev.Dependent == nil || slices.ContainsFunc(root.Children, func(n NodeProps) bool { return n.UID == ev.Dependent.UID }) {
			continue
		}
		state := "deleted"
		if ev.Phase == server.PhaseDependentOrphaned {
			state = "orphaned"
		}
		root.Children = append(root.Children, NodeProps{Kind: ev.Dependent.Resource.String(), Namespace: ev.Dependent.Namespace,
			Name: ev.Dependent.Name, UID: ev.Dependent.UID, State: state})
	}
	d.Tree = &root
	return d
}

func finalizerProps(ms []manager, f, where string, path fieldpath.Path) FinalizerProps {
	fp := FinalizerProps{Name: f, Where: where, RemovedBy: remover[f]}
	if fp.RemovedBy == "" {
		fp.RemovedBy = "whoever added it: no controller kubeplay runs knows this finalizer"
	}
	if path != nil {
		fp.AddedBy = strings.Join(ownersOf(ms, path), ", ")
	}
	if fp.AddedBy == "" {
		fp.AddedBy = addedBy[f]
	}
	return fp
}

func eventProps(ev server.DeletionEvent) EventProps {
	e := EventProps{Time: ev.Time.UTC().Format(time.RFC3339Nano), Phase: string(ev.Phase), Actor: ev.Actor, Message: ev.Message}
	var detail []string
	if ev.Finalizer != "" {
		detail = append(detail, "removed "+ev.Finalizer)
	}
	if ev.Options != nil && ev.Options.PropagationPolicy != nil {
		detail = append(detail, "propagationPolicy "+string(*ev.Options.PropagationPolicy))
	}
	if ev.Options != nil && ev.Options.GracePeriodSeconds != nil {
		detail = append(detail, fmt.Sprintf("gracePeriodSeconds %d", *ev.Options.GracePeriodSeconds))
	}
	if ev.Phase == server.PhaseMarked && len(ev.Finalizers) > 0 {
		detail = append(detail, "waiting for "+strings.Join(ev.Finalizers, ", "))
	}
	if ev.Dependent != nil {
		detail = append(detail, ev.Dependent.Resource.String()+" "+ev.Dependent.Name)
	}
	e.Detail = strings.Join(detail, "; ")
	return e
}

// objectIndex is the objects the dependents tree or a namespace's contents
// are drawn from: every listable type, listed once.
type objectIndex struct {
	byOwner map[string][]NodeProps // owner uid → dependents
	byType  []ContentProps
	errs    []string
}

// index lists the objects that can depend on the object: those of its
// namespace (every namespaced type) for a namespaced object or a namespace,
// those of every type for a cluster-scoped one.
func (h *Handler) index(ctx context.Context, t apitypes.Type, ns, name string, isNamespace bool) *objectIndex {
	idx := &objectIndex{byOwner: map[string][]NodeProps{}}
	scanNS := ns
	if isNamespace {
		scanNS = name
	}
	groups, errs := apitypes.Discover(ctx, h.api)
	for _, err := range errs {
		idx.errs = append(idx.errs, err.Error())
	}
	for _, g := range groups {
		for _, ty := range g.Types {
			if (t.Namespaced || isNamespace) && !ty.Namespaced || ty.GVR.Resource == "events" {
				continue
			}
			var list struct {
				Items []map[string]any `json:"items"`
			}
			if err := h.api.Get(ctx, apitypes.ListPath(ty, scanNS), &list); err != nil {
				idx.errs = append(idx.errs, err.Error())
				continue
			}
			c := ContentProps{Resource: ty.GVR.GroupResource().String()}
			for _, item := range list.Items {
				n := node(ty, item)
				c.Objects = append(c.Objects, n)
				md, _ := item["metadata"].(map[string]any)
				for _, ref := range jsonmap.List(md, "ownerReferences") {
					ref, _ := ref.(map[string]any)
					if uid, _ := ref["uid"].(string); uid != "" {
						idx.byOwner[uid] = append(idx.byOwner[uid], n)
					}
				}
			}
			if len(c.Objects) > 0 {
				idx.byType = append(idx.byType, c)
			}
		}
	}
	return idx
}

func (idx *objectIndex) dependents(uid string, depth int) []NodeProps {
	if depth == 0 {
		return nil
	}
	var out []NodeProps
	for _, n := range idx.byOwner[uid] {
		n.Children = idx.dependents(n.UID, depth-1)
		out = append(out, n)
	}
	return out
}

func (idx *objectIndex) contents() []ContentProps { return idx.byType }

// node is one object of the tree with its state.
func node(t apitypes.Type, obj map[string]any) NodeProps {
	md, _ := obj["metadata"].(map[string]any)
	s := func(k string) string { v, _ := md[k].(string); return v }
	n := NodeProps{Kind: t.Kind, Namespace: s("namespace"), Name: s("name"), UID: s("uid"), State: "present",
		Href: URL(apitypes.FormatRef(t.GVR), s("namespace"), s("name"), TabDeletion)}
	if s("deletionTimestamp") != "" {
		n.State = "terminating"
		if f := jsonmap.Strings(md, "finalizers"); len(f) > 0 {
			n.State += ", waiting for " + strings.Join(f, ", ")
		}
	}
	return n
}
