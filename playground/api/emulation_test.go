package api_test

import (
	"maps"
	"strings"
	"testing"

	"kubeplay/playground"
	"kubeplay/playground/api"
)

// TestAPI_emulatedVersion creates a sandbox that emulates v1.20 and moves
// it to v1.21 without a restart: batch/v1 CronJobs appear.
func TestAPI_emulatedVersion(t *testing.T) {
	base := serve(t, playground.ManagerOptions{InMemory: true})
	var sb api.Sandbox
	call(t, "POST", base+"/playground/v1/sandboxes", "application/json", []byte(`{"emulatedVersion":"1.20"}`), 201, &sb)
	if sb.Settings.EmulatedVersion != "1.20" {
		t.Errorf("created with %q", sb.Settings.EmulatedVersion)
	}
	var version struct{ Minor, GitVersion string }
	call(t, "GET", base+sb.Server+"/version", "", nil, 200, &version)
	if version.Minor != "20" || version.GitVersion != "v1.20.15+kubeplay" {
		t.Errorf("/version: %+v", version)
	}
	cronjobs := base + sb.Server + "/apis/batch/v1/namespaces/default/cronjobs"
	call(t, "GET", cronjobs, "", nil, 404, nil)

	settings := base + "/playground/v1/sandboxes/" + sb.ID + "/settings"
	var s api.Settings
	call(t, "PATCH", settings, "application/json", []byte(`{"emulatedVersion":"1.21"}`), 200, &s)
	if s.EmulatedVersion != "1.21" {
		t.Errorf("patched: %q", s.EmulatedVersion)
	}
	call(t, "GET", cronjobs, "", nil, 200, nil)

	var e apiError
	call(t, "PATCH", settings, "application/json", []byte(`{"emulatedVersion":"1.15"}`), 400, &e)
	if !strings.Contains(e.Error.Message, "kubeplay emulates 1.16 to 1.35") {
		t.Errorf("1.15: %+v", e)
	}
	call(t, "POST", base+"/playground/v1/sandboxes", "application/json", []byte(`{"emulatedVersion":"latest"}`), 400, nil)
	call(t, "POST", base+"/playground/v1/sandboxes", "", nil, 201, &sb)
	if sb.Settings.EmulatedVersion != "1.35" {
		t.Errorf("default: %q", sb.Settings.EmulatedVersion)
	}
}

// TestAPI_featureGates switches a sandbox's WatchList gate off and on again.
func TestAPI_featureGates(t *testing.T) {
	base := serve(t, playground.ManagerOptions{InMemory: true})
	var sb api.Sandbox
	call(t, "POST", base+"/playground/v1/sandboxes", "application/json", []byte(`{"featureGates":{"WatchList":false}}`), 201, &sb)
	if want := map[string]bool{"AllowUnsafeMalformedObjectDeletion": false, "CBORServingAndStorage": false, "PodTopologyLabelsAdmission": true, "WatchList": false}; !maps.Equal(sb.Settings.FeatureGates, want) {
		t.Errorf("created with %v", sb.Settings.FeatureGates)
	}
	watch := base + sb.Server + "/api/v1/namespaces/default/configmaps?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=1"
	call(t, "GET", watch, "", nil, 422, nil)
	settings := base + "/playground/v1/sandboxes/" + sb.ID + "/settings"
	var s api.Settings
	call(t, "PATCH", settings, "application/json", []byte(`{"featureGates":{"WatchList":true}}`), 200, &s)
	if !s.FeatureGates["WatchList"] {
		t.Errorf("patched: %v", s.FeatureGates)
	}
	call(t, "GET", watch, "", nil, 200, nil)
	var e apiError
	call(t, "PATCH", settings, "application/json", []byte(`{"featureGates":{"Nope":true}}`), 400, &e)
	if !strings.Contains(e.Error.Message, "unrecognized feature gate: Nope") {
		t.Errorf("unknown gate: %+v", e)
	}
}
