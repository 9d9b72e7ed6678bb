package server_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestCreate_ResourceVersionSet(t *testing.T) {
	// kube-apiserver v1.35 answers 500 with this message; kubeplay gives the
	// 400 it should be, with the same message.
	h := newTestServer(t)
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "/api/v1/namespaces/default/configmaps", strings.NewReader(`{"metadata":{"name":"x","resourceVersion":"6"}}`))
	req.Header.Set("Content-Type", "application/json")
	h.ServeHTTP(rec, req)
	var st metav1.Status
	json.Unmarshal(rec.Body.Bytes(), &st)
	if rec.Code != 400 || st.Reason != metav1.StatusReasonBadRequest || st.Message != "resourceVersion should not be set on objects to be created" {
		t.Errorf("got %d %+v", rec.Code, st)
	}
}

// TestBootstrap_KubernetesService checks the Service kube-apiserver v1.35
// writes in default when it starts, as the oracle answered it (its
// targetPort is the oracle's own port; kubeplay's is kube-apiserver's
// default, 6443), managedFields included.
func TestBootstrap_KubernetesService(t *testing.T) {
	rec := get(t, newTestServer(t), http.MethodGet, "/api/v1/namespaces/default/services/kubernetes", nil)
	var svc struct {
		Metadata struct {
			Labels        map[string]string
			ManagedFields []map[string]any
		}
		Spec map[string]any
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &svc); rec.Code != 200 || err != nil {
		t.Fatalf("%d %v: %s", rec.Code, err, rec.Body)
	}
	want := map[string]any{
		"clusterIP": "10.96.0.1", "clusterIPs": []any{"10.96.0.1"}, "internalTrafficPolicy": "Cluster",
		"ipFamilies": []any{"IPv4"}, "ipFamilyPolicy": "SingleStack", "sessionAffinity": "None", "type": "ClusterIP",
		"ports": []any{map[string]any{"name": "https", "port": 443.0, "protocol": "TCP", "targetPort": 6443.0}},
	}
	if got, _ := json.Marshal(svc.Spec); string(got) != mustJSON(t, want) {
		t.Errorf("spec %s, want %s", got, mustJSON(t, want))
	}
	if l := svc.Metadata.Labels; len(l) != 2 || l["component"] != "apiserver" || l["provider"] != "kubernetes" {
		t.Errorf("labels %v", l)
	}
	const fields = `{"f:metadata":{"f:labels":{".":{},"f:component":{},"f:provider":{}}},"f:spec":{"f:clusterIP":{},"f:internalTrafficPolicy":{},"f:ipFamilyPolicy":{},"f:ports":{".":{},"k:{\"port\":443,\"protocol\":\"TCP\"}":{".":{},"f:name":{},"f:port":{},"f:protocol":{},"f:targetPort":{}}},"f:sessionAffinity":{},"f:type":{}}}`
	if mf := svc.Metadata.ManagedFields; len(mf) != 1 || mf[0]["manager"] != "kube-apiserver" || mf[0]["operation"] != "Update" || mustJSON(t, mf[0]["fieldsV1"]) != mustJSON(t, json.RawMessage(fields)) {
		t.Errorf("managedFields %v", mf)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var canonical any
	json.Unmarshal(b, &canonical)
	b, _ = json.Marshal(canonical)
	return string(b)
}
