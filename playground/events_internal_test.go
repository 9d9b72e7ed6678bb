package playground

import (
	"testing"
	"time"

	"kubeplay/server/inproc"
	"kubeplay/store"
)

// Two components recording events about one object at one instant of a
// coarse clock (the browser's counts milliseconds) must both be kept.
func TestEvents_sameInstant(t *testing.T) {
	st, err := store.Open(t.Context(), ":memory:", store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sb, err := Open(t.Context(), Options{Store: st, Controllers: Controllers{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	now := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	c := inproc.New(sb.handler, "test")
	ref := objectRef{APIVersion: "v1", Kind: "Pod", Namespace: "default", Name: "web", UID: "u1"}
	kubelet := newEventRecorder(c, "kubelet", "node-1", clock)
	kubelet.event(t.Context(), ref, "Normal", "Pulling", `Pulling image "nginx"`)
	kubelet.event(t.Context(), ref, "Normal", "Pulled", `Successfully pulled image "nginx"`)
	schedulerEvent(t.Context(), c, now, "default-scheduler", "scheduler-1", ref, "Normal", "Scheduled", "Binding", "Successfully assigned default/web to node-1")

	events, err := listAs[struct {
		Metadata struct{ Name string }
		Reason   string
	}](t.Context(), c, "/api/v1/namespaces/default/events")
	if err != nil {
		t.Fatal(err)
	}
	reasons := map[string]string{}
	for _, ev := range events {
		reasons[ev.Reason] = ev.Metadata.Name
	}
	for _, want := range []string{"Pulling", "Pulled", "Scheduled"} {
		if reasons[want] == "" {
			t.Errorf("no %s event in %v", want, reasons)
		}
	}
	if name := reasons["Pulling"]; name != "web.18ed6779fb914000" {
		t.Errorf("the first event's name %q, want the object's name and the time in hex nanoseconds", name)
	}
}
