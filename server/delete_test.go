package server_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// watchEvents starts a watch on path and returns a function that reads the
// next event as "TYPE name deletionTimestamp-set finalizers".
func watchEvents(t *testing.T, base, path string) func() string {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), "GET", base+path, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	sc := bufio.NewScanner(resp.Body)
	return func() string {
		t.Helper()
		if !sc.Scan() {
			t.Fatalf("watch ended: %v", sc.Err())
		}
		var ev struct {
			Type   string `json:"type"`
			Object struct {
				Metadata struct {
					Name              string   `json:"name"`
					DeletionTimestamp string   `json:"deletionTimestamp"`
					Finalizers        []string `json:"finalizers"`
				} `json:"metadata"`
			} `json:"object"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatal(err)
		}
		md := ev.Object.Metadata
		return fmt.Sprintf("%s %s %t %v", ev.Type, md.Name, md.DeletionTimestamp != "", md.Finalizers)
	}
}

func send(t *testing.T, base, method, path, body string) int {
	t.Helper()
	req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp := mustDo(t, req)
	resp.Body.Close()
	return resp.StatusCode
}

// Two-phase deletion as watchers see it: DELETE of an object with a
// finalizer is a MODIFIED event (deletionTimestamp set); removing the last
// finalizer is the DELETED event, which carries the object as it was last
// stored (finalizer included), as kube-apiserver's does. A pod deleted at once is first MODIFIED
// (deletionTimestamp), then DELETED, as with kube-apiserver.
func TestDelete_WatchEvents(t *testing.T) {
	h := newTestServer(t)
	createDefaultServiceAccount(t, h, "default")
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close) // after the watches' bodies are closed
	next := watchEvents(t, srv.URL, "/api/v1/namespaces/default/configmaps?watch=1")
	send(t, srv.URL, "POST", "/api/v1/namespaces/default/configmaps", `{"metadata":{"name":"held","finalizers":["example.com/a"]}}`)
	if got := next(); got != "ADDED held false [example.com/a]" {
		t.Fatalf("create: %s", got)
	}
	if code := send(t, srv.URL, "DELETE", "/api/v1/namespaces/default/configmaps/held", ""); code != 200 {
		t.Fatalf("delete: %d", code)
	}
	if got := next(); got != "MODIFIED held true [example.com/a]" {
		t.Fatalf("delete: %s", got)
	}
	send(t, srv.URL, "PUT", "/api/v1/namespaces/default/configmaps/held", `{"metadata":{"name":"held"}}`)
	if got := next(); got != "DELETED held true [example.com/a]" {
		t.Fatalf("last finalizer removed: %s", got)
	}

	pods := watchEvents(t, srv.URL, "/api/v1/namespaces/default/pods?watch=1")
	send(t, srv.URL, "POST", "/api/v1/namespaces/default/pods", `{"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"nginx"}]}}`)
	send(t, srv.URL, "DELETE", "/api/v1/namespaces/default/pods/p", "")
	for _, want := range []string{"ADDED p false []", "MODIFIED p true []", "DELETED p true []"} {
		if got := pods(); got != want {
			t.Fatalf("unbound pod: %s, want %s", got, want)
		}
	}
}

// TestDelete_namespacePreconditions checks the namespace registry's own
// wording of a failed resourceVersion precondition, as kube-apiserver v1.35
// answered it (the uid's is in scenario admission-order).
func TestDelete_namespacePreconditions(t *testing.T) {
	h := newTestServer(t)
	callAPI(t, h, "POST", "/api/v1/namespaces", `{"metadata":{"name":"lim"}}`)
	_, body := callAPI(t, h, "GET", "/api/v1/namespaces/lim", "")
	var ns struct {
		Metadata struct{ ResourceVersion string } `json:"metadata"`
	}
	if err := json.Unmarshal([]byte(body), &ns); err != nil {
		t.Fatal(err)
	}
	code, body := callAPI(t, h, "DELETE", "/api/v1/namespaces/lim", `{"preconditions":{"resourceVersion":"1"}}`)
	want := `Operation cannot be fulfilled on namespaces \"lim\": Precondition failed: ResourceVersion in precondition: 1, ResourceVersion in object meta: ` + ns.Metadata.ResourceVersion + `"`
	if code != http.StatusConflict || !strings.Contains(body, want) {
		t.Errorf("%d %s, want 409 with %s", code, body, want)
	}
}
