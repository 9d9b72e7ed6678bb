package playground_test

import (
	"strings"
	"testing"
	"time"
)

// podJSON is a bare pod labelled app=web serving port 8080, named http.
func podJSON(name string) string {
	return `{"metadata":{"name":"` + name + `","labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"nginx","ports":[{"name":"http","containerPort":8080}]}]}}`
}

const serviceJSON = `{"metadata":{"name":"web","labels":{"tier":"front"}},"spec":{"selector":{"app":"web"},"ports":[{"name":"http","port":80,"targetPort":"http"}]}}`

func TestEndpoints_service(t *testing.T) {
	sb := openSandbox(t)
	h := sb.Handler()
	for _, name := range []string{"a", "b"} {
		mustDo(t, h, 201, "POST", "/api/v1/namespaces/default/pods", podJSON(name))
	}
	mustDo(t, h, 201, "POST", "/api/v1/namespaces/default/services", serviceJSON)
	var ep map[string]any
	waitFor(t, "two ready addresses", func() bool {
		code, out := do(t, h, "GET", "/api/v1/namespaces/default/endpoints/web", "")
		ep = out
		return code == 200 && strings.Count(jsonOf(out["subsets"]), `"ip"`) == 2 && !strings.Contains(jsonOf(out["subsets"]), "notReady")
	})
	md := ep["metadata"].(map[string]any)
	if got := jsonOf(md["labels"]); got != `{"endpoints.kubernetes.io/managed-by":"endpoint-controller","tier":"front"}` {
		t.Errorf("labels %s", got)
	}
	// The trigger time is there when the last sync saw a pod's readiness
	// change in a later second than the sync before (upstream's tracker),
	// which depends on timing: when there, it is a time.
	if got, ok := child(ep, "metadata", "annotations")["endpoints.kubernetes.io/last-change-trigger-time"].(string); ok {
		if _, err := time.Parse(time.RFC3339Nano, got); err != nil {
			t.Errorf("trigger time %q: %v", got, err)
		}
	}
	subsets := ep["subsets"].([]any)
	if len(subsets) != 1 || jsonOf(subsets[0].(map[string]any)["ports"]) != `[{"name":"http","port":8080,"protocol":"TCP"}]` {
		t.Errorf("subsets %s", jsonOf(subsets))
	}
	addr := subsets[0].(map[string]any)["addresses"].([]any)[0].(map[string]any)
	if ref := addr["targetRef"].(map[string]any); ref["kind"] != "Pod" || ref["namespace"] != "default" {
		t.Errorf("address %s", jsonOf(addr))
	}
	waitIdle(t, sb)

	// A pod being deleted leaves at once.
	mustDo(t, h, 200, "DELETE", "/api/v1/namespaces/default/pods/a", "")
	waitFor(t, "one address", func() bool {
		_, out := do(t, h, "GET", "/api/v1/namespaces/default/endpoints/web", "")
		return strings.Count(jsonOf(out["subsets"]), `"ip"`) == 1
	})

	mustDo(t, h, 200, "DELETE", "/api/v1/namespaces/default/services/web", "")
	waitFor(t, "the Endpoints to go", gone(t, h, "/api/v1/namespaces/default/endpoints/web"))
	waitIdle(t, sb)
}

// Endpoints nobody's Service selects for are the user's: they stay.
func TestEndpoints_WithoutServiceStay(t *testing.T) {
	sb := openSandbox(t)
	h := sb.Handler()
	mustDo(t, h, 201, "POST", "/api/v1/namespaces/default/endpoints", `{"metadata":{"name":"static","labels":{"test-endpoint-static":"true"}},"subsets":[{"addresses":[{"ip":"10.0.0.24"}],"ports":[{"name":"http","port":80,"protocol":"TCP"}]}]}`)
	waitIdle(t, sb)
	mustDo(t, h, 200, "GET", "/api/v1/namespaces/default/endpoints/static", "")
}
