package explorer

import (
	"bytes"
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"kubeplay/cli"
	"kubeplay/server"
	"kubeplay/web/internal/apitypes"
	"kubeplay/web/internal/origin"
	"kubeplay/web/layout"
	"kubeplay/web/object"
)

// ConsolePath is where the start page's console form runs a command.
const ConsolePath = "/ui/console"

// Link is a labelled URL.
type Link struct{ Label, Href string }

// StartProps is what the start page shows beside the catalog when no type
// is selected: a console, commands to try, lessons, and the cluster at a
// glance.
type StartProps struct {
	// Console is the command just run ("" for none) and what it printed.
	Console, Output string
	Failed          bool
	Suggestions     []string
	Lessons         []Link
	Overview        []OverviewProps
}

// OverviewProps is one line of the cluster at a glance.
type OverviewProps struct {
	What, Summary, Href string
}

// suggestions are commands a newcomer can try first, in the order a
// tutorial would take them.
var suggestions = []string{
	"create deployment web --image=nginx --replicas=2",
	"get pods -o wide",
	"describe deployment web",
	"get events",
	"scale deployment web --replicas=3",
	"delete deployment web",
	"api-resources",
}

// consoleTimeout bounds a command run from the page (a watch runs until
// it).
const consoleTimeout = 10 * time.Second

// WithStart gives the start page a console running commands with c, and
// links to lessons.
func (h *Handler) WithStart(c *cli.Console, lessons []Link) *Handler {
	h.console, h.lessons = c, lessons
	return h
}

// Deletions are the objects whose deletion has begun and not ended.
type Deletions interface {
	// Deleting returns them newest first, at most limit, each as the
	// event that says what it waits for.
	Deleting(limit int) []server.DeletionEvent
}

// WithDeletions lists on the start page the objects being deleted, of
// every type, and what each waits for.
func (h *Handler) WithDeletions(d Deletions) *Handler {
	h.deletions = d
	return h
}

// maxDeleting bounds the objects being deleted the overview names.
const maxDeleting = 5

// Console runs the command the start page's form posts and shows the
// start page with its output.
func (h *Handler) Console(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		http.Error(w, "POST a command", http.StatusMethodNotAllowed)
		return
	}
	if !origin.ParseForm(w, r) {
		return
	}
	p, code := h.props(r.Context(), "", "", "")
	if p.Start != nil && h.console != nil {
		command := r.PostForm.Get("command")
		ctx, cancel := context.WithTimeout(r.Context(), consoleTimeout)
		defer cancel()
		var out bytes.Buffer
		err := h.console.Run(ctx, command, r.PostForm.Get("file"), &out)
		p.Start.Console, p.Start.Output, p.Start.Failed = command, out.String(), err != nil
		// What the command did shows in the overview and events at once.
		p2, _ := h.props(r.Context(), "", "", "")
		p.Start.Overview, p.RecentEvents = p2.Start.Overview, p2.RecentEvents
	}
	layout.Write(w, r, code, Page(p))
}

// start gathers the start panel.
func (h *Handler) start(ctx context.Context) *StartProps {
	sp := &StartProps{Lessons: h.lessons}
	if h.console != nil {
		sp.Suggestions = suggestions
	}
	sp.Overview = h.overview(ctx)
	return sp
}

// overview counts what runs in the cluster: nodes and their readiness,
// Deployments and their availability, pods by phase, what is being
// deleted.
func (h *Handler) overview(ctx context.Context) []OverviewProps {
	type item struct {
		Metadata struct {
			Name              string  `json:"name"`
			DeletionTimestamp *string `json:"deletionTimestamp"`
		} `json:"metadata"`
		Spec struct {
			Replicas *int64 `json:"replicas"`
		} `json:"spec"`
		Status struct {
			Phase             string `json:"phase"`
			AvailableReplicas int64  `json:"availableReplicas"`
			Conditions        []struct {
				Type, Status string
			} `json:"conditions"`
			ContainerStatuses []struct {
				State struct {
					Waiting *struct {
						Reason string `json:"reason"`
					} `json:"waiting"`
				} `json:"state"`
			} `json:"containerStatuses"`
		} `json:"status"`
	}
	list := func(path string) ([]item, bool, bool) {
		var l struct {
			Metadata struct {
				Continue string `json:"continue"`
			} `json:"metadata"`
			Items []item `json:"items"`
		}
		if err := h.api.Get(ctx, path+"?limit="+strconv.Itoa(listLimit), &l); err != nil {
			return nil, false, false
		}
		return l.Items, l.Metadata.Continue != "", true
	}
	count := func(n int, more bool) string {
		if more {
			return strconv.Itoa(n) + "+"
		}
		return strconv.Itoa(n)
	}
	var out []OverviewProps
	if nodes, more, ok := list("/api/v1/nodes"); ok {
		ready := 0
		for _, n := range nodes {
			for _, c := range n.Status.Conditions {
				if c.Type == "Ready" && c.Status == "True" {
					ready++
				}
			}
		}
		out = append(out, OverviewProps{What: "Nodes", Summary: count(len(nodes), more) + ", " + strconv.Itoa(ready) + " ready", Href: "/?r=v1/nodes"})
	}
	if ds, more, ok := list("/apis/apps/v1/deployments"); ok {
		available := 0
		for _, d := range ds {
			want := int64(1)
			if d.Spec.Replicas != nil {
				want = *d.Spec.Replicas
			}
			if d.Status.AvailableReplicas >= want {
				available++
			}
		}
		out = append(out, OverviewProps{What: "Deployments", Summary: count(len(ds), more) + ", " + strconv.Itoa(available) + " fully available", Href: "/?r=apps/v1/deployments"})
	}
	if pods, more, ok := list("/api/v1/pods"); ok {
		phases := map[string]int{}
		terminating, crashLooping := 0, 0
		for _, p := range pods {
			phases[p.Status.Phase]++
			if p.Metadata.DeletionTimestamp != nil {
				terminating++
			}
			for _, c := range p.Status.ContainerStatuses {
				if w := c.State.Waiting; w != nil && w.Reason == "CrashLoopBackOff" {
					crashLooping++
					break
				}
			}
		}
		s := count(len(pods), more)
		for _, ph := range []string{"Running", "Pending", "Succeeded", "Failed"} {
			if phases[ph] > 0 {
				s += ", " + strconv.Itoa(phases[ph]) + " " + ph
			}
		}
		if crashLooping > 0 {
			s += ", " + strconv.Itoa(crashLooping) + " in CrashLoopBackOff"
		}
		if terminating > 0 {
			s += ", " + strconv.Itoa(terminating) + " terminating"
		}
		out = append(out, OverviewProps{What: "Pods", Summary: s, Href: "/?r=v1/pods"})
	}
	if nss, more, ok := list("/api/v1/namespaces"); ok {
		s := count(len(nss), more)
		for _, ns := range nss {
			if ns.Metadata.DeletionTimestamp != nil {
				s += ", " + ns.Metadata.Name + " terminating"
			}
		}
		out = append(out, OverviewProps{What: "Namespaces", Summary: s, Href: "/?r=v1/namespaces"})
	}
	return append(out, h.beingDeleted(ctx)...)
}

// beingDeleted is a line for each object whose deletion waits on its
// finalizers or grace period, linking to its deletion timeline.
func (h *Handler) beingDeleted(ctx context.Context) []OverviewProps {
	if h.deletions == nil {
		return nil
	}
	evs := h.deletions.Deleting(maxDeleting)
	if len(evs) == 0 {
		return nil
	}
	groups, _ := apitypes.Discover(ctx, h.api)
	var out []OverviewProps
	for _, ev := range evs {
		o := ev.Object
		what, ref := o.Resource.String(), ""
		for _, g := range groups {
			if g.Name == o.Resource.Group {
				for _, t := range g.Types {
					if t.GVR.Resource == o.Resource.Resource {
						what, ref = t.Kind, apitypes.FormatRef(t.GVR)
					}
				}
			}
		}
		name := o.Name
		if o.Namespace != "" {
			name = o.Namespace + "/" + o.Name
		}
		waits := "waiting for its grace period"
		if len(ev.Finalizers) > 0 {
			waits = "waiting for " + strings.Join(ev.Finalizers, ", ")
		}
		p := OverviewProps{What: "Being deleted", Summary: what + " " + name + ", " + waits}
		if ref != "" {
			p.Href = object.URL(ref, o.Namespace, o.Name, object.TabDeletion)
		}
		out = append(out, p)
	}
	return out
}
