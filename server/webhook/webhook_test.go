package webhook_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"kubeplay/server/webhook"
)

func TestDenied(t *testing.T) {
	for _, tc := range []struct {
		result  *metav1.Status
		code    int32
		message string
	}{
		{nil, http.StatusBadRequest, `admission webhook "w" denied the request without explanation`},
		{&metav1.Status{Code: 403, Message: "no"}, 403, `admission webhook "w" denied the request: no`},
		{&metav1.Status{Code: 200, Reason: "Odd"}, http.StatusBadRequest, `admission webhook "w" denied the request: Odd`},
	} {
		err := webhook.Denied("w", tc.result)
		if err.ErrStatus.Code != tc.code || err.ErrStatus.Message != tc.message || err.ErrStatus.Status != metav1.StatusFailure {
			t.Errorf("%v: got %+v", tc.result, err.ErrStatus)
		}
	}
}

func TestVerifyResponse(t *testing.T) {
	const envelope = `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":`
	for _, tc := range []struct {
		name, body string
		mutating   bool
		err        string
	}{
		{"absent", `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}`, false, "webhook response was absent"},
		{"uid", envelope + `{"uid":"other","allowed":true}}`, false, `expected response.uid="u", got "other"`},
		{"kind", `{"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview","response":{"uid":"u"}}`, false,
			"expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got admission.k8s.io/v1beta1, Kind=AdmissionReview"},
		{"patch type", envelope + `{"uid":"u","allowed":true,"patchType":"Merge","patch":"W10="}}`, true, `webhook returned invalid response.patchType of "Merge"`},
		{"patch type alone", envelope + `{"uid":"u","allowed":true,"patchType":"JSONPatch"}}`, true, "webhook returned response.patchType but not response.patch"},
		{"validating patch type", envelope + `{"uid":"u","allowed":true,"patchType":"JSONPatch"}}`, false, "validating webhook may not return response.patchType"},
		{"allowed", envelope + `{"uid":"u","allowed":true,"patchType":"JSONPatch","patch":"W10="}}`, true, ""},
	} {
		resp, err := webhook.VerifyResponse("w", "v1", "u", tc.mutating, []byte(tc.body))
		switch {
		case tc.err == "" && (err != nil || !resp.Allowed || string(resp.Patch) != "[]"):
			t.Errorf("%s: %v %+v", tc.name, err, resp)
		case tc.err != "" && (err == nil || err.Error() != `failed calling webhook "w": received invalid webhook response: `+tc.err):
			t.Errorf("%s: got %v", tc.name, err)
		}
	}
}

func TestEndpointOf_Service(t *testing.T) {
	path, port := "/hook", int32(8443)
	resolved := ""
	e, err := webhook.EndpointOf("w", webhook.ClientConfig{Service: &webhook.Service{Namespace: "ns", Name: "svc", Path: &path, Port: &port}},
		func(_ context.Context, ns, name string, port int32) (string, error) {
			resolved = ns + "/" + name
			return "127.0.0.1:1", nil
		})
	if err != nil || e.URL.String() != "https://svc.ns.svc:8443/hook" || e.ServerName != "svc.ns.svc" {
		t.Fatalf("%v %+v", err, e)
	}
	if addr, _ := e.Dial(t.Context()); addr != "127.0.0.1:1" || resolved != "ns/svc" {
		t.Errorf("dial %q, resolved %q", addr, resolved)
	}
	if _, err := webhook.EndpointOf("w", webhook.ClientConfig{}, nil); err == nil || !strings.Contains(err.Error(), "webhook configuration must have either service or URL") {
		t.Errorf("no clientConfig: %v", err)
	}
}
