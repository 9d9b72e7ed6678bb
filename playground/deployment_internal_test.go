package playground

import (
	"slices"
	"testing"
	"time"

	"kubeplay/store"
)

// keyRecorder is a queue that remembers what was added.
type keyRecorder []string

func (r *keyRecorder) Add(key string)                       { *r = append(*r, key) }
func (r *keyRecorder) AddAfter(key string, _ time.Duration) { *r = append(*r, key) }

// A Recreate rollout waits for the old pods to be gone, and the last of them
// may go after the old ReplicaSet last changed: the deletion of a pod of a
// Deployment's ReplicaSet names the Deployment.
func TestDeploymentController_podDeletionNamesTheDeployment(t *testing.T) {
	dc := &deploymentController{keys: newSelectorKeys(appsV1("deployments"), appsV1("replicasets"), "Deployment", labelSelectorOf), replicaSetOwners: map[string]string{}}
	rs := `{"metadata":{"name":"web-5d8f","namespace":"default","ownerReferences":[{"apiVersion":"apps/v1","kind":"Deployment","name":"web","uid":"u1","controller":true}]}}`
	pod := `{"metadata":{"name":"web-5d8f-abcde","namespace":"default","ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web-5d8f","uid":"u2","controller":true}]}}`
	var q keyRecorder
	dc.keysOf(store.Event{Type: store.Created, KV: store.KeyValue{Key: builtinKeyPrefix(appsV1("replicasets")) + "default/web-5d8f", Value: []byte(rs)}}, &q)
	if !slices.Equal(q, []string{"default/web"}) {
		t.Fatalf("a ReplicaSet's creation queued %q", q)
	}
	q = nil
	podKey := builtinKeyPrefix(coreV1("pods")) + "default/web-5d8f-abcde"
	dc.keysOf(store.Event{Type: store.Updated, KV: store.KeyValue{Key: podKey, Value: []byte(pod)}}, &q)
	if len(q) != 0 {
		t.Fatalf("a pod's update queued %q", q)
	}
	dc.keysOf(store.Event{Type: store.Deleted, KV: store.KeyValue{Key: podKey, Value: []byte(pod)}}, &q)
	if !slices.Equal(q, []string{"default/web"}) {
		t.Fatalf("a pod's deletion queued %q, want the Deployment", q)
	}
	q = nil
	dc.keysOf(store.Event{Type: store.Deleted, KV: store.KeyValue{Key: builtinKeyPrefix(appsV1("replicasets")) + "default/web-5d8f", Value: []byte(rs)}}, &q)
	q = nil
	dc.keysOf(store.Event{Type: store.Deleted, KV: store.KeyValue{Key: podKey, Value: []byte(pod)}}, &q)
	if len(q) != 0 {
		t.Fatalf("a pod of a deleted ReplicaSet queued %q", q)
	}
}
