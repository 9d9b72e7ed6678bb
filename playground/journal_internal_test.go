package playground

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"kubeplay/server"
)

func TestDeletionJournal_Bounded(t *testing.T) {
	j := newDeletionJournal()
	gr := schema.GroupResource{Resource: "configmaps"}
	for i := range maxJournalObjects + 1 {
		j.record(server.DeletionEvent{Phase: server.PhaseRemoved, Object: server.ObjectRef{Resource: gr, Namespace: "ns", Name: fmt.Sprint("o", i), UID: fmt.Sprint("uid-", i)}})
	}
	if tl := j.Timeline("uid-0"); tl != nil {
		t.Errorf("oldest timeline kept: %v", tl)
	}
	if tl := j.TimelineOf(gr, "ns", "o0"); tl != nil {
		t.Errorf("oldest timeline still found by name: %v", tl)
	}
	if len(j.byUID) != maxJournalObjects || len(j.latest) != maxJournalObjects {
		t.Errorf("%d timelines, %d names; want %d", len(j.byUID), len(j.latest), maxJournalObjects)
	}
	if tl := j.Timeline("uid-1"); len(tl) != 1 {
		t.Errorf("second-oldest timeline: %v", tl)
	}
}

// Two writers racing on a namespace in foreground deletion: the garbage
// collector's removal of foregroundDeletion (revision 11) is reported after
// the namespace controller's /finalize (12) and the removal (13).
func TestDeletionJournal_WriteOrder(t *testing.T) {
	j := newDeletionJournal()
	ns := server.ObjectRef{Resource: schema.GroupResource{Resource: "namespaces"}, Name: "fg", UID: "uid"}
	for _, ev := range []server.DeletionEvent{
		{Phase: server.PhaseDeleteRequested},
		{Phase: server.PhaseMarked, Revision: 10},
		{Phase: server.PhaseFinalizerRemoved, Finalizer: "kubernetes", Revision: 12},
		{Phase: server.PhaseRemoved, Revision: 13},
		{Phase: server.PhaseFinalizerRemoved, Finalizer: "foregroundDeletion", Revision: 11},
	} {
		ev.Object = ns
		j.record(ev)
	}
	var got []string
	for _, ev := range j.Timeline("uid") {
		got = append(got, string(ev.Phase)+ev.Finalizer)
	}
	want := "[DeleteRequested DeletionTimestampSet FinalizerRemovedforegroundDeletion FinalizerRemovedkubernetes Removed]"
	if fmt.Sprint(got) != want {
		t.Errorf("timeline %v, want %v", got, want)
	}
}
