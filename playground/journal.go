package playground

import (
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"kubeplay/server"
)

// DeletionJournal keeps, for every object, the timeline of its deletion:
// the API server reports requests, deletionTimestamps, finalizer removals
// and removals; the garbage collector reports the dependents it deleted or
// orphaned. It is safe for concurrent use.
type DeletionJournal struct {
	mu    sync.Mutex
	byUID map[string][]server.DeletionEvent
	// order lists the objects by first event, so that the oldest timelines
	// go first once the journal holds maxJournalObjects.
	order []string
	// latest maps an object's name to the uid of its latest incarnation
	// seen, so the timeline of "the configmap a" can be found by name.
	latest map[objectName]string
}

type objectName struct {
	gr       schema.GroupResource
	ns, name string
}

// maxJournalObjects bounds the journal's memory in a long-lived sandbox.
const maxJournalObjects = 20000

func newDeletionJournal() *DeletionJournal {
	return &DeletionJournal{byUID: map[string][]server.DeletionEvent{}, latest: map[objectName]string{}}
}

// record adds ev to the timeline of its object (by uid; by name when the
// uid is unknown, as for a corrupt object).
func (j *DeletionJournal) record(ev server.DeletionEvent) {
	j.mu.Lock()
	defer j.mu.Unlock()
	key := ev.Object.UID
	name := objectName{ev.Object.Resource, ev.Object.Namespace, ev.Object.Name}
	if key == "" {
		key = "name:" + name.gr.String() + "/" + name.ns + "/" + name.name
	}
	if tl := j.byUID[key]; ev.Phase == server.PhaseDeleteRequested && slices.ContainsFunc(tl, func(e server.DeletionEvent) bool { return e.Phase == server.PhaseRemoved }) {
		// A request that read the object just before it went, and lost
		// the race (its write fails): the object is no longer there to ask.
		return
	}
	if ev.Object.Name != "" {
		j.latest[name] = key
	}
	if _, ok := j.byUID[key]; !ok {
		j.order = append(j.order, key)
		if len(j.order) > maxJournalObjects {
			j.evict(j.order[0])
			j.order = j.order[1:]
		}
	}
	j.byUID[key] = insertByRevision(j.byUID[key], ev)
}

// insertByRevision adds ev to tl after the events of writes later than
// its own: racing writers (the namespace controller's /finalize, the
// garbage collector's removal of foregroundDeletion) report their writes
// in whatever order their requests return.
func insertByRevision(tl []server.DeletionEvent, ev server.DeletionEvent) []server.DeletionEvent {
	i := len(tl)
	if ev.Revision > 0 {
		for i > 0 && tl[i-1].Revision > ev.Revision {
			i--
		}
	}
	return slices.Insert(tl, i, ev)
}

func (j *DeletionJournal) evict(key string) {
	if tl := j.byUID[key]; len(tl) > 0 {
		o := tl[0].Object
		if name := (objectName{o.Resource, o.Namespace, o.Name}); j.latest[name] == key {
			delete(j.latest, name)
		}
	}
	delete(j.byUID, key)
}

// Timeline returns the deletion events of the object with uid, oldest
// first (nil if none).
func (j *DeletionJournal) Timeline(uid string) []server.DeletionEvent {
	j.mu.Lock()
	defer j.mu.Unlock()
	return slices.Clone(j.byUID[uid])
}

// removedAt returns the revision at which the object with uid was removed
// from the store, 0 if its timeline does not say.
func (j *DeletionJournal) removedAt(uid string) int64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, e := range j.byUID[uid] {
		if e.Phase == server.PhaseRemoved {
			return e.Revision
		}
	}
	return 0
}

// TimelineOf returns the deletion events of the latest object named
// ns/name of resource gr (ns is "" for cluster-scoped objects).
func (j *DeletionJournal) TimelineOf(gr schema.GroupResource, ns, name string) []server.DeletionEvent {
	j.mu.Lock()
	defer j.mu.Unlock()
	return slices.Clone(j.byUID[j.latest[objectName{gr, ns, name}]])
}

// Recent returns the objects of the limit most recent timelines (by first
// event), newest first, each as its first event names it.
func (j *DeletionJournal) Recent(limit int) []server.ObjectRef {
	j.mu.Lock()
	defer j.mu.Unlock()
	var out []server.ObjectRef
	for i := len(j.order) - 1; i >= 0 && len(out) < limit; i-- {
		if tl := j.byUID[j.order[i]]; len(tl) > 0 {
			out = append(out, tl[0].Object)
		}
	}
	return out
}

// Deleting returns, newest first and at most limit, the objects whose
// deletion has begun (they have a deletionTimestamp) and which are still
// there: each as the last event that said what it waits for (its
// finalizers; none when it waits for its grace period).
func (j *DeletionJournal) Deleting(limit int) []server.DeletionEvent {
	j.mu.Lock()
	defer j.mu.Unlock()
	var out []server.DeletionEvent
	for i := len(j.order) - 1; i >= 0 && len(out) < limit; i-- {
		key := j.order[i]
		tl := j.byUID[key]
		if len(tl) == 0 {
			continue
		}
		o := tl[0].Object
		if j.latest[objectName{o.Resource, o.Namespace, o.Name}] != key {
			continue // a later object of the same name
		}
		if slices.ContainsFunc(tl, func(e server.DeletionEvent) bool { return e.Phase == server.PhaseRemoved }) {
			continue
		}
		for k := len(tl) - 1; k >= 0; k-- {
			if tl[k].Phase == server.PhaseMarked || tl[k].Phase == server.PhaseFinalizerRemoved {
				out = append(out, tl[k])
				break
			}
		}
	}
	return out
}
