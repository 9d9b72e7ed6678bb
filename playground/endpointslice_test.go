package playground_test

import (
	"strings"
	"testing"
	"time"
)

func TestEndpointSlices_service(t *testing.T) {
	sb := openSandbox(t)
	h := sb.Handler()
	// No pod yet: a placeholder slice.
	svc := mustDo(t, h, 201, "POST", "/api/v1/namespaces/default/services", serviceJSON)
	// The Service's slices (the kubernetes Service's is there too).
	const slices = "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices?labelSelector=kubernetes.io%2Fservice-name%3Dweb"
	var placeholder map[string]any
	waitFor(t, "a placeholder slice", func() bool {
		l := items(t, h, slices)
		if len(l) == 1 {
			placeholder = l[0]
		}
		return len(l) == 1
	})
	md := placeholder["metadata"].(map[string]any)
	if name := md["name"].(string); !strings.HasPrefix(name, "web-") || len(name) != len("web-xxxxx") {
		t.Errorf("slice name %q", name)
	}
	if got := jsonOf(md["labels"]); got != `{"endpointslice.kubernetes.io/managed-by":"endpointslice-controller.k8s.io","kubernetes.io/service-name":"web","tier":"front"}` {
		t.Errorf("labels %s", got)
	}
	wantRef := `[{"apiVersion":"v1","blockOwnerDeletion":true,"controller":true,"kind":"Service","name":"web","uid":"` + uidOf(svc) + `"}]`
	if got := jsonOf(md["ownerReferences"]); got != wantRef {
		t.Errorf("owners %s", got)
	}
	// A new Service's slice was triggered by its creation. (Later syncs
	// note a pod's readiness only when it changed in a later second than
	// the controller last saw, as upstream's tracker does.)
	if ann, _ := md["annotations"].(map[string]any); ann["endpoints.kubernetes.io/last-change-trigger-time"] == nil {
		t.Errorf("no trigger time: %s", jsonOf(md))
	}
	if placeholder["addressType"] != "IPv4" || jsonOf(placeholder["endpoints"]) != "[]" || placeholder["ports"] != nil {
		t.Errorf("placeholder %s", jsonOf(placeholder))
	}
	waitIdle(t, sb)

	// Pod a runs on a node in a zone; pod b on a node in none.
	waitNodes(t, sb, "kubeplay-worker", "kubeplay-worker2")
	mergePatch(t, h, "/api/v1/nodes/kubeplay-worker", `{"metadata":{"labels":{"topology.kubernetes.io/zone":"zone-a"}}}`)
	// (Pod a runs sleep, which ignores SIGTERM: deleted, it stays until
	// its grace period ends.)
	sleeper := strings.Replace(podJSON("a"), `"image":"nginx"`, `"image":"busybox","command":["sleep","infinity"]`, 1)
	mustDo(t, h, 201, "POST", "/api/v1/namespaces/default/pods", strings.Replace(sleeper, `"spec":{`, `"spec":{"nodeName":"kubeplay-worker",`, 1))
	mustDo(t, h, 201, "POST", "/api/v1/namespaces/default/pods", strings.Replace(podJSON("b"), `"spec":{`, `"spec":{"nodeName":"kubeplay-worker2",`, 1))
	var slice map[string]any
	waitFor(t, "two ready endpoints in the placeholder's stead", func() bool {
		l := items(t, h, slices)
		if len(l) != 1 {
			return false
		}
		slice = l[0]
		return strings.Count(jsonOf(slice["endpoints"]), `"ready":true`) == 2
	})
	if name := slice["metadata"].(map[string]any)["name"]; name != md["name"] {
		t.Errorf("the placeholder %v was replaced by %v, not updated", md["name"], name)
	}
	if got := jsonOf(slice["ports"]); got != `[{"name":"http","port":8080,"protocol":"TCP"}]` {
		t.Errorf("ports %s", got)
	}
	for _, e := range slice["endpoints"].([]any) {
		ep := e.(map[string]any)
		if got := jsonOf(ep["conditions"]); got != `{"ready":true,"serving":true,"terminating":false}` {
			t.Errorf("conditions %s", got)
		}
		ref := ep["targetRef"].(map[string]any)
		if ref["kind"] != "Pod" || len(ep["addresses"].([]any)) != 1 {
			t.Errorf("endpoint %s", jsonOf(ep))
		}
		inZone := ep["nodeName"] == "kubeplay-worker" && ep["zone"] == "zone-a"
		if inZone != (ref["name"] == "a") || ref["name"] == "b" && (ep["nodeName"] != "kubeplay-worker2" || ep["zone"] != nil) {
			t.Errorf("endpoint of pod %v: node %v, zone %v", ref["name"], ep["nodeName"], ep["zone"])
		}
	}
	waitIdle(t, sb)
	assertStaysIdle(t, sb)

	// A pod being deleted from its node stays, terminating and not ready,
	// until its kubelet has stopped it.
	mustDo(t, h, 200, "DELETE", "/api/v1/namespaces/default/pods/a", `{"gracePeriodSeconds":30}`)
	waitFor(t, "a terminating endpoint", func() bool {
		l := items(t, h, slices)
		return len(l) == 1 && strings.Contains(jsonOf(l[0]["endpoints"]), `{"ready":false,"serving":true,"terminating":true}`)
	})
	// A slice deleted by hand comes back.
	mustDo(t, h, 200, "DELETE", "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/"+md["name"].(string), "")
	waitFor(t, "the slice to come back", func() bool {
		l := items(t, h, slices)
		return len(l) == 1 && l[0]["metadata"].(map[string]any)["name"] != md["name"] && strings.Count(jsonOf(l[0]["endpoints"]), `"addresses"`) == 2
	})
	// The grace period over, the pod and its endpoint go.
	sb.AdvanceClock(time.Minute)
	waitFor(t, "one endpoint", func() bool {
		l := items(t, h, slices)
		return len(l) == 1 && strings.Count(jsonOf(l[0]["endpoints"]), `"addresses"`) == 1
	})
	waitIdle(t, sb)
}
