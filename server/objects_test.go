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
