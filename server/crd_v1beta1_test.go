package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"kubeplay/server"
)

const (
	crdsV1beta1 = "/apis/apiextensions.k8s.io/v1beta1/customresourcedefinitions"
	crdsV1      = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
	crdWarning  = `299 - "apiextensions.k8s.io/v1beta1 CustomResourceDefinition is deprecated in v1.16+, unavailable in v1.22+; use apiextensions.k8s.io/v1 CustomResourceDefinition"`
)

// cronTabV1beta1 is a CRD as old operator manifests wrote it: one
// spec.version, a top-level schema (with a field of no type, which v1
// would reject), status subresource and printer column, no scope.
const cronTabV1beta1 = `{"apiVersion":"apiextensions.k8s.io/v1beta1","kind":"CustomResourceDefinition","metadata":{"name":"crontabs.stable.example.com"},
"spec":{"group":"stable.example.com","version":"v1","names":{"plural":"crontabs","kind":"CronTab","shortNames":["ct"]},
"subresources":{"status":{}},
"additionalPrinterColumns":[{"name":"Spec","type":"string","JSONPath":".spec.cronSpec"}],
"validation":{"openAPIV3Schema":{"type":"object","properties":{"spec":{"type":"object","properties":{"cronSpec":{"type":"string"},"replicas":{"type":"integer"}}}}}}}}`

// specOf decodes the spec of a CRD in a response.
func specOf(t *testing.T, body []byte) map[string]any {
	t.Helper()
	var obj struct{ Spec map[string]any }
	if err := json.Unmarshal(body, &obj); err != nil {
		t.Fatal(err)
	}
	return obj.Spec
}

// jsonOf is the compact JSON of v, for comparisons.
func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestCRDV1beta1_CreateAndRead creates a v1beta1 CRD in v1.21 with the
// deprecation warning and v1beta1's defaults; it is read as v1 with the
// top-level parts in the version, its objects keep unknown fields
// (preserveUnknownFields) and print its column; v1.22 serves it only as v1.
func TestCRDV1beta1_CreateAndRead(t *testing.T) {
	srv := newTestServerWith(t, server.Options{Version: 21}).(*server.Server)
	if got := resourceNames(t, srv, "/apis/apiextensions.k8s.io/v1beta1"); !slices.Equal(got, []string{"customresourcedefinitions"}) {
		t.Errorf("1.21 discovery of v1beta1: %v", got)
	}
	rec := serve(srv, http.MethodPost, crdsV1beta1, "application/json", cronTabV1beta1)
	if rec.Code != http.StatusCreated || rec.Header().Get("Warning") != crdWarning {
		t.Fatalf("create: %d %q %s", rec.Code, rec.Header().Get("Warning"), rec.Body)
	}
	const beta = `{"additionalPrinterColumns":[{"JSONPath":".spec.cronSpec","name":"Spec","type":"string"}],"conversion":{"strategy":"None"},"group":"stable.example.com",` +
		`"names":{"kind":"CronTab","listKind":"CronTabList","plural":"crontabs","shortNames":["ct"],"singular":"crontab"},"preserveUnknownFields":true,"scope":"Namespaced","subresources":{"status":{}},` +
		`"validation":{"openAPIV3Schema":{"properties":{"spec":{"properties":{"cronSpec":{"type":"string"},"replicas":{"type":"integer"}},"type":"object"}},"type":"object"}},"version":"v1","versions":[{"name":"v1","served":true,"storage":true}]}`
	if got := jsonOf(t, specOf(t, rec.Body.Bytes())); got != beta {
		t.Errorf("created spec:\n%s\nwant\n%s", got, beta)
	}
	rec = get(t, srv, http.MethodGet, crdsV1+"/crontabs.stable.example.com", nil)
	const v1 = `{"conversion":{"strategy":"None"},"group":"stable.example.com",` +
		`"names":{"kind":"CronTab","listKind":"CronTabList","plural":"crontabs","shortNames":["ct"],"singular":"crontab"},"preserveUnknownFields":true,"scope":"Namespaced",` +
		`"versions":[{"additionalPrinterColumns":[{"jsonPath":".spec.cronSpec","name":"Spec","type":"string"}],"name":"v1",` +
		`"schema":{"openAPIV3Schema":{"properties":{"spec":{"properties":{"cronSpec":{"type":"string"},"replicas":{"type":"integer"}},"type":"object"}},"type":"object"}},"served":true,"storage":true,"subresources":{"status":{}}}]}`
	if got := jsonOf(t, specOf(t, rec.Body.Bytes())); rec.Code != http.StatusOK || got != v1 || rec.Header().Get("Warning") != "" {
		t.Errorf("GET v1: %d\n%s\nwant\n%s", rec.Code, got, v1)
	}
	if !strings.Contains(rec.Body.String(), `"type":"Established"`) {
		t.Errorf("not established: %s", rec.Body)
	}
	rec = get(t, srv, http.MethodGet, crdsV1beta1+"/crontabs.stable.example.com", nil)
	if got := jsonOf(t, specOf(t, rec.Body.Bytes())); got != beta || rec.Header().Get("Warning") != crdWarning {
		t.Errorf("GET v1beta1:\n%s\nwant\n%s", got, beta)
	}

	// The objects are typed by the schema, but what it does not know stays.
	cronTabs := "/apis/stable.example.com/v1/namespaces/default/crontabs"
	rec = serve(srv, http.MethodPost, cronTabs, "application/json", `{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"name":"c"},"spec":{"cronSpec":"* * * * */5","replicas":"one"}}`)
	if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), `spec.replicas in body must be of type integer: \"string\"`) {
		t.Errorf("create of a string replicas: %d %s", rec.Code, rec.Body)
	}
	rec = serve(srv, http.MethodPost, cronTabs+"?fieldManager=op", "application/json", `{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"name":"c"},"spec":{"cronSpec":"* * * * */5","image":"my-cron"},"extra":1}`)
	if rec.Code != http.StatusCreated || !strings.Contains(rec.Body.String(), `"extra":1`) || !strings.Contains(rec.Body.String(), `"image":"my-cron"`) ||
		!strings.Contains(rec.Body.String(), `"f:extra":{}`) || !strings.Contains(rec.Body.String(), `"f:image":{}`) || rec.Header().Get("Warning") != "" {
		t.Errorf("create with unknown fields: %d %q %s", rec.Code, rec.Header().Get("Warning"), rec.Body)
	}
	rec = get(t, srv, http.MethodGet, cronTabs, http.Header{"Accept": {"application/json;as=Table;v=v1;g=meta.k8s.io"}})
	if !strings.Contains(rec.Body.String(), `"name":"Spec","type":"string"`) || !strings.Contains(rec.Body.String(), `"cells":["c","* * * * */5"]`) {
		t.Errorf("table: %s", rec.Body)
	}

	if got := resourceNames(t, srv, "/apis/stable.example.com/v1"); !slices.Equal(got, []string{"crontabs"}) {
		t.Errorf("discovery of the CRD's version: %v", got)
	}
	if rec := get(t, srv, http.MethodGet, "/openapi/v3/apis/stable.example.com/v1", nil); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"com.example.stable.v1.CronTab"`) {
		t.Errorf("OpenAPI of the CRD's version: %d %.300s", rec.Code, rec.Body)
	}

	srv.SetVersion(22)
	if got := resourceNames(t, srv, "/apis/apiextensions.k8s.io/v1beta1"); got != nil {
		t.Errorf("1.22 discovery of v1beta1: %v", got)
	}
	if rec := get(t, srv, http.MethodGet, crdsV1beta1+"/crontabs.stable.example.com", nil); rec.Code != http.StatusNotFound {
		t.Errorf("1.22 v1beta1: %d", rec.Code)
	}
	if rec := get(t, srv, http.MethodGet, crdsV1+"/crontabs.stable.example.com", nil); rec.Code != http.StatusOK {
		t.Errorf("1.22 v1: %d", rec.Code)
	}
	if rec := get(t, srv, http.MethodGet, cronTabs+"/c", nil); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"extra":1`) {
		t.Errorf("1.22 custom object: %d %s", rec.Code, rec.Body)
	}
}

// TestCRDV1beta1_ReadV1 reads a v1 CRD as v1beta1: what every version
// shares moves to the top level, the rest stays per version; the first
// version is spec.version; a conversion webhook's fields leave
// conversion.webhook. Written back through v1beta1, nothing changes.
func TestCRDV1beta1_ReadV1(t *testing.T) {
	srv := newTestServerWith(t, server.Options{Version: 21}).(*server.Server)
	const schema = `{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}`
	body := `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"dbs.example.com"},
"spec":{"group":"example.com","scope":"Cluster","names":{"plural":"dbs","kind":"DB"},
"conversion":{"strategy":"Webhook","webhook":{"conversionReviewVersions":["v1"],"clientConfig":{"url":"https://convert.example.com/"}}},
"versions":[{"name":"v2","served":true,"storage":true,"schema":` + schema + `,"additionalPrinterColumns":[{"name":"Size","type":"integer","jsonPath":".spec.size"}]},
{"name":"v1","served":true,"storage":false,"schema":` + schema + `}]}}`
	if rec := serve(srv, http.MethodPost, crdsV1, "application/json", body); rec.Code != http.StatusCreated {
		t.Fatalf("create: %d %s", rec.Code, rec.Body)
	}
	rec := get(t, srv, http.MethodGet, crdsV1beta1+"/dbs.example.com", nil)
	const want = `{"conversion":{"conversionReviewVersions":["v1"],"strategy":"Webhook","webhookClientConfig":{"url":"https://convert.example.com/"}},"group":"example.com",` +
		`"names":{"kind":"DB","listKind":"DBList","plural":"dbs","singular":"db"},"preserveUnknownFields":false,"scope":"Cluster",` +
		`"validation":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}},"version":"v2",` +
		`"versions":[{"additionalPrinterColumns":[{"JSONPath":".spec.size","name":"Size","type":"integer"}],"name":"v2","served":true,"storage":true},{"name":"v1","served":true,"storage":false}]}`
	if got := jsonOf(t, specOf(t, rec.Body.Bytes())); got != want {
		t.Errorf("GET v1beta1:\n%s\nwant\n%s", got, want)
	}
	before := get(t, srv, http.MethodGet, crdsV1+"/dbs.example.com", nil)
	if rec := serve(srv, http.MethodPut, crdsV1beta1+"/dbs.example.com", "application/json", rec.Body.String()); rec.Code != http.StatusOK {
		t.Fatalf("PUT v1beta1: %d %s", rec.Code, rec.Body)
	}
	after := get(t, srv, http.MethodGet, crdsV1+"/dbs.example.com", nil)
	if b, a := jsonOf(t, specOf(t, before.Body.Bytes())), jsonOf(t, specOf(t, after.Body.Bytes())); a != b {
		t.Errorf("PUT of what was read changed the spec:\n%s\nwas\n%s", a, b)
	}
}

// TestCRDV1beta1_Validation checks what only v1beta1 CRDs get wrong, with
// kube-apiserver's messages, and what v1beta1 allows and v1 does not.
func TestCRDV1beta1_Validation(t *testing.T) {
	srv := newTestServerWith(t, server.Options{Version: 21}).(*server.Server)
	crd := func(spec string) string {
		return `{"apiVersion":"apiextensions.k8s.io/v1beta1","kind":"CustomResourceDefinition","metadata":{"name":"foos.example.com"},
"spec":{"group":"example.com","names":{"plural":"foos","kind":"Foo"},` + spec + `}}`
	}
	const schema = `{"openAPIV3Schema":{"type":"object"}}`
	for _, tc := range []struct{ name, spec, want string }{
		{"version not the first", `"version":"v2","versions":[{"name":"v1","served":true,"storage":true},{"name":"v2","served":true,"storage":false}]`,
			`spec.version: Invalid value: \"v2\": must match the first version in spec.versions`},
		{"top-level and per-version schemas", `"validation":` + schema + `,"versions":[{"name":"v1","served":true,"storage":true,"schema":` + schema + `}]`,
			`spec.validation: Forbidden: top-level and per-version schemas are mutually exclusive`},
		{"top-level and per-version subresources", `"subresources":{"status":{}},"versions":[{"name":"v1","served":true,"storage":true,"subresources":{"status":{}}}]`,
			`spec.subresources: Forbidden: top-level and per-version subresources are mutually exclusive`},
		{"identical per-version columns", `"versions":[{"name":"v1","served":true,"storage":true,"additionalPrinterColumns":[{"name":"A","type":"string","JSONPath":".a"}]},` +
			`{"name":"v2","served":true,"storage":false,"additionalPrinterColumns":[{"name":"A","type":"string","JSONPath":".a"}]}]`,
			`per-version additionalPrinterColumns may not all be set to identical values (top-level additionalPrinterColumns should be used instead)`},
		{"identical per-version schemas", `"versions":[{"name":"v1","served":true,"storage":true,"schema":` + schema + `}]`,
			`per-version schemas may not all be set to identical values (top-level validation should be used instead)`},
		{"no schema, pruned", `"version":"v1","preserveUnknownFields":false`,
			`spec.versions[0].schema.openAPIV3Schema: Required value: because otherwise all fields are pruned`},
		{"defaults, kept", `"version":"v1","validation":{"openAPIV3Schema":{"type":"object","properties":{"a":{"type":"string","default":"x"}}}}`,
			`spec.preserveUnknownFields: Invalid value: true: must be false in order to use defaults in the schema`},
		{"webhook, kept", `"version":"v1","conversion":{"strategy":"Webhook","webhookClientConfig":{"url":"https://c.example.com/"}}`,
			`spec.conversion.strategy: Invalid value: \"Webhook\": must be None if spec.preserveUnknownFields is true`},
		{"non-structural with an extension", `"version":"v1","validation":{"openAPIV3Schema":{"properties":{"a":{"x-kubernetes-int-or-string":true},"b":{}}}}`,
			`spec.validation.openAPIV3Schema.properties[b].type: Required value: must not be empty for specified object fields`},
		{"non-structural, pruned", `"version":"v1","preserveUnknownFields":false,"validation":{"openAPIV3Schema":{"properties":{"b":{}}}}`,
			`spec.validation.openAPIV3Schema.properties[b].type: Required value: must not be empty for specified object fields`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := serve(srv, http.MethodPost, crdsV1beta1, "application/json", crd(tc.spec))
			if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), tc.want) {
				t.Errorf("%d %s\nwant %s", rec.Code, rec.Body, tc.want)
			}
		})
	}
	// Neither a schema nor preserveUnknownFields false is needed in v1beta1;
	// v1 refuses the same CRD.
	if rec := serve(srv, http.MethodPost, crdsV1beta1+"?dryRun=All", "application/json", crd(`"version":"v1","preserveUnknownFields":true`)); rec.Code != http.StatusCreated {
		t.Errorf("v1beta1 without schema: %d %s", rec.Code, rec.Body)
	}
	v1 := `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"foos.example.com"},
"spec":{"group":"example.com","scope":"Namespaced","names":{"plural":"foos","kind":"Foo"},"preserveUnknownFields":true,"versions":[{"name":"v1","served":true,"storage":true}]}}`
	rec := serve(srv, http.MethodPost, crdsV1, "application/json", v1)
	if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), "spec.versions[0].schema.openAPIV3Schema: Required value") ||
		!strings.Contains(rec.Body.String(), "spec.preserveUnknownFields: Invalid value: true: cannot set to true") {
		t.Errorf("v1 without schema: %d %s", rec.Code, rec.Body)
	}
}

// TestCRDV1beta1_NonStructural creates a CRD as the v1.15 documentation
// wrote it: a schema without types, which v1beta1 accepts and reports in
// the NonStructuralSchema condition. Its objects are validated all the
// same, and keep what the schema does not know; an update through v1
// keeps preserveUnknownFields.
func TestCRDV1beta1_NonStructural(t *testing.T) {
	srv := newTestServerWith(t, server.Options{Version: 20}).(*server.Server)
	body := `{"apiVersion":"apiextensions.k8s.io/v1beta1","kind":"CustomResourceDefinition","metadata":{"name":"crontabs.stable.example.com"},
"spec":{"group":"stable.example.com","version":"v1","scope":"Namespaced","names":{"plural":"crontabs","kind":"CronTab"},
"validation":{"openAPIV3Schema":{"properties":{"spec":{"properties":{"cronSpec":{"type":"string","pattern":"^(\\d+|\\*)(/\\d+)?(\\s+(\\d+|\\*)(/\\d+)?){4}$"},"replicas":{"type":"integer","minimum":1,"maximum":10}}}}}}}}`
	if rec := serve(srv, http.MethodPost, crdsV1beta1, "application/json", body); rec.Code != http.StatusCreated {
		t.Fatalf("create: %d %s", rec.Code, rec.Body)
	}
	rec := get(t, srv, http.MethodGet, crdsV1beta1+"/crontabs.stable.example.com", nil)
	var crd struct {
		Status struct {
			Conditions []struct{ Type, Status, Reason, Message string }
		}
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &crd); err != nil {
		t.Fatal(err)
	}
	const message = "[spec.preserveUnknownFields: Invalid value: true: must be false, " +
		"spec.versions[0].schema.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields, " +
		"spec.versions[0].schema.openAPIV3Schema.type: Required value: must not be empty at the root]"
	var found bool
	for _, c := range crd.Status.Conditions {
		if c.Type == "NonStructuralSchema" {
			found = true
			if c.Status != "True" || c.Reason != "Violations" || c.Message != message {
				t.Errorf("NonStructuralSchema: %+v\nwant message %s", c, message)
			}
		}
	}
	if !found {
		t.Errorf("no NonStructuralSchema condition: %s", rec.Body)
	}

	// A non-structural schema is not published.
	if rec := get(t, srv, http.MethodGet, "/openapi/v3/apis/stable.example.com/v1", nil); rec.Code != http.StatusOK || strings.Contains(rec.Body.String(), "cronSpec") {
		t.Errorf("OpenAPI: %d %.300s", rec.Code, rec.Body)
	}
	cronTabs := "/apis/stable.example.com/v1/namespaces/default/crontabs"
	rec = serve(srv, http.MethodPost, cronTabs, "application/json", `{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"name":"c"},"spec":{"cronSpec":"every minute","replicas":11}}`)
	if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), "spec.cronSpec: Invalid value") ||
		!strings.Contains(rec.Body.String(), "spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10") {
		t.Errorf("invalid object: %d %s", rec.Code, rec.Body)
	}
	rec = serve(srv, http.MethodPost, cronTabs, "application/json", `{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"name":"c"},"spec":{"cronSpec":"* * * * */5","replicas":1,"image":"my-cron"}}`)
	if rec.Code != http.StatusCreated || !strings.Contains(rec.Body.String(), `"image":"my-cron"`) {
		t.Errorf("create: %d %s", rec.Code, rec.Body)
	}

	// kubectl label through v1: the CRD keeps its preserveUnknownFields.
	rec = serve(srv, http.MethodPatch, crdsV1+"/crontabs.stable.example.com", "application/merge-patch+json", `{"metadata":{"labels":{"team":"a"}}}`)
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"preserveUnknownFields":true`) {
		t.Errorf("patch through v1: %d %s", rec.Code, rec.Body)
	}
}

// TestCRDV1beta1_ServerSideApply applies the same v1beta1 CRD twice: the
// second apply changes nothing (the field manager converts parts of the
// CRD to v1, for the status kube-apiserver manages, and back).
func TestCRDV1beta1_ServerSideApply(t *testing.T) {
	srv := newTestServerWith(t, server.Options{Version: 21}).(*server.Server)
	path := crdsV1beta1 + "/crontabs.stable.example.com?fieldManager=kubectl"
	first := serve(srv, http.MethodPatch, path, "application/apply-patch+yaml", cronTabV1beta1)
	if first.Code != http.StatusCreated {
		t.Fatalf("apply: %d %s", first.Code, first.Body)
	}
	rec := serve(srv, http.MethodPatch, path, "application/apply-patch+yaml", cronTabV1beta1)
	if got, want := jsonOf(t, specOf(t, rec.Body.Bytes())), jsonOf(t, specOf(t, first.Body.Bytes())); rec.Code != http.StatusOK || got != want ||
		!strings.Contains(rec.Body.String(), `"generation":1,`) {
		t.Errorf("apply again: %d %s\nwant spec %s", rec.Code, rec.Body, want)
	}
}

// BenchmarkCreateCRDV1beta1 measures creating a v1beta1 CRD in v1.21 (its
// defaults, its own checks, the conversion to v1 and back, the
// NonStructuralSchema condition), beside BenchmarkCreateCRD.
func BenchmarkCreateCRDV1beta1(b *testing.B) {
	srv := newTestServerWith(b, server.Options{Version: 21})
	for i := 0; b.Loop(); i++ {
		body := strings.ReplaceAll(cronTabV1beta1, "stable.example.com", fmt.Sprintf("g%d.example.com", i))
		if w := serve(srv, http.MethodPost, crdsV1beta1, "application/json", body); w.Code != http.StatusCreated {
			b.Fatalf("CRD: %d %s", w.Code, w.Body)
		}
	}
}

// TestCRDV1beta1_WebhookDefaults creates a v1beta1 CRD with a conversion
// webhook (which needs preserveUnknownFields false, and so a schema): v1beta1
// defaults its review versions and service port, and v1 holds them in
// conversion.webhook.
func TestCRDV1beta1_WebhookDefaults(t *testing.T) {
	srv := newTestServerWith(t, server.Options{Version: 19}).(*server.Server)
	body := `{"apiVersion":"apiextensions.k8s.io/v1beta1","kind":"CustomResourceDefinition","metadata":{"name":"dbs.example.com"},
"spec":{"group":"example.com","names":{"plural":"dbs","kind":"DB"},"preserveUnknownFields":false,"validation":{"openAPIV3Schema":{"type":"object"}},
"versions":[{"name":"v2","served":true,"storage":true},{"name":"v1","served":true,"storage":false}],
"conversion":{"strategy":"Webhook","webhookClientConfig":{"service":{"namespace":"db","name":"convert"}}}}}`
	if rec := serve(srv, http.MethodPost, crdsV1beta1, "application/json", body); rec.Code != http.StatusCreated {
		t.Fatalf("create: %d %s", rec.Code, rec.Body)
	}
	rec := get(t, srv, http.MethodGet, crdsV1+"/dbs.example.com", nil)
	spec := specOf(t, rec.Body.Bytes())
	const want = `{"strategy":"Webhook","webhook":{"clientConfig":{"service":{"name":"convert","namespace":"db","port":443}},"conversionReviewVersions":["v1beta1"]}}`
	if got := jsonOf(t, spec["conversion"]); got != want {
		t.Errorf("conversion %s\nwant %s", got, want)
	}
	if _, ok := spec["preserveUnknownFields"]; ok {
		t.Errorf("v1 shows preserveUnknownFields false: %s", rec.Body)
	}
}

// TestCRDV1beta1_Delete deletes a CRD through v1beta1: its objects go,
// then the CRD and its resource.
func TestCRDV1beta1_Delete(t *testing.T) {
	srv := newTestServerWith(t, server.Options{Version: 21}).(*server.Server)
	if rec := serve(srv, http.MethodPost, crdsV1beta1, "application/json", cronTabV1beta1); rec.Code != http.StatusCreated {
		t.Fatalf("create: %d %s", rec.Code, rec.Body)
	}
	cronTabs := "/apis/stable.example.com/v1/namespaces/default/crontabs"
	if rec := serve(srv, http.MethodPost, cronTabs, "application/json", `{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"name":"c"}}`); rec.Code != http.StatusCreated {
		t.Fatalf("create object: %d %s", rec.Code, rec.Body)
	}
	rec := serve(srv, http.MethodDelete, crdsV1beta1+"/crontabs.stable.example.com", "", "")
	if rec.Code != http.StatusOK || rec.Header().Get("Warning") != crdWarning {
		t.Fatalf("delete: %d %q %s", rec.Code, rec.Header().Get("Warning"), rec.Body)
	}
	if rec := get(t, srv, http.MethodGet, crdsV1+"/crontabs.stable.example.com", nil); rec.Code != http.StatusNotFound {
		t.Errorf("CRD after delete: %d %s", rec.Code, rec.Body)
	}
	if rec := get(t, srv, http.MethodGet, cronTabs, nil); rec.Code != http.StatusNotFound {
		t.Errorf("objects after delete: %d %s", rec.Code, rec.Body)
	}
}

// TestCRDV1beta1_V116 creates a v1beta1 CRD in v1.16, the first release
// with v1: served, without a warning (kube-apiserver sends them from v1.19).
func TestCRDV1beta1_V116(t *testing.T) {
	srv := newTestServerWith(t, server.Options{Version: 16}).(*server.Server)
	rec := serve(srv, http.MethodPost, crdsV1beta1, "application/json", cronTabV1beta1)
	if rec.Code != http.StatusCreated || rec.Header().Get("Warning") != "" {
		t.Fatalf("create: %d %q %s", rec.Code, rec.Header().Get("Warning"), rec.Body)
	}
	if rec := get(t, srv, http.MethodGet, crdsV1+"/crontabs.stable.example.com", nil); rec.Code != http.StatusOK {
		t.Errorf("GET v1: %d %s", rec.Code, rec.Body)
	}
}

// TestCRDV1beta1_StopKeepingUnknownFields follows the migration to v1: a
// v1beta1 CRD with a structural schema stops keeping unknown fields
// (preserveUnknownFields false, through v1); the NonStructuralSchema
// condition goes, and its objects are pruned from then on.
func TestCRDV1beta1_StopKeepingUnknownFields(t *testing.T) {
	srv := newTestServerWith(t, server.Options{Version: 21}).(*server.Server)
	if rec := serve(srv, http.MethodPost, crdsV1beta1, "application/json", cronTabV1beta1); rec.Code != http.StatusCreated {
		t.Fatalf("create: %d %s", rec.Code, rec.Body)
	}
	if rec := get(t, srv, http.MethodGet, crdsV1+"/crontabs.stable.example.com", nil); !strings.Contains(rec.Body.String(), `"type":"NonStructuralSchema"`) {
		t.Errorf("no NonStructuralSchema condition: %s", rec.Body)
	}
	rec := serve(srv, http.MethodPatch, crdsV1+"/crontabs.stable.example.com", "application/merge-patch+json", `{"spec":{"preserveUnknownFields":false}}`)
	if rec.Code != http.StatusOK || specOf(t, rec.Body.Bytes())["preserveUnknownFields"] != false {
		t.Fatalf("patch: %d %s", rec.Code, rec.Body)
	}
	if rec := get(t, srv, http.MethodGet, crdsV1+"/crontabs.stable.example.com", nil); strings.Contains(rec.Body.String(), `"type":"NonStructuralSchema"`) {
		t.Errorf("NonStructuralSchema condition stays: %s", rec.Body)
	}
	rec = serve(srv, http.MethodPost, "/apis/stable.example.com/v1/namespaces/default/crontabs", "application/json", `{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"name":"c"},"spec":{"cronSpec":"* * * * */5","image":"my-cron"}}`)
	if rec.Code != http.StatusCreated || strings.Contains(rec.Body.String(), "my-cron") || rec.Header().Get("Warning") != `299 - "unknown field \"spec.image\""` {
		t.Errorf("create after: %d %q %s", rec.Code, rec.Header().Get("Warning"), rec.Body)
	}
}
