package playground

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"kubeplay/server/inproc"
	"kubeplay/store"
)

// gcSandbox is a sandbox without the pod garbage collector and kubelets,
// and a podGC over its API driven by the test, on a clock the test moves.
func gcSandbox(t *testing.T, threshold int) (*Sandbox, *podGC, *time.Time) {
	t.Helper()
	st, err := store.Open(t.Context(), ":memory:", store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sb, err := Open(t.Context(), Options{Store: st, Controllers: Controllers{}.Without("podGC", "kubelet", "job", "kubeadm")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	// Pods need the namespace's default ServiceAccount.
	for {
		rec := httptest.NewRecorder()
		sb.handler.ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/namespaces/default/serviceaccounts/default", nil))
		if rec.Code == 200 {
			break
		}
		if t.Context().Err() != nil {
			t.Fatal("no default ServiceAccount")
		}
		time.Sleep(10 * time.Millisecond)
	}
	now := time.Now()
	gc := &podGC{c: inproc.New(sb.handler, "test"), now: func() time.Time { return now }, threshold: threshold, missingSince: map[string]time.Time{}}
	return sb, gc, &now
}

func mustRequest(t *testing.T, sb *Sandbox, want int, method, path, body string) {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if method == "PATCH" {
		req.Header.Set("Content-Type", "application/merge-patch+json")
	}
	rec := httptest.NewRecorder()
	sb.handler.ServeHTTP(rec, req)
	if rec.Code != want {
		t.Fatalf("%s %s: %d, want %d: %s", method, path, rec.Code, want, rec.Body)
	}
}

func podNames(t *testing.T, gc *podGC) []string {
	t.Helper()
	pods, err := listAs[struct {
		Metadata struct{ Name string } `json:"metadata"`
	}](t.Context(), gc.c, "/api/v1/namespaces/default/pods")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range pods {
		names = append(names, p.Metadata.Name)
	}
	return names
}

func TestPodGC_terminatedAboveThreshold(t *testing.T) {
	sb, gc, _ := gcSandbox(t, 2)
	for _, name := range []string{"a", "b", "c", "d"} {
		mustRequest(t, sb, 201, "POST", "/api/v1/namespaces/default/pods", `{"metadata":{"name":"`+name+`"},"spec":{"containers":[{"name":"c","image":"busybox"}]}}`)
	}
	for _, name := range []string{"a", "b", "c"} {
		mustRequest(t, sb, 200, "PATCH", "/api/v1/namespaces/default/pods/"+name+"/status", `{"status":{"phase":"Succeeded"}}`)
	}
	keys, err := gc.resync(t.Context(), 0)
	if err != nil || strings.Join(keys, ",") != terminatedKey {
		t.Fatalf("resync: %v, %v", keys, err)
	}
	if _, err := gc.reconcile(t.Context(), terminatedKey); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(podNames(t, gc), ","); got != "b,c,d" {
		t.Errorf("pods left: %s", got)
	}
}

// The pods of a node that is gone are marked Failed and deleted once it has
// been missing for the quarantine.
func TestPodGC_orphanedPods(t *testing.T) {
	sb, gc, now := gcSandbox(t, 100)
	mustRequest(t, sb, 201, "POST", "/api/v1/namespaces/default/pods", `{"metadata":{"name":"lost","finalizers":["example.com/hold"]},"spec":{"nodeName":"gone","containers":[{"name":"c","image":"busybox"}]}}`)
	keys, err := gc.resync(t.Context(), 0)
	if err != nil || strings.Join(keys, ",") != "node/gone" {
		t.Fatalf("resync: %v, %v", keys, err)
	}
	if after, err := gc.reconcile(t.Context(), "node/gone"); err != nil || after != orphanQuarantine {
		t.Fatalf("first look: %v, %v", after, err)
	}
	*now = now.Add(orphanQuarantine)
	if after, err := gc.reconcile(t.Context(), "node/gone"); err != nil || after != 0 {
		t.Fatalf("after the quarantine: %v, %v", after, err)
	}
	p, err := getTyped[map[string]any](t.Context(), gc.c, "/api/v1/namespaces/default/pods/lost")
	if err != nil || p == nil {
		t.Fatalf("the held pod: %v", err)
	}
	b, _ := json.Marshal((*p)["status"])
	got := string(b)
	if !strings.Contains(got, `"phase":"Failed"`) || !strings.Contains(got, `"message":"PodGC: node no longer exists","observedGeneration":1,"reason":"DeletionByPodGC","status":"True","type":"DisruptionTarget"`) {
		t.Errorf("status %s", got)
	}
	if md := (*p)["metadata"].(map[string]any); md["deletionTimestamp"] == nil || md["deletionGracePeriodSeconds"] != 0.0 {
		t.Errorf("not deleted at once: %v", md)
	}
}
