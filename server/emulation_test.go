package server_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
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
	if rec := get(t, srv, http.MethodGet, "/openapi/v3", nil); strings.Contains(rec.Body.String(), `"apis/autoscaling/v2"`) || !strings.Contains(rec.Body.String(), `"apis/autoscaling/v2beta2"`) {
		t.Errorf("1.20 /openapi/v3 lists autoscaling/v2, or not v2beta2: %s", rec.Body)
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
	createDefaultServiceAccount(t, srv, "default")
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

// TestServer_OlderBetaVersions serves batch/v1beta1 CronJobs in v1.24,
// stored once as batch/v1 and converted, with the deprecation warning
// kube-apiserver v1.24 added; v1.25 no longer serves them, and the object
// stays readable through batch/v1.
func TestServer_OlderBetaVersions(t *testing.T) {
	srv := newTestServerWith(t, server.Options{Version: 24}).(*server.Server)
	const warning = `299 - "batch/v1beta1 CronJob is deprecated in v1.21+, unavailable in v1.25+; use batch/v1 CronJob"`
	beta := "/apis/batch/v1beta1/namespaces/default/cronjobs"
	rec := serve(srv, http.MethodPost, beta+"?fieldManager=old", "",
		`{"apiVersion":"batch/v1beta1","kind":"CronJob","metadata":{"name":"c"},"spec":{"schedule":"* * * * *","jobTemplate":{"spec":{"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"busybox"}]}}}}}}`)
	if rec.Code != http.StatusCreated || rec.Header().Get("Warning") != warning {
		t.Fatalf("create: %d %q %s", rec.Code, rec.Header().Get("Warning"), rec.Body)
	}
	var obj struct {
		APIVersion string
		Metadata   struct {
			ManagedFields []struct{ Manager, APIVersion string }
		}
		Spec struct{ ConcurrencyPolicy string }
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &obj); err != nil {
		t.Fatal(err)
	}
	if obj.APIVersion != "batch/v1beta1" || obj.Spec.ConcurrencyPolicy != "Allow" || len(obj.Metadata.ManagedFields) != 1 || obj.Metadata.ManagedFields[0].APIVersion != "batch/v1beta1" {
		t.Errorf("created: %s", rec.Body)
	}
	// An apply through batch/v1 shares the object; the field manager
	// compares its fields with the v1beta1 manager's.
	rec = serve(srv, http.MethodPatch, "/apis/batch/v1/namespaces/default/cronjobs/c?fieldManager=new&force=true", "application/apply-patch+yaml",
		`{"apiVersion":"batch/v1","kind":"CronJob","metadata":{"name":"c"},"spec":{"schedule":"0 * * * *"}}`)
	if rec.Code != http.StatusOK || rec.Header().Get("Warning") != "" {
		t.Fatalf("apply through v1: %d %q %s", rec.Code, rec.Header().Get("Warning"), rec.Body)
	}
	rec = get(t, srv, http.MethodGet, beta+"/c", nil)
	if err := json.Unmarshal(rec.Body.Bytes(), &obj); err != nil {
		t.Fatal(err)
	}
	if rec.Code != http.StatusOK || obj.APIVersion != "batch/v1beta1" || !strings.Contains(rec.Body.String(), `"schedule":"0 * * * *"`) || rec.Header().Get("Warning") != warning {
		t.Errorf("get through v1beta1: %d %s", rec.Code, rec.Body)
	}
	var managers []string
	for _, m := range obj.Metadata.ManagedFields {
		managers = append(managers, m.Manager+" "+m.APIVersion)
	}
	slices.Sort(managers)
	if !slices.Equal(managers, []string{"new batch/v1", "old batch/v1beta1"}) {
		t.Errorf("managers %v", managers)
	}

	srv.SetVersion(25)
	if rec := get(t, srv, http.MethodGet, beta+"/c", nil); rec.Code != http.StatusNotFound {
		t.Errorf("1.25 v1beta1: %d", rec.Code)
	}
	if rec := get(t, srv, http.MethodGet, "/apis/batch/v1/namespaces/default/cronjobs/c", nil); rec.Code != http.StatusOK {
		t.Errorf("1.25 v1: %d", rec.Code)
	}
	// The newest release has no batch/v1beta1, whatever the runtime
	// configuration says.
	srv.SetVersion(releases.Newest)
	rc, err := server.ParseRuntimeConfig("batch/v1beta1=true")
	if err != nil {
		t.Fatal(err)
	}
	srv.SetRuntimeConfig(rc)
	if rec := get(t, srv, http.MethodGet, beta, nil); rec.Code != http.StatusNotFound {
		t.Errorf("1.35 with batch/v1beta1=true: %d", rec.Code)
	}
}

// TestServer_OlderRBACAndPDB serves rbac.authorization.k8s.io/v1beta1 and
// policy/v1beta1 in v1.21, with the warnings of kube-apiserver v1.21.
func TestServer_OlderRBACAndPDB(t *testing.T) {
	srv := newTestServerWith(t, server.Options{Version: 21}).(*server.Server)
	for _, tc := range []struct{ path, body, warning, v1 string }{
		{"/apis/rbac.authorization.k8s.io/v1beta1/namespaces/default/roles", `{"metadata":{"name":"r"},"rules":[{"apiGroups":[""],"resources":["pods"],"verbs":["get"]}]}`,
			`299 - "rbac.authorization.k8s.io/v1beta1 Role is deprecated in v1.17+, unavailable in v1.22+; use rbac.authorization.k8s.io/v1 Role"`,
			"/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles/r"},
		{"/apis/policy/v1beta1/namespaces/default/poddisruptionbudgets", `{"metadata":{"name":"p"},"spec":{"minAvailable":1,"selector":{"matchLabels":{"app":"web"}}}}`,
			`299 - "policy/v1beta1 PodDisruptionBudget is deprecated in v1.21+, unavailable in v1.25+; use policy/v1 PodDisruptionBudget"`,
			"/apis/policy/v1/namespaces/default/poddisruptionbudgets/p"},
	} {
		rec := serve(srv, http.MethodPost, tc.path, "", tc.body)
		if rec.Code != http.StatusCreated || rec.Header().Get("Warning") != tc.warning {
			t.Errorf("POST %s: %d %q %s", tc.path, rec.Code, rec.Header().Get("Warning"), rec.Body)
		}
		if rec := get(t, srv, http.MethodGet, tc.v1, nil); rec.Code != http.StatusOK {
			t.Errorf("GET %s: %d %s", tc.v1, rec.Code, rec.Body)
		}
	}
	// RBAC v1beta1 was removed in v1.22, policy/v1beta1 in v1.25.
	srv.SetVersion(22)
	if got := resourceNames(t, srv, "/apis/rbac.authorization.k8s.io/v1beta1"); got != nil {
		t.Errorf("1.22 rbac v1beta1: %v", got)
	}
	if got := resourceNames(t, srv, "/apis/policy/v1beta1"); !slices.Equal(got, []string{"poddisruptionbudgets", "podsecuritypolicies"}) {
		t.Errorf("1.22 policy/v1beta1: %v", got)
	}
}

// TestServer_OlderIngresses serves the Ingresses of v1.21 in its three
// versions, one object converted as kube-apiserver converts it, each beta
// version with its warning.
func TestServer_OlderIngresses(t *testing.T) {
	srv := newTestServerWith(t, server.Options{Version: 21}).(*server.Server)
	rec := serve(srv, http.MethodPost, "/apis/extensions/v1beta1/namespaces/default/ingresses", "",
		`{"apiVersion":"extensions/v1beta1","kind":"Ingress","metadata":{"name":"web"},"spec":{"backend":{"serviceName":"default","servicePort":80},"rules":[{"host":"a.example.com","http":{"paths":[{"path":"/","backend":{"serviceName":"web","servicePort":"http"}}]}}]}}`)
	if want := `299 - "extensions/v1beta1 Ingress is deprecated in v1.14+, unavailable in v1.22+; use networking.k8s.io/v1 Ingress"`; rec.Code != http.StatusCreated || rec.Header().Get("Warning") != want {
		t.Fatalf("create: %d %q %s", rec.Code, rec.Header().Get("Warning"), rec.Body)
	}
	spec := func(path, warning string) string {
		t.Helper()
		rec := get(t, srv, http.MethodGet, path, nil)
		if rec.Code != http.StatusOK || rec.Header().Get("Warning") != warning {
			t.Fatalf("GET %s: %d %q %s", path, rec.Code, rec.Header().Get("Warning"), rec.Body)
		}
		var obj struct{ Spec any }
		if err := json.Unmarshal(rec.Body.Bytes(), &obj); err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(obj.Spec) // keys sorted
		return string(b)
	}
	v1beta1 := `{"backend":{"serviceName":"default","servicePort":80},"rules":[{"host":"a.example.com","http":{"paths":[{"backend":{"serviceName":"web","servicePort":"http"},"path":"/","pathType":"ImplementationSpecific"}]}}]}`
	if got := spec("/apis/extensions/v1beta1/namespaces/default/ingresses/web", `299 - "extensions/v1beta1 Ingress is deprecated in v1.14+, unavailable in v1.22+; use networking.k8s.io/v1 Ingress"`); got != v1beta1 {
		t.Errorf("extensions/v1beta1:\n got %s\nwant %s", got, v1beta1)
	}
	if got := spec("/apis/networking.k8s.io/v1beta1/namespaces/default/ingresses/web", `299 - "networking.k8s.io/v1beta1 Ingress is deprecated in v1.19+, unavailable in v1.22+; use networking.k8s.io/v1 Ingress"`); got != v1beta1 {
		t.Errorf("networking.k8s.io/v1beta1:\n got %s\nwant %s", got, v1beta1)
	}
	v1 := `{"defaultBackend":{"service":{"name":"default","port":{"number":80}}},"rules":[{"host":"a.example.com","http":{"paths":[{"backend":{"service":{"name":"web","port":{"name":"http"}}},"path":"/","pathType":"ImplementationSpecific"}]}}]}`
	if got := spec("/apis/networking.k8s.io/v1/namespaces/default/ingresses/web", ""); got != v1 {
		t.Errorf("networking.k8s.io/v1:\n got %s\nwant %s", got, v1)
	}
	// A v1 update is seen through v1beta1, managedFields converted.
	rec = serve(srv, http.MethodPatch, "/apis/networking.k8s.io/v1/namespaces/default/ingresses/web?fieldManager=new", "application/merge-patch+json",
		`{"spec":{"defaultBackend":{"service":{"name":"other","port":{"number":8080}}}}}`)
	if rec.Code != http.StatusOK {
		t.Fatalf("patch: %d %s", rec.Code, rec.Body)
	}
	if got := spec("/apis/extensions/v1beta1/namespaces/default/ingresses/web", `299 - "extensions/v1beta1 Ingress is deprecated in v1.14+, unavailable in v1.22+; use networking.k8s.io/v1 Ingress"`); !strings.Contains(got, `"backend":{"serviceName":"other","servicePort":8080}`) {
		t.Errorf("after the v1 patch: %s", got)
	}
	srv.SetVersion(22)
	for _, gv := range []string{"/apis/extensions/v1beta1", "/apis/networking.k8s.io/v1beta1"} {
		if got := resourceNames(t, srv, gv); got != nil {
			t.Errorf("1.22 %s: %v", gv, got)
		}
	}
}

// TestServer_BetasOfNewest switches on the beta group versions v1.35 has
// but does not serve by default (--runtime-config=api/beta=true) and
// compares their resources, warnings and OpenAPI documents with what
// kube-apiserver v1.35 answered so (testdata/oracle/openapi_betas.json).
func TestServer_BetasOfNewest(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "oracle", "openapi_betas.json"))
	if err != nil {
		t.Fatal(err)
	}
	var oracle map[string]struct {
		Paths, Schemas, Resources []string
		Warnings                  map[string][]string
	}
	if err := json.Unmarshal(raw, &oracle); err != nil {
		t.Fatal(err)
	}
	rc, err := server.ParseRuntimeConfig("api/beta=true")
	if err != nil {
		t.Fatal(err)
	}
	srv := newTestServerWith(t, server.Options{RuntimeConfig: rc}).(*server.Server)
	for gv, want := range oracle {
		var list struct {
			Resources []struct{ Name string } `json:"resources"`
		}
		if err := json.Unmarshal(get(t, srv, http.MethodGet, "/apis/"+gv, nil).Body.Bytes(), &list); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, r := range list.Resources {
			names = append(names, r.Name)
		}
		slices.Sort(names)
		if !slices.Equal(names, want.Resources) {
			t.Errorf("%s: resources %v, want %v", gv, names, want.Resources)
		}
		for resource, warnings := range want.Warnings {
			if got := get(t, srv, http.MethodGet, "/apis/"+gv+"/"+resource, nil).Header().Values("Warning"); !slices.Equal(got, warnings) && len(got)+len(warnings) > 0 {
				t.Errorf("%s %s: warnings %q, want %q", gv, resource, got, warnings)
			}
		}
		var doc struct {
			Paths      map[string]any
			Components struct{ Schemas map[string]any }
		}
		if err := json.Unmarshal(get(t, srv, http.MethodGet, "/openapi/v3/apis/"+gv, nil).Body.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		if got := slices.Sorted(maps.Keys(doc.Paths)); !slices.Equal(got, want.Paths) {
			t.Errorf("%s: OpenAPI paths %v\nwant %v", gv, got, want.Paths)
		}
		if got := slices.Sorted(maps.Keys(doc.Components.Schemas)); !slices.Equal(got, want.Schemas) {
			t.Errorf("%s: OpenAPI schemas %v\nwant %v", gv, got, want.Schemas)
		}
	}
	// One object, two versions: an IPAddress made through v1beta1 is v1's.
	rec := serve(srv, http.MethodPost, "/apis/networking.k8s.io/v1beta1/ipaddresses", "",
		`{"metadata":{"name":"10.96.0.50"},"spec":{"parentRef":{"resource":"services","namespace":"default","name":"web"}}}`)
	if rec.Code != http.StatusCreated {
		t.Fatalf("create IPAddress: %d %s", rec.Code, rec.Body)
	}
	if rec := get(t, srv, http.MethodGet, "/apis/networking.k8s.io/v1/ipaddresses/10.96.0.50", nil); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"apiVersion":"networking.k8s.io/v1"`) {
		t.Errorf("IPAddress through v1: %d %s", rec.Code, rec.Body)
	}
}

// TestServer_OlderSameShapeVersions creates objects through beta versions
// older releases served, whose fields are those of the GA version that
// stores them, and reads them back through it.
func TestServer_OlderSameShapeVersions(t *testing.T) {
	srv := newTestServerWith(t, server.Options{}).(*server.Server)
	for _, tc := range []struct {
		minor      int
		beta, body string
		ga         string
	}{
		{21, "/apis/coordination.k8s.io/v1beta1/namespaces/default/leases", `{"metadata":{"name":"l"}}`, "/apis/coordination.k8s.io/v1/namespaces/default/leases/l"},
		{21, "/apis/scheduling.k8s.io/v1beta1/priorityclasses", `{"metadata":{"name":"pc"},"value":1000}`, "/apis/scheduling.k8s.io/v1/priorityclasses/pc"},
		{21, "/apis/storage.k8s.io/v1beta1/storageclasses", `{"metadata":{"name":"sc"},"provisioner":"example.com/disk"}`, "/apis/storage.k8s.io/v1/storageclasses/sc"},
		{24, "/apis/node.k8s.io/v1beta1/runtimeclasses", `{"metadata":{"name":"rc"},"handler":"runc"}`, "/apis/node.k8s.io/v1/runtimeclasses/rc"},
		{21, "/apis/autoscaling/v2beta2/namespaces/default/horizontalpodautoscalers", `{"metadata":{"name":"h"},"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},"maxReplicas":3}}`, "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers/h"},
		{28, "/apis/flowcontrol.apiserver.k8s.io/v1beta3/prioritylevelconfigurations", `{"metadata":{"name":"p"},"spec":{"type":"Limited","limited":{"nominalConcurrencyShares":5,"limitResponse":{"type":"Reject"}}}}`, "/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations/p"},
	} {
		srv.SetVersion(tc.minor)
		if rec := serve(srv, http.MethodPost, tc.beta, "", tc.body); rec.Code != http.StatusCreated {
			t.Errorf("1.%d POST %s: %d %s", tc.minor, tc.beta, rec.Code, rec.Body)
			continue
		}
		srv.SetVersion(releases.Newest)
		if rec := get(t, srv, http.MethodGet, tc.ga, nil); rec.Code != http.StatusOK {
			t.Errorf("GET %s: %d %s", tc.ga, rec.Code, rec.Body)
		}
	}
}

// servedSet lists what a server's discovery serves, as "group/version/resource".
func servedSet(srv *server.Server) map[string]bool {
	out := map[string]bool{}
	for _, r := range srv.Catalog().All() {
		out[r.APIVersion()+"/"+r.Resource] = true
	}
	return out
}

// TestServer_VersionMatchesEmulatedOracle compares what kubeplay serves in
// v1.32 to v1.34 with what kube-apiserver v1.35 served started with
// --emulated-version (testdata/oracle/served_emulated.json): nothing the
// release did not serve, and everything it served that kubeplay implements.
func TestServer_VersionMatchesEmulatedOracle(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "oracle", "served_emulated.json"))
	if err != nil {
		t.Fatal(err)
	}
	var oracle map[string][]string
	if err := json.Unmarshal(raw, &oracle); err != nil {
		t.Fatal(err)
	}
	srv := newTestServerWith(t, server.Options{}).(*server.Server)
	implemented := servedSet(srv)
	for version, resources := range oracle {
		minor, err := releases.Parse(version)
		if err != nil {
			t.Fatal(err)
		}
		srv.SetVersion(minor)
		got := servedSet(srv)
		for r := range got {
			if !slices.Contains(resources, r) {
				t.Errorf("%s serves %s", version, r)
			}
		}
		for _, r := range resources {
			if implemented[r] && !got[r] {
				t.Errorf("%s does not serve %s", version, r)
			}
		}
	}
}

// certificateRequestPEM is a certificate signing request (for CN=jane,
// O=devs), PEM, base64 as a CertificateSigningRequest's spec.request is.
const certificateRequestPEM = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0KTUlIWk1JR0FBZ0VBTUI0eERUQUxCZ05WQkFNTUJHcGhibVV4RFRBTEJnTlZCQW9NQkdSbGRuTXdXVEFUQmdjcQpoa2pPUFFJQkJnZ3Foa2pPUFFNQkJ3TkNBQVRFY1VPNFhGR2lLcVgyUDh1ZHh2TjhxNTZEMjlVUElxN2NpLzZVCmFUVU9jSE5hM0RUSTlRSVhJVnJtVXdRV0NBL3NkTS9oazZ0U01zc0E4dFVBVkV1MG9BQXdDZ1lJS29aSXpqMEUKQXdJRFNBQXdSUUloQUtYaEhoQzF5dVlLSzZPaFZIa1NyVVZNUExBRWxmMDFwQnNBZVYvbzBwTE9BaUI4djVUZQpmTExaRjJDSU81T21TMER2elBwRlloeENGaVlLdXI5MGZCZEN4QT09Ci0tLS0tRU5EIENFUlRJRklDQVRFIFJFUVVFU1QtLS0tLQo="

// TestServer_OlderVersionDefaults creates objects through v1beta1 versions
// whose defaults were not v1's: v1.21 sets v1beta1's, and v1 reads them.
func TestServer_OlderVersionDefaults(t *testing.T) {
	srv := newTestServerWith(t, server.Options{Version: 21}).(*server.Server)
	for _, tc := range []struct{ beta, body, ga, want string }{
		{"/apis/admissionregistration.k8s.io/v1beta1/validatingwebhookconfigurations",
			`{"metadata":{"name":"w"},"webhooks":[{"name":"w.example.com","clientConfig":{"url":"https://example.com/validate"}}]}`,
			"/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/w",
			`[{"admissionReviewVersions":["v1beta1"],"clientConfig":{"url":"https://example.com/validate"},"failurePolicy":"Ignore","matchPolicy":"Exact","name":"w.example.com","namespaceSelector":{},"objectSelector":{},"sideEffects":"Unknown","timeoutSeconds":30}]`},
		{"/apis/certificates.k8s.io/v1beta1/certificatesigningrequests",
			`{"metadata":{"name":"c"},"spec":{"request":"` + certificateRequestPEM + `"}}`,
			"/apis/certificates.k8s.io/v1/certificatesigningrequests/c",
			``},
	} {
		if rec := serve(srv, http.MethodPost, tc.beta, "", tc.body); rec.Code != http.StatusCreated {
			t.Errorf("POST %s: %d %s", tc.beta, rec.Code, rec.Body)
			continue
		}
		rec := get(t, srv, http.MethodGet, tc.ga, nil)
		var obj struct {
			Webhooks any
			Spec     struct {
				SignerName string
				Usages     []string
			}
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &obj); err != nil {
			t.Fatal(err)
		}
		if tc.want != "" {
			if got, _ := json.Marshal(obj.Webhooks); string(got) != tc.want {
				t.Errorf("%s: webhooks %s\nwant %s", tc.ga, got, tc.want)
			}
		} else if obj.Spec.SignerName != "kubernetes.io/legacy-unknown" || !slices.Equal(obj.Spec.Usages, []string{"digital signature", "key encipherment"}) {
			t.Errorf("%s: %s", tc.ga, rec.Body)
		}
	}
}

// TestServer_HPAV2beta1 serves autoscaling/v2beta1 in v1.21: its metrics
// are converted to v2's and back.
func TestServer_HPAV2beta1(t *testing.T) {
	srv := newTestServerWith(t, server.Options{Version: 21}).(*server.Server)
	base := "/apis/autoscaling/%s/namespaces/default/horizontalpodautoscalers"
	rec := serve(srv, http.MethodPost, fmt.Sprintf(base, "v2beta1"), "",
		`{"metadata":{"name":"web"},"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},"minReplicas":2,"maxReplicas":5,"metrics":[{"type":"Resource","resource":{"name":"cpu","targetAverageUtilization":60}},{"type":"Pods","pods":{"metricName":"rps","targetAverageValue":"100"}}]}}`)
	if want := `299 - "autoscaling/v2beta1 HorizontalPodAutoscaler is deprecated in v1.22+, unavailable in v1.25+; use autoscaling/v2 HorizontalPodAutoscaler"`; rec.Code != http.StatusCreated {
		t.Fatalf("create: %d %s", rec.Code, rec.Body)
	} else if got := rec.Header().Get("Warning"); got != "" {
		t.Errorf("1.21 warns %q, it was deprecated in v1.22 (%s)", got, want)
	}
	metrics := func(version string) string {
		t.Helper()
		var obj struct{ Spec struct{ Metrics any } }
		if err := json.Unmarshal(get(t, srv, http.MethodGet, fmt.Sprintf(base, version)+"/web", nil).Body.Bytes(), &obj); err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(obj.Spec.Metrics)
		return string(b)
	}
	if got, want := metrics("v2beta1"), `[{"resource":{"name":"cpu","targetAverageUtilization":60},"type":"Resource"},{"pods":{"metricName":"rps","targetAverageValue":"100"},"type":"Pods"}]`; got != want {
		t.Errorf("v2beta1 metrics %s\nwant %s", got, want)
	}
	if got, want := metrics("v2beta2"), `[{"resource":{"name":"cpu","target":{"averageUtilization":60,"type":"Utilization"}},"type":"Resource"},{"pods":{"metric":{"name":"rps"},"target":{"averageValue":"100","type":"AverageValue"}},"type":"Pods"}]`; got != want {
		t.Errorf("v2beta2 metrics %s\nwant %s", got, want)
	}
	srv.SetVersion(22)
	if rec := get(t, srv, http.MethodGet, fmt.Sprintf(base, "v2beta1")+"/web", nil); rec.Header().Get("Warning") == "" {
		t.Errorf("1.22: no deprecation warning")
	}
}

// TestServer_EndpointSliceV1beta1 serves discovery.k8s.io/v1beta1 in
// v1.21: an endpoint's topology is v1's zone, nodeName and
// deprecatedTopology, and back.
func TestServer_EndpointSliceV1beta1(t *testing.T) {
	srv := newTestServerWith(t, server.Options{Version: 21}).(*server.Server)
	base := "/apis/discovery.k8s.io/%s/namespaces/default/endpointslices"
	rec := serve(srv, http.MethodPost, fmt.Sprintf(base, "v1beta1"), "",
		`{"metadata":{"name":"web-1"},"addressType":"IPv4","endpoints":[{"addresses":["10.0.0.1"],"nodeName":"node-1","topology":{"kubernetes.io/hostname":"node-1","topology.kubernetes.io/zone":"z1","topology.kubernetes.io/region":"r1"}}]}`)
	if rec.Code != http.StatusCreated {
		t.Fatalf("create: %d %s", rec.Code, rec.Body)
	}
	endpoints := func(version string) string {
		t.Helper()
		var obj struct{ Endpoints any }
		if err := json.Unmarshal(get(t, srv, http.MethodGet, fmt.Sprintf(base, version)+"/web-1", nil).Body.Bytes(), &obj); err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(obj.Endpoints)
		return string(b)
	}
	if got, want := endpoints("v1"), `[{"addresses":["10.0.0.1"],"conditions":{},"deprecatedTopology":{"topology.kubernetes.io/region":"r1"},"nodeName":"node-1","zone":"z1"}]`; got != want {
		t.Errorf("v1 %s\nwant %s", got, want)
	}
	if got, want := endpoints("v1beta1"), `[{"addresses":["10.0.0.1"],"conditions":{},"nodeName":"node-1","topology":{"kubernetes.io/hostname":"node-1","topology.kubernetes.io/region":"r1","topology.kubernetes.io/zone":"z1"}}]`; got != want {
		t.Errorf("v1beta1 %s\nwant %s", got, want)
	}
}

// TestServer_PriorityLevelV1beta2 serves v1beta2 PriorityLevelConfigurations
// in v1.23, whose assuredConcurrencyShares is v1's nominalConcurrencyShares.
func TestServer_PriorityLevelV1beta2(t *testing.T) {
	srv := newTestServerWith(t, server.Options{Version: 23}).(*server.Server)
	base := "/apis/flowcontrol.apiserver.k8s.io/%s/prioritylevelconfigurations"
	if rec := serve(srv, http.MethodPost, fmt.Sprintf(base, "v1beta2"), "",
		`{"metadata":{"name":"p"},"spec":{"type":"Limited","limited":{"assuredConcurrencyShares":7,"limitResponse":{"type":"Reject"}}}}`); rec.Code != http.StatusCreated {
		t.Fatalf("create: %d %s", rec.Code, rec.Body)
	}
	if rec := get(t, srv, http.MethodGet, fmt.Sprintf(base, "v1beta1")+"/p", nil); !strings.Contains(rec.Body.String(), `"assuredConcurrencyShares":7`) {
		t.Errorf("v1beta1: %s", rec.Body)
	}
	srv.SetVersion(releases.Newest)
	var obj struct {
		Spec struct{ Limited map[string]any }
	}
	if err := json.Unmarshal(get(t, srv, http.MethodGet, fmt.Sprintf(base, "v1")+"/p", nil).Body.Bytes(), &obj); err != nil {
		t.Fatal(err)
	}
	if _, old := obj.Spec.Limited["assuredConcurrencyShares"]; obj.Spec.Limited["nominalConcurrencyShares"] != 7.0 || old {
		t.Errorf("v1: %v", obj.Spec.Limited)
	}
}

// BenchmarkServer_SetVersion measures a change of the emulated release
// (the served catalog rebuilt).
func BenchmarkServer_SetVersion(b *testing.B) {
	srv := newTestServerWith(b, server.Options{}).(*server.Server)
	minor := releases.Oldest
	for b.Loop() {
		srv.SetVersion(minor)
		minor = releases.Oldest + (minor-releases.Oldest+1)%(releases.Newest-releases.Oldest+1)
	}
}
