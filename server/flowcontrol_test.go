package server_test

import (
	"net/http"
	"testing"
	"time"

	"kubeplay/server"
)

// TestFlowSchema_DanglingFollowsLevel creates, deletes and collection-deletes
// the priority level a FlowSchema names: each time the schema's Dangling
// condition changes at once, with the transition's time (kube-apiserver's
// APF configuration consumer does it a moment later: testdata/oracle/
// scenarios/flowschema-dangling.json), and schemas naming other levels are
// not written.
func TestFlowSchema_DanglingFollowsLevel(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	h := newTestServerWith(t, server.Options{Now: func() time.Time { return now }})
	const (
		schemas = "/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas"
		levels  = "/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations"
	)
	type flowSchema struct {
		Metadata struct {
			ResourceVersion string
			ManagedFields   []struct{ Manager, Operation, Subresource string }
		}
		Status struct {
			Conditions []struct{ Type, Status, Reason, Message, LastTransitionTime string }
		}
	}
	check := func(step, status, reason string) {
		t.Helper()
		var fs flowSchema
		getJSON(t, h, schemas+"/dangling", &fs)
		if len(fs.Status.Conditions) != 1 {
			t.Fatalf("%s: conditions %+v", step, fs.Status.Conditions)
		}
		c := fs.Status.Conditions[0]
		if c.Type != "Dangling" || c.Status != status || c.Reason != reason || c.LastTransitionTime != now.Format(time.RFC3339) {
			t.Errorf("%s: condition %+v, want Dangling %s %s at %s", step, c, status, reason, now.Format(time.RFC3339))
		}
		var consumer int
		for _, e := range fs.Metadata.ManagedFields {
			if e.Manager == "api-priority-and-fairness-config-consumer-v1" && e.Operation == "Apply" && e.Subresource == "status" {
				consumer++
			}
		}
		if consumer != 1 {
			t.Errorf("%s: managedFields %+v, want one status Apply of the APF configuration consumer", step, fs.Metadata.ManagedFields)
		}
	}
	write := func(method, path, body string) {
		t.Helper()
		if rec := serve(h, method, path, "application/json", body); rec.Code >= 300 {
			t.Fatalf("%s %s: %d %s", method, path, rec.Code, rec.Body)
		}
	}
	const level = `{"metadata":{"name":"dangling-level","labels":{"test":"dangling"}},"spec":{"type":"Limited","limited":{"nominalConcurrencyShares":5,"limitResponse":{"type":"Reject"}}}}`
	var other flowSchema
	getJSON(t, h, schemas+"/global-default", &other)

	write(http.MethodPost, schemas, `{"metadata":{"name":"dangling"},"spec":{"priorityLevelConfiguration":{"name":"dangling-level"},"matchingPrecedence":5000}}`)
	check("no level", "True", "NotFound")

	now = now.Add(time.Minute)
	write(http.MethodPost, levels, level)
	check("level created", "False", "Found")

	now = now.Add(time.Minute)
	write(http.MethodDelete, levels+"/dangling-level", "")
	check("level deleted", "True", "NotFound")

	now = now.Add(time.Minute)
	write(http.MethodPost, levels, level)
	check("level created again", "False", "Found")

	now = now.Add(time.Minute)
	write(http.MethodDelete, levels+"?labelSelector=test%3Ddangling", "")
	check("levels deleted as a collection", "True", "NotFound")

	var after flowSchema
	getJSON(t, h, schemas+"/global-default", &after)
	if after.Metadata.ResourceVersion != other.Metadata.ResourceVersion {
		t.Errorf("global-default written: resourceVersion %s, was %s", after.Metadata.ResourceVersion, other.Metadata.ResourceVersion)
	}
}
