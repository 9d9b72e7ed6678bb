package inproc_test

import (
	"errors"
	"net/http"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"kubeplay/server/inproc"
)

func TestClient_Get(t *testing.T) {
	tests := []struct {
		name        string
		handler     http.HandlerFunc
		wantErr     bool
		wantCode    int32
		wantReason  metav1.StatusReason
		wantMessage string
	}{
		{
			name: "success",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(`{"kind":"APIVersions","versions":["v1"]}`))
			},
		},
		{
			name: "Status",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusConflict)
				_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","message":"the object has been modified","reason":"Conflict","code":409}`))
			},
			wantErr: true, wantCode: 409, wantReason: metav1.StatusReasonConflict, wantMessage: "the object has been modified",
		},
		{
			name: "not a Status",
			handler: func(w http.ResponseWriter, r *http.Request) {
				http.Error(w, "404 page not found", http.StatusNotFound)
			},
			wantErr: true, wantCode: 404, wantReason: metav1.StatusReasonNotFound, wantMessage: "the server could not find the requested resource",
		},
		{
			name: "wrong content type",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html")
				_, _ = w.Write([]byte(`<html>`))
			},
			wantErr: true, wantCode: 500, wantReason: metav1.StatusReasonInternalError,
			wantMessage: `Internal error occurred: GET /api: expected application/json, got "text/html"`,
		},
		{
			name:    "panic",
			handler: func(w http.ResponseWriter, r *http.Request) { panic("boom") },
			wantErr: true, wantCode: 500, wantReason: metav1.StatusReasonInternalError,
			wantMessage: "Internal error occurred: GET /api: the API handler panicked: boom",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got metav1.APIVersions
			err := inproc.New(tt.handler, "test").Get(t.Context(), "/api", &got)
			if !tt.wantErr {
				if err != nil || len(got.Versions) != 1 {
					t.Fatalf("Get: %v, %+v", err, got)
				}
				return
			}
			var se *apierrors.StatusError
			if !errors.As(err, &se) {
				t.Fatalf("error %T %v, want *StatusError", err, err)
			}
			st := se.Status()
			if st.Code != tt.wantCode || st.Reason != tt.wantReason || st.Message != tt.wantMessage {
				t.Errorf("status %d %s %q, want %d %s %q", st.Code, st.Reason, st.Message, tt.wantCode, tt.wantReason, tt.wantMessage)
			}
		})
	}
}

func TestClient_Get_request(t *testing.T) {
	var seen *http.Request
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = r
		_, _ = w.Write([]byte(`{}`))
	})
	var out map[string]any
	if err := inproc.New(h, "test").Get(t.Context(), "/api/v1/namespaces?limit=5", &out); err != nil {
		t.Fatal(err)
	}
	if seen.Method != "GET" || seen.URL.Path != "/api/v1/namespaces" || seen.URL.RawQuery != "limit=5" || seen.RequestURI != "/api/v1/namespaces?limit=5" {
		t.Errorf("request %s %s (path %q, query %q)", seen.Method, seen.RequestURI, seen.URL.Path, seen.URL.RawQuery)
	}
	if got := seen.Header.Get("Accept"); got != "application/json" {
		t.Errorf("Accept %q", got)
	}
}
