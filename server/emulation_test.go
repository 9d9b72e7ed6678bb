package server_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"kubeplay/server"
	"kubeplay/server/releases"
)

// resourceNames returns the resources a discovery document of a group
// version lists, or nil when it answers 404.
func resourceNames(t *testing.T, h http.Handler, path string) []string {
	t.Helper()
	rec := get(t, h, http.MethodGet, path, nil)
	if rec.Code == http.StatusNotFound {
		return nil
	}
	var list struct {
		Resources []struct{ Name string } `json:"resources"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &list); err != nil {
		t.Fatalf("%s: %d %v", path, rec.Code, err)
	}
	var names []string
	for _, r := range list.Resources {
		if !strings.Contains(r.Name, "/") {
			names = append(names, r.Name)
		}
	}
	return names
}

// TestServer_SetVersion emulates older releases, as the migration guide
// and each release's API describe them: resources added later answer 404
// as paths kube-apiserver does not know, and come back with a newer
// release, their objects intact.
func TestServer_SetVersion(t *testing.T) {
	srv := newTestServerWith(t, server.Options{}).(*server.Server)
	if got := srv.Version(); got != releases.Newest {
		t.Fatalf("default version 1.%d", got)
	}
	if rec := serve(srv, http.MethodPost, "/apis/batch/v1/namespaces/default/cronjobs", "",
		`{"apiVersion":"batch/v1","kind":"CronJob","metadata":{"name":"c"},"spec":{"schedule":"* * * * *","jobTemplate":{"spec":{"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"busybox"}]}}}}}}`); rec.Code != http.StatusCreated {
		t.Fatalf("create cronjob: %d %s", rec.Code, rec.Body)
	}

	srv.SetVersion(20) // batch/v1 CronJob is GA from v1.21 on
	if got := resourceNames(t, srv, "/apis/batch/v1"); !slices.Equal(got, []string{"jobs"}) {
		t.Errorf("1.20 /apis/batch/v1: %v", got)
	}
	notFound := `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the server could not find the requested resource","reason":"NotFound","details":{},"code":404}`
	if rec := get(t, srv, http.MethodGet, "/apis/batch/v1/namespaces/default/cronjobs/c", nil); rec.Code != http.StatusNotFound || strings.TrimSpace(rec.Body.String()) != notFound {
		t.Errorf("1.20 GET cronjob: %d %s", rec.Code, rec.Body)
	}
	// autoscaling/v2 came in v1.23: the group version is not there at all.
	if rec := get(t, srv, http.MethodGet, "/apis/autoscaling/v2", nil); rec.Code != http.StatusNotFound {
		t.Errorf("1.20 /apis/autoscaling/v2: %d", rec.Code)
	}
	if rec := get(t, srv, http.MethodGet, "/apis/autoscaling", nil); strings.Contains(rec.Body.String(), `"v2"`) {
		t.Errorf("1.20 /apis/autoscaling lists v2: %s", rec.Body)
	}
	if rec := get(t, srv, http.MethodGet, "/openapi/v3", nil); strings.Contains(rec.Body.String(), "apis/autoscaling/v2") {
		t.Errorf("1.20 /openapi/v3 lists autoscaling/v2")
	}
	var v struct{ Major, Minor, GitVersion, EmulationMinor string }
	if err := json.Unmarshal(get(t, srv, http.MethodGet, "/version", nil).Body.Bytes(), &v); err != nil {
		t.Fatal(err)
	}
	if v.Major != "1" || v.Minor != "20" || v.EmulationMinor != "20" || v.GitVersion != "v1.20.15+kubeplay" {
		t.Errorf("1.20 /version: %+v", v)
	}

	srv.SetVersion(18) // networking.k8s.io/v1 Ingress is GA from v1.19 on
	if got := resourceNames(t, srv, "/apis/networking.k8s.io/v1"); !slices.Equal(got, []string{"networkpolicies"}) {
		t.Errorf("1.18 /apis/networking.k8s.io/v1: %v", got)
	}

	srv.SetVersion(releases.Newest)
	if rec := get(t, srv, http.MethodGet, "/apis/batch/v1/namespaces/default/cronjobs/c", nil); rec.Code != http.StatusOK {
		t.Errorf("1.35 GET cronjob: %d %s", rec.Code, rec.Body)
	}
}

// TestServer_VersionServesCatalog checks that v1.35 serves exactly what the
// table says v1.35 serves by default, of what kubeplay implements.
func TestServer_VersionServesCatalog(t *testing.T) {
	srv := newTestServerWith(t, server.Options{}).(*server.Server)
	for _, r := range srv.Catalog().All() {
		rel := releases.Lookup(r.Group, r.Version, r.Resource)
		if rel == nil || !rel.DefaultIn(releases.Newest) || rel.Kind != r.Kind || rel.Namespaced != r.Namespaced {
			t.Errorf("%s/%s %s is served, the table has %+v", r.Group, r.Version, r.Resource, rel)
		}
	}
}

// TestServer_EveryVersion writes through every emulated release: what the
// server does for itself (admission policies, RBAC, service accounts) reads
// its own types whether or not the release serves them.
func TestServer_EveryVersion(t *testing.T) {
	srv := newTestServerWith(t, server.Options{Version: releases.Oldest}).(*server.Server)
	for minor := releases.Oldest; minor <= releases.Newest; minor++ {
		srv.SetVersion(minor)
		for path, body := range map[string]string{
			"/api/v1/namespaces/default/configmaps":           `{"metadata":{"generateName":"cm-"}}`,
			"/api/v1/namespaces/default/pods":                 `{"metadata":{"generateName":"p-"},"spec":{"containers":[{"name":"c","image":"busybox"}]}}`,
			"/apis/apps/v1/namespaces/default/deployments":    `{"metadata":{"generateName":"d-"},"spec":{"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"busybox"}]}}}}`,
			"/apis/rbac.authorization.k8s.io/v1/clusterroles": `{"metadata":{"generateName":"r-"},"rules":[]}`,
		} {
			if rec := serve(srv, http.MethodPost, path, "", body); rec.Code != http.StatusCreated {
				t.Errorf("1.%d POST %s: %d %s", minor, path, rec.Code, rec.Body)
			}
		}
	}
}
