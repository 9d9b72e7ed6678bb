package playground_test

import (
	"net/url"
	"testing"

	"kubeplay/playground"
)

// mirroredSlices are the EndpointSlices mirrored from the Endpoints name in
// default.
func mirroredSlices(t *testing.T, sb *playground.Sandbox, name string) []map[string]any {
	t.Helper()
	sel := url.QueryEscape("endpointslice.kubernetes.io/managed-by=endpointslicemirroring-controller.k8s.io,kubernetes.io/service-name=" + name)
	return items(t, sb.Handler(), "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices?labelSelector="+sel)
}

// The Endpoints of a Service without a selector are mirrored into an
// EndpointSlice per address type and ports, which follows them.
func TestEndpointSliceMirroring(t *testing.T) {
	sb := openSandbox(t)
	h := sb.Handler()
	mustDo(t, h, 201, "POST", "/api/v1/namespaces/default/services", `{"metadata":{"name":"external"},"spec":{"ports":[{"port":80}]}}`)
	mustDo(t, h, 201, "POST", "/api/v1/namespaces/default/endpoints", `{"metadata":{"name":"external","labels":{"team":"a"},
		"annotations":{"note":"kept","endpoints.kubernetes.io/last-change-trigger-time":"2026-01-01T00:00:00Z"}},
		"subsets":[{"addresses":[{"ip":"10.1.0.1","hostname":"one"}],"notReadyAddresses":[{"ip":"fd00::2"}],"ports":[{"name":"http","port":8080,"protocol":"TCP"}]}]}`)
	waitFor(t, "two mirrored slices", func() bool { return len(mirroredSlices(t, sb, "external")) == 2 })
	ep := mustDo(t, h, 200, "GET", "/api/v1/namespaces/default/endpoints/external", "")
	for _, s := range mirroredSlices(t, sb, "external") {
		ipv4 := s["addressType"] == "IPv4"
		want := map[string]any{
			"metadata.labels.team":                  "a",
			"metadata.annotations.note":             "kept",
			"metadata.ownerReferences.0.kind":       "Endpoints",
			"metadata.ownerReferences.0.uid":        lookup(ep, "metadata.uid"),
			"metadata.ownerReferences.0.controller": true,
			"ports.0.name":                          "http",
			"ports.0.port":                          float64(8080),
			"endpoints.0.conditions.ready":          ipv4,
		}
		if ipv4 {
			want["endpoints.0.addresses.0"], want["endpoints.0.hostname"] = "10.1.0.1", "one"
		} else {
			want["endpoints.0.addresses.0"] = "fd00::2"
		}
		for path, v := range want {
			if got := lookup(s, path); got != v {
				t.Errorf("%s slice: %s = %v, want %v", s["addressType"], path, got, v)
			}
		}
		if got := lookup(s, "metadata.annotations").(map[string]any); len(got) != 1 {
			t.Errorf("annotations %v", got)
		}
		if n := len(s["endpoints"].([]any)); n != 1 {
			t.Errorf("%s slice has %d endpoints", s["addressType"], n)
		}
	}
	// Updated with the Endpoints; gone when the Service gets a selector.
	mustDo(t, h, 200, "PUT", "/api/v1/namespaces/default/endpoints/external", `{"metadata":{"name":"external"},"subsets":[{"addresses":[{"ip":"10.1.0.1"},{"ip":"10.1.0.3"}],"ports":[{"name":"http","port":8080,"protocol":"TCP"}]}]}`)
	waitFor(t, "the IPv4 slice to follow", func() bool {
		s := mirroredSlices(t, sb, "external")
		return len(s) == 1 && len(s[0]["endpoints"].([]any)) == 2 && lookup(s[0], "metadata.labels.team") == nil
	})
	mergePatch(t, h, "/api/v1/namespaces/default/services/external", `{"spec":{"selector":{"app":"x"}}}`)
	waitFor(t, "the slices to go", func() bool { return len(mirroredSlices(t, sb, "external")) == 0 })
	waitIdle(t, sb)
	if all := items(t, h, "/apis/discovery.k8s.io/v1/endpointslices?labelSelector="+url.QueryEscape("endpointslice.kubernetes.io/managed-by=endpointslicemirroring-controller.k8s.io")); len(all) != 0 {
		t.Errorf("mirrored slices left: %v", all)
	}
}
