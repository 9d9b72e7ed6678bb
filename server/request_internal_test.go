package server

import (
	"net/http/httptest"
	"testing"
)

// Watches, proxies and pod streams have no deadline in kube-apiserver, so a
// timeout that is no duration is not checked there (the scenario
// errors-timeout records the other requests).
func TestCheckTimeout(t *testing.T) {
	for _, tc := range []struct {
		method, target string
		bad            bool
	}{
		{"GET", "/api/v1/namespaces?timeout=x", true},
		{"GET", "/api/v1/namespaces?watch=1&timeout=x", false},
		{"GET", "/api/v1/namespaces?watch=false&timeout=x", true},
		{"GET", "/api/v1/watch/namespaces?timeout=x", false},
		{"GET", "/apis/apps/v1/namespaces/default/deployments?watch=true&timeout=x", false},
		{"GET", "/apis/apps/v1/watch/namespaces/default/deployments/d?timeout=x", false},
		{"GET", "/api/v1/namespaces/default/pods/p/log?timeout=x", false},
		{"POST", "/api/v1/namespaces/default/pods/p/exec?timeout=x", false},
		{"GET", "/api/v1/namespaces/default/pods/p/proxy/a/b?timeout=x", false},
		{"GET", "/api/v1/namespaces/default/pods/p?watch=1&timeout=x", true},
		{"POST", "/api/v1/namespaces?watch=1&timeout=x", true},
		{"GET", "/version?timeout=x", true},
		{"GET", "/version?timeout=1m", false},
	} {
		err := checkTimeout(httptest.NewRequest(tc.method, tc.target, nil))
		if (err != nil) != tc.bad {
			t.Errorf("%s %s: %v, want an error: %v", tc.method, tc.target, err, tc.bad)
		}
	}
}
