//go:build !js

package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
)

// TestProtobufScenarios replays the scenarios of testdata/protobuf, which
// speak protobuf and so run natively only. To re-record them against a
// freshly started oracle (their namespace and CRD must not exist there):
//
//	go test ./server -run TestProtobufScenarios -oracle https://127.0.0.1:6453
func TestProtobufScenarios(t *testing.T) { runScenarios(t, "protobuf") }

// contentTypes records the media types of the requests a client sends and
// of the answers it gets.
type contentTypes struct {
	mu            sync.Mutex
	sent, answers map[string]int
}

func (c *contentTypes) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		c.mu.Lock()
		defer c.mu.Unlock()
		if ct := req.Header.Get("Content-Type"); ct != "" {
			c.sent[ct]++
		}
		if err == nil {
			c.answers[resp.Header.Get("Content-Type")]++
		}
		return resp, err
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// protobufConfig is a client configuration as the conformance suite's:
// protobuf bodies, protobuf answers preferred.
func protobufConfig(url string, seen *contentTypes) *rest.Config {
	return &rest.Config{
		Host:               url,
		ContentConfig:      rest.ContentConfig{ContentType: "application/vnd.kubernetes.protobuf", AcceptContentTypes: "application/vnd.kubernetes.protobuf, */*"},
		WrapTransport:      seen.wrap,
		DisableCompression: true,
	}
}

// TestProtobuf_ClientGo drives kubeplay with client-go's clientsets in
// protobuf, as the conformance suite does: built-in objects created, read,
// listed, watched and deleted (DeleteOptions bodies included), a
// CustomResourceDefinition through the apiextensions clientset, then a
// custom object, which kube-apiserver serves in JSON only.
func TestProtobuf_ClientGo(t *testing.T) {
	ts := httptest.NewServer(newTestServer(t))
	defer ts.Close()
	ctx := t.Context()
	seen := &contentTypes{sent: map[string]int{}, answers: map[string]int{}}
	cfg := protobufConfig(ts.URL, seen)
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}

	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "pb"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cms := cs.CoreV1().ConfigMaps("pb")
	created, err := cms.Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "cm", Labels: map[string]string{"app": "pb"}},
		Data:       map[string]string{"a": "1"},
		BinaryData: map[string][]byte{"b": {0, 1, 2}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if created.UID == "" || created.ResourceVersion == "" || created.Data["a"] != "1" || !bytes.Equal(created.BinaryData["b"], []byte{0, 1, 2}) {
		t.Errorf("created: %+v", created)
	}
	got, err := cms.Get(ctx, "cm", metav1.GetOptions{})
	if err != nil || got.UID != created.UID || len(got.ManagedFields) != 1 {
		t.Fatalf("get: %v %+v", err, got)
	}
	list, err := cms.List(ctx, metav1.ListOptions{LabelSelector: "app=pb"})
	if err != nil || len(list.Items) != 1 || list.ResourceVersion == "" {
		t.Fatalf("list: %v %+v", err, list)
	}
	_, err = cms.Get(ctx, "missing", metav1.GetOptions{})
	if !apierrors.IsNotFound(err) || err.Error() != `configmaps "missing" not found` {
		t.Errorf("get missing: %v", err)
	}
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "Bad_Name"}}, metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("create invalid: %v", err)
	}

	w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion, AllowWatchBookmarks: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	got.Data["a"] = "2"
	if _, err := cms.Update(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	grace := int64(0)
	if err := cms.Delete(ctx, "cm", metav1.DeleteOptions{GracePeriodSeconds: &grace, Preconditions: &metav1.Preconditions{UID: &created.UID}}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []watch.EventType{watch.Modified, watch.Deleted} {
		ev, ok := <-w.ResultChan()
		if !ok {
			t.Fatalf("watch closed before %s", want)
		}
		cm, isCM := ev.Object.(*corev1.ConfigMap)
		if ev.Type != want || !isCM || cm.Name != "cm" || cm.Data["a"] != "2" {
			t.Fatalf("event %s %#v, want %s of cm", ev.Type, ev.Object, want)
		}
	}

	// The metadata client asks for PartialObjectMetadataList in protobuf.
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "other"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	mc, err := metadata.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	partial, err := mc.Resource(corev1.SchemeGroupVersion.WithResource("configmaps")).Namespace("pb").List(ctx, metav1.ListOptions{})
	if err != nil || len(partial.Items) != 1 || partial.Items[0].Name != "other" {
		t.Fatalf("metadata list: %v %+v", err, partial)
	}

	ext, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	crd, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.pb.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "pb.example.com",
			Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type:       "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": {Type: "object", XPreserveUnknownFields: ptrTo(true)}},
				}},
			}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if crd.UID == "" || crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Type != "object" {
		t.Errorf("created CRD: %+v", crd)
	}
	crds, err := ext.ApiextensionsV1().CustomResourceDefinitions().List(ctx, metav1.ListOptions{})
	if err != nil || len(crds.Items) != 1 {
		t.Fatalf("list CRDs: %v %+v", err, crds)
	}

	// The dynamic client speaks JSON; asked for protobuf first, the custom
	// object is still answered in JSON.
	dcfg := rest.CopyConfig(cfg)
	dc, err := dynamic.NewForConfig(dcfg)
	if err != nil {
		t.Fatal(err)
	}
	widgets := dc.Resource(schema.GroupVersionResource{Group: "pb.example.com", Version: "v1", Resource: "widgets"}).Namespace("pb")
	widget := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "pb.example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w"}, "spec": map[string]any{"size": int64(3)},
	}}
	if _, err := widgets.Create(ctx, widget, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(mustRequest(t, ctx, http.MethodGet, ts.URL+"/apis/pb.example.com/v1/namespaces/pb/widgets/w", nil,
		"Accept", "application/vnd.kubernetes.protobuf, */*"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
		t.Errorf("custom object asked in protobuf: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if err := widgets.Delete(ctx, "w", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := ext.ApiextensionsV1().CustomResourceDefinitions().Delete(ctx, crd.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	seen.mu.Lock()
	defer seen.mu.Unlock()
	if seen.sent["application/vnd.kubernetes.protobuf"] == 0 || seen.answers["application/vnd.kubernetes.protobuf"] == 0 ||
		seen.answers["application/vnd.kubernetes.protobuf;stream=watch"] != 1 {
		t.Errorf("protobuf was not spoken: sent %v, answered %v", seen.sent, seen.answers)
	}
}

func ptrTo[T any](v T) *T { return &v }

func mustRequest(t *testing.T, ctx context.Context, method, url string, body []byte, headers ...string) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return req
}

// TestProtobuf_CustomObjectBody checks the answer to a custom object sent
// in protobuf, which has none: kube-apiserver v1.35's CRD handler panics on
// it (a nil dereference; the client sees its connection reset), kubeplay
// refuses it with a 415 naming the types it reads.
func TestProtobuf_CustomObjectBody(t *testing.T) {
	srv := &target{URL: httptest.NewServer(newTestServer(t)).URL}
	resp, b := call(t, srv, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", widgetsCRDJSON)
	if resp.StatusCode != 201 {
		t.Fatalf("create CRD: %d %s", resp.StatusCode, b)
	}
	resp, b = call(t, srv, "POST", "/apis/pb.example.com/v1/namespaces/default/widgets", "k8s\x00\n\x00", "Content-Type", "application/vnd.kubernetes.protobuf")
	const want = "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml"
	if resp.StatusCode != http.StatusUnsupportedMediaType || statusMessage(t, b) != want {
		t.Errorf("got %d %s", resp.StatusCode, b)
	}
}

const widgetsCRDJSON = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
"metadata":{"name":"widgets.pb.example.com"},
"spec":{"group":"pb.example.com","scope":"Namespaced","names":{"plural":"widgets","singular":"widget","kind":"Widget","listKind":"WidgetList"},
"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}`

// FuzzProtobufBody sends arbitrary bytes as a protobuf body: each must be
// created or refused with a 4xx Status, never a panic or a 500.
func FuzzProtobufBody(f *testing.F) {
	h := newTestServer(f)
	var cm bytes.Buffer
	cm.WriteString("k8s\x00")
	seed, err := (&corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "seed"}, Data: map[string]string{"a": "b"}}).Marshal()
	if err != nil {
		f.Fatal(err)
	}
	unknown := append([]byte("\n\x0f\n\x02v1\x12\tConfigMap\x12"), byte(len(seed)))
	f.Add(append(append(cm.Bytes(), unknown...), seed...))
	f.Add([]byte("k8s\x00"))
	f.Add([]byte("k8s\x00\n\x00"))
	f.Add([]byte("garbage"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, path := range []string{"/api/v1/namespaces/default/configmaps", "/api/v1/namespaces/default/configmaps/seed"} {
			method := http.MethodPost
			if strings.HasSuffix(path, "/seed") {
				method = http.MethodDelete // a DeleteOptions body
			}
			req := httptest.NewRequest(method, path, bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/vnd.kubernetes.protobuf")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code >= 500 {
				t.Fatalf("%s %s: %d %s", method, path, rec.Code, rec.Body)
			}
			if rec.Code >= 400 && !strings.Contains(rec.Body.String(), `"kind":"Status"`) {
				t.Fatalf("%s %s: %d without a Status: %s", method, path, rec.Code, rec.Body)
			}
		}
	})
}

// An object read and written back unchanged in protobuf is unchanged: a
// ControllerRevision's data (immutable) compares equal to what is stored,
// numbers included.
func TestProtobuf_UnchangedRoundTrip(t *testing.T) {
	ts := httptest.NewServer(newTestServer(t))
	defer ts.Close()
	ctx := t.Context()
	cs, err := kubernetes.NewForConfig(protobufConfig(ts.URL, &contentTypes{sent: map[string]int{}, answers: map[string]int{}}))
	if err != nil {
		t.Fatal(err)
	}
	revs := cs.AppsV1().ControllerRevisions("default")
	created, err := revs.Create(ctx, &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Name: "r"}, Revision: 1,
		Data: runtime.RawExtension{Raw: []byte(`{"spec":{"replicas":3,"ratio":0.5,"template":{"metadata":{"labels":{"a":"b"}}}}}`)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	created.Labels = map[string]string{"touched": "yes"}
	if _, err := revs.Update(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Errorf("an update leaving data as it was: %v", err)
	}
}

// TestProtobuf_AggregatedDiscovery checks /api and /apis asked for in
// protobuf (Accept: application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;
// v=v2;as=APIGroupDiscoveryList): answered as kube-apiserver v1.35.4 answers
// (recorded with curl), in that Content-Type, with the ETag of the JSON
// form, the "k8s\x00" envelope naming apidiscovery.k8s.io/v2
// APIGroupDiscoveryList, and the document of the JSON answer.
func TestProtobuf_AggregatedDiscovery(t *testing.T) {
	h := newTestServer(t)
	for _, path := range []string{"/api", "/apis"} {
		js := get(t, h, http.MethodGet, path, http.Header{"Accept": {aggregatedV2}})
		pb := get(t, h, http.MethodGet, path, http.Header{"Accept": {protobufAggregatedV2}})
		if pb.Code != http.StatusOK || pb.Header().Get("Content-Type") != protobufAggregatedV2 {
			t.Fatalf("%s: %d %q", path, pb.Code, pb.Header().Get("Content-Type"))
		}
		if pb.Header().Get("Etag") != js.Header().Get("Etag") || pb.Header().Get("Vary") != "Accept" {
			t.Errorf("%s: Etag %q (JSON's %q), Vary %q", path, pb.Header().Get("Etag"), js.Header().Get("Etag"), pb.Header().Get("Vary"))
		}
		body, ok := bytes.CutPrefix(pb.Body.Bytes(), []byte("k8s\x00"))
		var envelope runtime.Unknown
		if !ok || envelope.Unmarshal(body) != nil || envelope.APIVersion != "apidiscovery.k8s.io/v2" || envelope.Kind != "APIGroupDiscoveryList" {
			t.Fatalf("%s: envelope %v %+v", path, ok, envelope.TypeMeta)
		}
		var fromProtobuf, fromJSON apidiscoveryv2.APIGroupDiscoveryList
		if err := fromProtobuf.Unmarshal(envelope.Raw); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(js.Body.Bytes(), &fromJSON); err != nil {
			t.Fatal(err)
		}
		fromJSON.TypeMeta = metav1.TypeMeta{} // carried by the envelope
		if len(fromJSON.Items) == 0 || !reflect.DeepEqual(fromProtobuf, fromJSON) {
			t.Errorf("%s: protobuf %+v\n JSON %+v", path, fromProtobuf, fromJSON)
		}
	}
}
