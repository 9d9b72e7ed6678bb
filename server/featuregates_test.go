package server_test

import (
	"maps"
	"net/http"
	"strings"
	"testing"

	"kubeplay/server"
)

// TestFeatureGates_WatchList switches the WatchList gate off: a watch with
// sendInitialEvents then gets the answer of kube-apiserver v1.35 started
// with --feature-gates=WatchList=false; v1.33, where the gate is off by
// default, answers the same.
func TestFeatureGates_WatchList(t *testing.T) {
	fg, err := server.ParseFeatureGates("WatchList=false")
	if err != nil {
		t.Fatal(err)
	}
	srv := newTestServerWith(t, server.Options{FeatureGates: fg}).(*server.Server)
	path := "/api/v1/namespaces/default/configmaps?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true"
	want := `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"ListOptions.meta.k8s.io \"\" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled","reason":"Invalid","details":{"group":"meta.k8s.io","kind":"ListOptions","causes":[{"reason":"FieldValueForbidden","message":"Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled","field":"sendInitialEvents"}]},"code":422}`
	if rec := get(t, srv, http.MethodGet, path, nil); rec.Code != http.StatusUnprocessableEntity || strings.TrimSpace(rec.Body.String()) != want {
		t.Errorf("WatchList=false: %d %s", rec.Code, rec.Body)
	}
	// Both rules broken: both named, in kube-apiserver's order.
	rec := get(t, srv, http.MethodGet, "/api/v1/namespaces/default/configmaps?watch=1&sendInitialEvents=true", nil)
	if want := `is invalid: [resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan, sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled]`; !strings.Contains(rec.Body.String(), want) {
		t.Errorf("two faults: %s", rec.Body)
	}

	// A list never takes it, whatever the gate says (kube-apiserver v1.35,
	// both ways).
	for _, gates := range []server.FeatureGates{nil, fg} {
		srv.SetFeatureGates(gates)
		rec := get(t, srv, http.MethodGet, "/api/v1/namespaces/default/configmaps?sendInitialEvents=true&resourceVersion=5&resourceVersionMatch=Bogus", nil)
		if want := `ListOptions.meta.k8s.io \"\" is invalid: [resourceVersionMatch: Unsupported value: \"Bogus\": supported values: \"Exact\", \"NotOlderThan\", \"\", sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list]`; rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), want) {
			t.Errorf("list with %v: %d %s", gates, rec.Code, rec.Body)
		}
	}

	srv.SetFeatureGates(nil)
	srv.SetVersion(33)
	if rec := get(t, srv, http.MethodGet, path, nil); rec.Code != http.StatusUnprocessableEntity || strings.TrimSpace(rec.Body.String()) != want {
		t.Errorf("1.33: %d %s", rec.Code, rec.Body)
	}
	if got := srv.FeatureGates(); !maps.Equal(got, map[string]bool{"AllowUnsafeMalformedObjectDeletion": false, "CBORServingAndStorage": false, "PodTopologyLabelsAdmission": false, "WatchList": false}) {
		t.Errorf("1.33 gates: %v", got)
	}
	srv.SetVersion(34)
	if got := srv.FeatureGates(); !got["WatchList"] {
		t.Errorf("1.34 gates: %v", got)
	}
	srv.SetVersion(28)
	if got := srv.FeatureGates(); !maps.Equal(got, map[string]bool{"WatchList": false}) {
		t.Errorf("1.28 gates: %v", got)
	}
}

func TestParseFeatureGates(t *testing.T) {
	for in, wantErr := range map[string]string{
		"": "",
		"WatchList=false,CBORServingAndStorage=true": "",
		"NoSuchGate=true": "unrecognized feature gate: NoSuchGate",
		"WatchList=maybe": "invalid value of WatchList=maybe",
		"WatchList":       "missing bool value for WatchList",
	} {
		_, err := server.ParseFeatureGates(in)
		if (err == nil) != (wantErr == "") || err != nil && !strings.Contains(err.Error(), wantErr) {
			t.Errorf("ParseFeatureGates(%q) = %v, want %q", in, err, wantErr)
		}
	}
}
