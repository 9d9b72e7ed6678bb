package object

import (
	"context"
	"maps"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"kubeplay/server"
	"kubeplay/web/internal/linediff"
	"kubeplay/web/internal/yamlview"
)

// Historian is where an object's history comes from: the versions of it
// the sandbox's store keeps (see server.Server.History).
type Historian interface {
	History(ctx context.Context, gvr schema.GroupVersionResource, ns, name string) ([]server.Revision, int64, error)
}

// Writer is the request that wrote a revision, as the request log has it.
type Writer struct {
	Time, User, UserAgent, Method, Path string
}

// Writers returns, by revision, the requests the request log still holds
// that wrote them.
type Writers func() map[int64]Writer

// WithHistory gives the page its History tab: versions from h, and who
// wrote each from w (nil: not known).
func (h *Handler) WithHistory(hist Historian, w Writers) *Handler {
	h.history, h.writers = hist, w
	return h
}

// HistoryProps is an object's history, newest version first.
type HistoryProps struct {
	// Horizon is the compaction horizon: older versions are gone.
	Horizon   int64
	Revisions []RevisionProps
	Error     string
}

// RevisionProps is one version of the object and how it differs from the
// one before.
type RevisionProps struct {
	Revision int64
	// Change: "created", "updated" or "deleted"; "as of the horizon" for
	// the first kept version whose writing was compacted away.
	Change string
	Writer *Writer
	// Diff is the version's YAML against the previous one's (all added for
	// the first), without the fields every write changes.
	Diff []DiffLine
	// ClusterHref is the explorer listing the object's type as of this
	// revision.
	ClusterHref string
}

// DiffLine is one line of a diff: Op is ' ', '+' or '-'.
type DiffLine struct {
	Op   string
	Text string
}

func (h *Handler) historyProps(ctx context.Context, gvr schema.GroupVersionResource, ref, ns, name string) *HistoryProps {
	revs, horizon, err := h.history.History(ctx, gvr, ns, name)
	if err != nil {
		return &HistoryProps{Error: err.Error()}
	}
	var writers map[int64]Writer
	if h.writers != nil {
		writers = h.writers()
	}
	hp := &HistoryProps{Horizon: horizon}
	var prev []string
	for i, r := range revs {
		rp := RevisionProps{Revision: r.Revision, ClusterHref: clusterAt(ref, ns, r.Revision)}
		if w, ok := writers[r.Revision]; ok {
			rp.Writer = &w
		}
		var lines []string
		switch {
		case r.Object == nil:
			rp.Change = "deleted"
		case i == 0 && horizon > 0 && r.Revision <= horizon:
			rp.Change = "as of the horizon"
			lines = yamlText(r.Object)
		case i == 0 || prev == nil:
			rp.Change = "created"
			lines = yamlText(r.Object)
		default:
			rp.Change = "updated"
			lines = yamlText(r.Object)
		}
		rp.Diff = withContext(prev, lines, diffContext)
		prev = lines
		hp.Revisions = append(hp.Revisions, rp)
	}
	for i, j := 0, len(hp.Revisions)-1; i < j; i, j = i+1, j-1 {
		hp.Revisions[i], hp.Revisions[j] = hp.Revisions[j], hp.Revisions[i]
	}
	return hp
}

// clusterAt is the explorer's list of the type ref in ns as of revision rev.
func clusterAt(ref, ns string, rev int64) string {
	u := "/?r=" + urlQuery(ref) + "&rv=" + strconv.FormatInt(rev, 10)
	if ns != "" {
		u += "&ns=" + urlQuery(ns)
	}
	return u
}

// yamlText prints obj as the YAML tab does, without what every write
// changes (resourceVersion, managedFields), so a diff shows what the write
// did.
func yamlText(obj map[string]any) []string {
	if md, ok := obj["metadata"].(map[string]any); ok {
		md = maps.Clone(md)
		delete(md, "resourceVersion")
		delete(md, "managedFields")
		obj = maps.Clone(obj)
		obj["metadata"] = md
	}
	var out []string
	for _, l := range yamlview.Lines(obj, yamlview.ByIndex) {
		var b strings.Builder
		for _, t := range l.Tokens {
			b.WriteString(t.Text)
		}
		out = append(out, b.String())
	}
	return out
}

// diffContext is how many unchanged lines a diff shows around a change.
const diffContext = 2

// withContext is the diff of a and b with the changed lines and n
// unchanged ones around each change; each run of unchanged lines left out
// becomes one line saying how many (Op "…").
func withContext(a, b []string, n int) []DiffLine {
	d := linediff.Diff(a, b)
	keep := linediff.Near(d, n)
	var out []DiffLine
	skipped := 0
	flush := func() {
		if skipped > 0 {
			out = append(out, DiffLine{"…", strconv.Itoa(skipped) + " unchanged lines"})
			skipped = 0
		}
	}
	for i, l := range d {
		if !keep[i] {
			skipped++
			continue
		}
		flush()
		out = append(out, DiffLine{string(l.Op), l.Text})
	}
	flush()
	return out
}
