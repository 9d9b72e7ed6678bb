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
