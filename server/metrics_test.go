package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"

	"kubeplay/server"
)

// fixedMetrics reads the same readings every time.
type fixedMetrics struct {
	nodes []metricsv1beta1.NodeMetrics
	pods  []metricsv1beta1.PodMetrics
}

func (f fixedMetrics) NodeMetrics(context.Context) ([]metricsv1beta1.NodeMetrics, error) {
	return f.nodes, nil
}

func (f fixedMetrics) PodMetrics(_ context.Context, ns string) ([]metricsv1beta1.PodMetrics, error) {
	var out []metricsv1beta1.PodMetrics
	for _, p := range f.pods {
		if ns == "" || p.Namespace == ns {
			out = append(out, p)
		}
	}
	return out, nil
}

func newMetricsServer(t *testing.T) (*server.Server, fixedMetrics) {
	t.Helper()
	srv := newTestServer(t).(*server.Server)
	at := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	usage := func(cpu, memory string) corev1.ResourceList {
		return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)}
	}
	window := metav1.Duration{Duration: 15 * time.Second}
	src := fixedMetrics{
		nodes: []metricsv1beta1.NodeMetrics{
			{ObjectMeta: metav1.ObjectMeta{Name: "worker2", Labels: map[string]string{"zone": "b"}, CreationTimestamp: at}, Timestamp: at, Window: window, Usage: usage("250m", "600Mi")},
			{ObjectMeta: metav1.ObjectMeta{Name: "worker", Labels: map[string]string{"zone": "a"}, CreationTimestamp: at}, Timestamp: at, Window: window, Usage: usage("137942375n", "1034112Ki")},
		},
		pods: []metricsv1beta1.PodMetrics{
			{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", Labels: map[string]string{"app": "web"}, CreationTimestamp: at}, Timestamp: at, Window: window,
				Containers: []metricsv1beta1.ContainerMetrics{{Name: "nginx", Usage: usage("2m", "14420Ki")}, {Name: "sidecar", Usage: usage("1m", "4Mi")}}},
			{ObjectMeta: metav1.ObjectMeta{Name: "dns", Namespace: "kube-system", Labels: map[string]string{"app": "dns"}, CreationTimestamp: at}, Timestamp: at, Window: window,
				Containers: []metricsv1beta1.ContainerMetrics{{Name: "coredns", Usage: usage("3m", "20Mi")}}},
		},
	}
	if err := srv.SetMetrics(t.Context(), src); err != nil {
		t.Fatal(err)
	}
	return srv, src
}

// TestMetrics_discovery: the resource metrics API is listed as
// kube-apiserver lists metrics-server's, behind its APIService, and
// leaves with it.
func TestMetrics_discovery(t *testing.T) {
	srv, _ := newMetricsServer(t)
	for _, tc := range []struct{ path, accept, want string }{
		{"/apis/metrics.k8s.io", "", `{"kind":"APIGroup","apiVersion":"v1","name":"metrics.k8s.io","versions":[{"groupVersion":"metrics.k8s.io/v1beta1","version":"v1beta1"}],"preferredVersion":{"groupVersion":"metrics.k8s.io/v1beta1","version":"v1beta1"}}`},
		{"/apis/metrics.k8s.io/v1beta1", "", `{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"metrics.k8s.io/v1beta1","resources":[{"name":"nodes","singularName":"","namespaced":false,"kind":"NodeMetrics","verbs":["get","list"]},{"name":"pods","singularName":"","namespaced":true,"kind":"PodMetrics","verbs":["get","list"]}]}`},
		{"/apis", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
			`{"metadata":{"name":"metrics.k8s.io"},"versions":[{"version":"v1beta1","resources":[{"resource":"nodes","responseKind":{"group":"","version":"","kind":"NodeMetrics"},"scope":"Cluster","singularResource":"","verbs":["get","list"]},{"resource":"pods","responseKind":{"group":"","version":"","kind":"PodMetrics"},"scope":"Namespaced","singularResource":"","verbs":["get","list"]}],"freshness":"Current"}]}]}`},
	} {
		code, body := callAPI(t, srv, "GET", tc.path, "", "Accept", tc.accept)
		if code != http.StatusOK || !strings.Contains(body, tc.want) {
			t.Errorf("GET %s: %d\n%s\nwant it to hold\n%s", tc.path, code, body, tc.want)
		}
	}
	_, apis := callAPI(t, srv, "GET", "/apis", "")
	if !strings.HasSuffix(strings.TrimSpace(apis), `{"name":"metrics.k8s.io","versions":[{"groupVersion":"metrics.k8s.io/v1beta1","version":"v1beta1"}],"preferredVersion":{"groupVersion":"metrics.k8s.io/v1beta1","version":"v1beta1"}}]}`) {
		t.Errorf("/apis does not end with metrics.k8s.io (the lowest group priority): %s", apis)
	}
	code, body := callAPI(t, srv, "GET", "/apis/apiregistration.k8s.io/v1/apiservices/v1beta1.metrics.k8s.io", "")
	for _, want := range []string{`"spec":{"group":"metrics.k8s.io","groupPriorityMinimum":100,"version":"v1beta1","versionPriority":100}`, `"status":"True","type":"Available"`} {
		if code != http.StatusOK || !strings.Contains(body, want) {
			t.Errorf("the APIService: %d %s, want %s", code, body, want)
		}
	}

	if err := srv.SetMetrics(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/apis/metrics.k8s.io", "/apis/metrics.k8s.io/v1beta1/nodes", "/apis/apiregistration.k8s.io/v1/apiservices/v1beta1.metrics.k8s.io"} {
		if code, body := callAPI(t, srv, "GET", path, ""); code != http.StatusNotFound {
			t.Errorf("GET %s without metrics: %d %s", path, code, body)
		}
	}
	if _, body := callAPI(t, srv, "GET", "/apis", ""); strings.Contains(body, "metrics.k8s.io") {
		t.Errorf("/apis without metrics: %s", body)
	}
}

// TestMetrics_reads: gets and lists answer as metrics-server does, and
// everything else as kube-apiserver does for a type without those verbs.
func TestMetrics_reads(t *testing.T) {
	srv, _ := newMetricsServer(t)
	createDefaultServiceAccount(t, srv, "default")
	for _, name := range []string{"pending", "running"} {
		if code, body := callAPI(t, srv, "POST", "/api/v1/namespaces/default/pods", `{"metadata":{"name":"`+name+`"},"spec":{"containers":[{"name":"c","image":"nginx"}]}}`); code != http.StatusCreated {
			t.Fatalf("create pod %s: %d %s", name, code, body)
		}
	}
	if code, body := callAPI(t, srv, "PATCH", "/api/v1/namespaces/default/pods/running/status", `{"status":{"phase":"Running"}}`, "Content-Type", "application/merge-patch+json"); code != http.StatusOK {
		t.Fatalf("pod running: %d %s", code, body)
	}
	const webJSON = `{"metadata":{"name":"web","namespace":"default","creationTimestamp":"2026-01-02T03:04:05Z","labels":{"app":"web"}},"timestamp":"2026-01-02T03:04:05Z","window":"15s","containers":[{"name":"nginx","usage":{"cpu":"2m","memory":"14420Ki"}},{"name":"sidecar","usage":{"cpu":"1m","memory":"4Mi"}}]}`
	const dnsJSON = `{"metadata":{"name":"dns","namespace":"kube-system","creationTimestamp":"2026-01-02T03:04:05Z","labels":{"app":"dns"}},"timestamp":"2026-01-02T03:04:05Z","window":"15s","containers":[{"name":"coredns","usage":{"cpu":"3m","memory":"20Mi"}}]}`
	const workerJSON = `{"metadata":{"name":"worker","creationTimestamp":"2026-01-02T03:04:05Z","labels":{"zone":"a"}},"timestamp":"2026-01-02T03:04:05Z","window":"15s","usage":{"cpu":"137942375n","memory":"1034112Ki"}}`
	notFound := func(kind, group, name, message string) string {
		details := `"name":"` + name + `",`
		if group != "" {
			details += `"group":"` + group + `",`
		}
		return `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"` + message + `","reason":"NotFound","details":{` + details + `"kind":"` + kind + `"},"code":404}`
	}
	for _, tc := range []struct {
		method, path, accept string
		code                 int
		want                 string
	}{
		{"GET", "/apis/metrics.k8s.io/v1beta1/pods", "", 200, `{"kind":"PodMetricsList","apiVersion":"metrics.k8s.io/v1beta1","metadata":{},"items":[` + webJSON + `,` + dnsJSON + `]}`},
		{"GET", "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods", "", 200, `{"kind":"PodMetricsList","apiVersion":"metrics.k8s.io/v1beta1","metadata":{},"items":[` + webJSON + `]}`},
		{"GET", "/apis/metrics.k8s.io/v1beta1/pods?labelSelector=app%3Ddns", "", 200, `{"kind":"PodMetricsList","apiVersion":"metrics.k8s.io/v1beta1","metadata":{},"items":[` + dnsJSON + `]}`},
		{"GET", "/apis/metrics.k8s.io/v1beta1/pods?fieldSelector=metadata.namespace%3Ddefault", "", 200, `{"kind":"PodMetricsList","apiVersion":"metrics.k8s.io/v1beta1","metadata":{},"items":[` + webJSON + `]}`},
		{"GET", "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/web", "", 200, `{"kind":"PodMetrics","apiVersion":"metrics.k8s.io/v1beta1",` + webJSON[1:]},
		{"GET", "/apis/metrics.k8s.io/v1beta1/nodes/worker", "", 200, `{"kind":"NodeMetrics","apiVersion":"metrics.k8s.io/v1beta1",` + workerJSON[1:]},
		{"GET", "/apis/metrics.k8s.io/v1beta1/nodes?labelSelector=zone%3Da", "", 200, `{"kind":"NodeMetricsList","apiVersion":"metrics.k8s.io/v1beta1","metadata":{},"items":[` + workerJSON + `]}`},
		{"GET", "/apis/metrics.k8s.io/v1beta1/nodes?labelSelector=zone%3Dc", "", 200, `{"kind":"NodeMetricsList","apiVersion":"metrics.k8s.io/v1beta1","metadata":{},"items":[]}`},
		{"GET", "/apis/metrics.k8s.io/v1beta1/nodes?fieldSelector=spec.unschedulable%3Dfalse", "", 400, `"message":"\"spec.unschedulable\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\""`},
		{"GET", "/apis/metrics.k8s.io/v1beta1/nodes", "application/json;as=Table;v=v1;g=meta.k8s.io", 200,
			`"columnDefinitions":[{"name":"Name","type":"string","format":"name","description":"Name of the resource","priority":0},{"name":"cpu","type":"string","format":"quantity","description":"","priority":0},{"name":"memory","type":"string","format":"quantity","description":"","priority":0},{"name":"Window","type":"string","format":"duration","description":"","priority":0}],"rows":[{"cells":["worker","137942375n","1034112Ki","15s"]`},
		{"GET", "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/web", "application/json;as=Table;v=v1;g=meta.k8s.io", 200, `"rows":[{"cells":["web","3m","18516Ki","15s"]`},
		// A pod metrics-server does not watch (not Running), and one it has
		// no reading of.
		{"GET", "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/pending", "", 404, notFound("pods", "", "pending", `pods \"pending\" not found`)},
		{"GET", "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/running", "", 404, notFound("podmetrics", "metrics.k8s.io", "default/running", `podmetrics.metrics.k8s.io \"default/running\" not found`)},
		{"GET", "/apis/metrics.k8s.io/v1beta1/nodes/nowhere", "", 404, notFound("node", "", "nowhere", `node \"nowhere\" not found`)},
		{"GET", "/apis/metrics.k8s.io/v1beta1/pods?watch=true", "", 405, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"watch is not supported on resources of kind \"pods.metrics.k8s.io\"","reason":"MethodNotAllowed","details":{"group":"metrics.k8s.io","kind":"pods"},"code":405}`},
		{"GET", "/apis/metrics.k8s.io/v1beta1/watch/pods", "", 404, `"message":"the server could not find the requested resource"`},
		{"POST", "/apis/metrics.k8s.io/v1beta1/nodes", "", 405, `"message":"the server does not allow this method on the requested resource"`},
		{"DELETE", "/apis/metrics.k8s.io/v1beta1/nodes/worker", "", 405, `"message":"the server does not allow this method on the requested resource"`},
	} {
		code, body := callAPI(t, srv, tc.method, tc.path, "", "Accept", tc.accept)
		if code != tc.code || !strings.Contains(body, tc.want) {
			t.Errorf("%s %s: %d\n%s\nwant %d with\n%s", tc.method, tc.path, code, body, tc.code, tc.want)
		}
	}
	// YAML, as any API read.
	if code, body := callAPI(t, srv, "GET", "/apis/metrics.k8s.io/v1beta1/nodes/worker", "", "Accept", "application/yaml"); code != 200 || !strings.Contains(body, "kind: NodeMetrics\n") {
		t.Errorf("YAML: %d %s", code, body)
	}
	var table metav1.Table
	_, body := callAPI(t, srv, "GET", "/apis/metrics.k8s.io/v1beta1/pods", "", "Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	if err := json.Unmarshal([]byte(body), &table); err != nil || len(table.Rows) != 2 || !strings.Contains(string(table.Rows[0].Object.Raw), `"kind":"PartialObjectMetadata"`) {
		t.Errorf("a Table's rows carry the readings' metadata: %v %s", err, body)
	}
}
