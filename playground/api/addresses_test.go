//go:build !js

package api_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"kubeplay/playground"
	"kubeplay/playground/api"
)

// TestAddresses: a sandbox's kubeconfig names a port of its own, which
// serves the sandbox's API at its root and closes with the sandbox; its
// token, sent to the root cluster, gets a 401 saying where to go.
func TestAddresses(t *testing.T) {
	const admin = "admin-secret"
	m, err := playground.NewManager(playground.ManagerOptions{InMemory: true, AdminToken: admin})
	if err != nil {
		t.Fatal(err)
	}
	h := api.New(m)
	h.Addresses = &api.Addresses{Listen: func() (net.Listener, error) { return net.Listen("tcp", "127.0.0.1:0") }}
	site := http.NewServeMux()
	site.Handle(api.Prefix+"/", h)
	site.Handle("/sandboxes/", h)
	site.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("the root cluster")) })
	srv := httptest.NewServer(h.RefuseSandboxTokens(site))
	t.Cleanup(func() {
		srv.Close()
		m.Close()
	})
	base := srv.URL

	var sb api.Sandbox
	callAs(t, admin, "POST", base+api.Prefix+"/sandboxes", "", nil, 201, &sb)
	kubeconfig := func() string {
		var kc []byte
		callAs(t, admin, "GET", base+api.Prefix+"/sandboxes/"+sb.ID+"/kubeconfig", "", nil, 200, &kc)
		return string(kc)
	}
	kc := kubeconfig()
	server := regexp.MustCompile(`server: "(http://127\.0\.0\.1:\d+)"\n    insecure-skip-tls-verify: true\n`).FindStringSubmatch(kc)
	if server == nil || server[1] == base {
		t.Fatalf("kubeconfig of a sandbox with an address of its own:\n%s", kc)
	}
	own := server[1]
	if again := kubeconfig(); again != kc {
		t.Errorf("a second kubeconfig differs:\n%s", again)
	}

	callAs(t, sb.Token, "POST", own+"/api/v1/namespaces/default/configmaps", "application/json", []byte(`{"metadata":{"name":"at-its-address"}}`), 201, nil)
	callAs(t, sb.Token, "GET", base+sb.Server+"/api/v1/namespaces/default/configmaps/at-its-address", "", nil, 200, nil)
	call(t, "GET", own+"/api/v1/namespaces", "", nil, 401, nil)

	// What a client that dropped /sandboxes/<id> sends reaches the root
	// cluster, which refuses the sandbox's token.
	var st struct {
		Kind, Status, Message, Reason string
		Code                          int
	}
	callAs(t, sb.Token, "GET", base+"/api/v1/namespaces/default/configmaps", "", nil, 401, &st)
	if st.Kind != "Status" || st.Reason != "Unauthorized" || st.Code != 401 || !strings.Contains(st.Message, "the sandbox's API is at "+own+" ") {
		t.Errorf("the root cluster's answer to a sandbox's token: %+v", st)
	}
	callAs(t, admin, "GET", base+"/api/v1/namespaces", "", nil, 200, nil)

	callAs(t, admin, "DELETE", base+api.Prefix+"/sandboxes/"+sb.ID, "", nil, 204, nil)
	if resp, err := http.Get(own + "/api/v1/namespaces"); err == nil {
		resp.Body.Close()
		t.Errorf("the address of a deleted sandbox still answers: %s", resp.Status)
	}
}
